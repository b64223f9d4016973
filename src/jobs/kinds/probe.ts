/**
 * Probe jobs, for the queue's own tests only: a worker registers them when started with
 * SHARDQL_WORKER_TEST_JOBS=1, never otherwise. A probe records each start in Redis, can fail its
 * first N runs, keep its worker busy for a while, or hold until the test releases it (so a test can
 * kill or stop a worker mid-job); when it finishes it appends its tag to an effects list — the one
 * side effect a test counts to see a job took effect exactly once.
 *
 *   <ns>:starts:<tag>   one entry per run: "<ms since epoch> <worker>"
 *   <ns>:release:<tag>  set by the test: a holding probe finishes
 *   <ns>:effects        tags of finished probes, in finishing order
 */
import type { RedisClient } from '../../redis/redisClient.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { boolField, defineJob, intField, JobInterrupted, objectOf, stringField, type JobKind } from '../jobKind.ts';
import type { QueueName } from '../queues.ts';

export interface ProbePayload {
  readonly tag: string;
  /** Fail runs 1..failRuns. */
  readonly failRuns?: number;
  /** Keep the worker busy this long, ms. */
  readonly busyMs?: number;
  /** Wait for `<ns>:release:<tag>` before finishing. */
  readonly hold?: boolean;
}

export const probeKeys = (ns: string) => ({
  starts: (tag: string) => `${ns}:starts:${tag}`,
  release: (tag: string) => `${ns}:release:${tag}`,
  effects: `${ns}:effects`,
});

function probe(queue: QueueName, redis: RedisClient, ns: string): JobKind<ProbePayload> {
  const keys = probeKeys(ns);
  return defineJob<ProbePayload>({
    queue,
    summary: `test probe on the ${queue} queue`,
    encode: (p) => ({ tag: p.tag, failRuns: p.failRuns ?? 0, busyMs: p.busyMs ?? 0, hold: p.hold ?? false }),
    decode: (data) => {
      const o = objectOf(data, `probe.${queue}`);
      return {
        tag: stringField(o, 'tag', /^[A-Za-z0-9_.-]{1,100}$/),
        failRuns: intField(o, 'failRuns', 0, 100, 0),
        busyMs: intField(o, 'busyMs', 0, 60_000, 0),
        hold: boolField(o, 'hold'),
      };
    },
    jobId: (p) => `probe-${p.tag}`,
    async handle(p, ctx) {
      await redis.rpush(keys.starts(p.tag), `${Date.now()} ${ctx.worker}`);
      if (ctx.attempt <= (p.failRuns ?? 0)) throw new Error(`probe ${p.tag} fails run ${ctx.attempt} on purpose`);
      if (p.busyMs) await sleep(p.busyMs);
      while (p.hold && (await redis.exists(keys.release(p.tag))) === 0) {
        if (ctx.signal.aborted) throw new JobInterrupted(`probe ${p.tag} interrupted while holding`);
        await sleep(20);
      }
      await redis.rpush(keys.effects, p.tag);
      return { tag: p.tag, worker: ctx.worker };
    },
  });
}

/** `probe.feed` and `probe.sweeps`, writing under `ns` through `redis`. */
export function probeKinds(redis: RedisClient, ns: string) {
  return { 'probe.feed': probe('feed', redis, ns), 'probe.sweeps': probe('sweeps', redis, ns) } as const;
}
