/**
 * The job queue with real worker processes (`shardql worker`) on the local stack's Redis: a job runs
 * once; a failing one is retried with backoff and kept as failed (shown by `shardql jobs`); fan-out
 * is not held up by a backlog of sweeps; a worker SIGKILLed mid-job loses nothing and one stopped
 * by SIGTERM hands its job back; the sweeps run as jobs (the event sweep on its schedule, with the
 * configured retention); /metrics shows the queues.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { freshEnv, stackPid, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually, runCli, TestWorkers, type WorkerProcess } from '../helpers/workers.ts';
import { JobQueue, type QueueStats } from '../../src/jobs/jobQueue.ts';
import { probeKeys, probeKinds } from '../../src/jobs/kinds/probe.ts';
import { JOB_KINDS } from '../../src/jobs/registry.ts';
import type { Job } from 'bullmq';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import { eventOf as eventIn, type EventSide, type Happening, type SequenceEvent } from '../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../src/product/pinterest/events.ts';

const eventOf = (h: Happening, user: bigint, side: EventSide) => eventIn(PINTEREST_EVENTS, h, user, side);
import { QUEUE_NAMES } from '../../src/jobs/queues.ts';
import { FIX_KINDS, allShards } from '../../src/services/repair.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { startService, stopService } from '../../src/stack/localStack.ts';
import { shardOf } from '../../src/core/ids.ts';

const PREFIX = 'shardql-test-jobs';
const TOPOLOGY_KEY = '/shardql-test/jobs/topology';
const LOCK_MS = 1000;
const STALLED_CHECK_MS = 300;

let env: TestEnv;
let redis: Redis;
let queue: JobQueue<typeof JOB_KINDS & ReturnType<typeof probeKinds>>;
const probe = probeKeys(`${PREFIX}:probe`);

/** The environment every worker and CLI run of this file gets. */
function workerEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
    SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
    SHARDQL_QUEUE_PREFIX: PREFIX,
    SHARDQL_WORKER_TEST_JOBS: '1',
    SHARDQL_WORKER_LOCK_MS: String(LOCK_MS),
    SHARDQL_WORKER_STALLED_CHECK_MS: String(STALLED_CHECK_MS),
    SHARDQL_REPAIR_EVERY_MS: '60000',
    SHARDQL_RECONCILE_EVERY_MS: '0',
    SHARDQL_EVENT_SWEEP_EVERY_MS: '0',
    ...extra,
  };
}

const workers = new TestWorkers(workerEnv);
const worker = (extra: Readonly<Record<string, string>> = {}): Promise<WorkerProcess> => workers.start(extra);

async function stopWorker(w: WorkerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  w.child.kill(signal);
  return w.exited;
}

async function jobOf(queueName: 'feed' | 'sweeps', id: string): Promise<Job | undefined> {
  return queue.queue(queueName).getJob(id);
}

/** Waits until job `id` is in `state`; returns it. */
async function jobIn(queueName: 'feed' | 'sweeps', id: string, state: string, timeoutMs = 15_000): Promise<Job> {
  return eventually(`job ${id} ${state}`, async () => ((await queue.queue(queueName).getJobState(id)) === state ? jobOf(queueName, id) : undefined), timeoutMs);
}

const starts = async (tag: string): Promise<string[]> => redis.lrange(probe.starts(tag), 0, -1);
const effects = async (): Promise<string[]> => redis.lrange(probe.effects, 0, -1);

before(async () => {
  env = await freshEnv({ shards: 16 });
  await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
  redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
  queue = new JobQueue({ redis, prefix: PREFIX, registry: { ...JOB_KINDS, ...probeKinds(redis, `${PREFIX}:probe`) } });
});

after(async () => {
  await workers.stopAll();
  await queue?.close();
  redis?.disconnect();
  await env?.close();
});

describe('Jobs: a queue on Redis, real worker processes', () => {
  let w1: WorkerProcess;

  test('a job enqueued runs once in a worker process; enqueueing its ID again adds nothing', async () => {
    w1 = await worker();
    const first = await queue.enqueue('probe.feed', { tag: 'once' });
    const again = await queue.enqueue('probe.feed', { tag: 'once' });
    assert.equal(first.id, 'probe-once');
    assert.equal(again.id, 'probe-once');
    const job = await jobIn('feed', 'probe-once', 'completed');
    assert.deepEqual(job.returnvalue, { tag: 'once', worker: w1.name });
    assert.equal((await starts('once')).length, 1, 'one run');
    assert.deepEqual(await effects(), ['once']);
  });

  test('the sweeps run as jobs: repair on a schedule, reconcile in chunks over every shard', async () => {
    // The worker registered the repair schedule (reconcile's is off in this file) and ran it once.
    const schedulers = await queue.queue('sweeps').getJobSchedulers();
    assert.deepEqual(
      schedulers.map((s) => [s.key, s.every]),
      [['sweep.repair', 60000]],
    );
    // A follow interrupted after its first transaction: the forward edge and an intent, no reverse edge.
    const crash = new ProductWrites({
      storage: env.storage,
      topology: () => env.topology,
      faults: (point) => {
        if (point === 'after-first-commit') throw new Error('injected crash');
      },
    });
    const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
    // On two hosts: on one, both sides commit in one transaction, and there would be no reverse edge to add.
    const a = await writes.createUser({ username: 'jobs_a' });
    let b = await writes.createUser({ username: 'jobs_b0' });
    for (let i = 1; env.topology.hostOfShard(shardOf(b.id)) === env.topology.hostOfShard(shardOf(a.id)); i++) b = await writes.createUser({ username: `jobs_b${i}` });
    await assert.rejects(crash.followUser(a.id, b.id), /injected crash/);
    assert.equal((await env.storage.intents.pending(allShards(env.topology), 0, 10)).length, 1);
    assert.equal((await env.storage.mappings.existing('user_followed_by_users', [{ from: b.id, to: a.id }])).size, 0, 'no reverse edge yet');

    // Reconcile: a plan, then one job per 4 shards; together they add the missing reverse edge.
    const plan = await queue.enqueue('sweep.reconcile', { shardsPerJob: 4 });
    const planned = await jobIn('sweeps', plan.id, 'completed');
    assert.deepEqual(planned.returnvalue, { shards: 16, chunks: 4 });
    const chunks = await eventually('4 reconcile chunks completed', async () => {
      const done = (await queue.queue('sweeps').getJobs(['completed'])).filter((j) => j.name === 'sweep.reconcile-shards');
      return done.length === 4 ? done : undefined;
    });
    const sum = (k: string): number => chunks.reduce((n, j) => n + Number((j.returnvalue as Record<string, number>)[k]), 0);
    assert.equal(sum('shards'), 16);
    assert.equal(sum('reverse'), 1, 'the interrupted follow’s reverse edge');
    assert.equal(FIX_KINDS.filter((k) => k !== 'reverse').reduce((n, k) => n + sum(k), 0), 0, 'nothing else to fix');
    assert.equal((await env.storage.mappings.existing('user_followed_by_users', [{ from: b.id, to: a.id }])).size, 1);

    // Repair: completes the intent.
    const repair = await queue.enqueue('sweep.repair', { minAgeMs: 0 });
    const repaired = await jobIn('sweeps', repair.id, 'completed');
    assert.deepEqual(repaired.returnvalue, { completed: 1, failed: 0 });
    assert.equal((await env.storage.intents.pending(allShards(env.topology), 0, 10)).length, 0);
  });

  test('a failing handler is retried with exponential backoff, then kept as failed and shown by `shardql jobs --json`', async () => {
    const backoffMs = 150;
    await queue.enqueue('probe.feed', { tag: 'fails', failRuns: 99 }, { attempts: 3, backoffMs });
    const job = await jobIn('feed', 'probe-fails', 'failed');
    assert.equal(job.attemptsMade, 3);
    const at = (await starts('fails')).map((s) => Number(s.split(' ')[0]));
    assert.equal(at.length, 3, 'three runs');
    const gaps = [at[1]! - at[0]!, at[2]! - at[1]!];
    console.log(`# retries after ${gaps.join(' ms and ')} ms (backoff ${backoffMs} ms, doubled)`);
    assert.ok(gaps[0]! >= backoffMs, `first retry after ≥ ${backoffMs} ms, got ${gaps[0]}`);
    assert.ok(gaps[1]! >= 2 * backoffMs, `second retry after ≥ ${2 * backoffMs} ms, got ${gaps[1]}`);
    assert.ok(!(await effects()).includes('fails'));

    const cli = await runCli(workerEnv(), ['jobs', '--json', '--failures', '3']);
    assert.equal(cli.code, 0, cli.stderr);
    const report = JSON.parse(cli.stdout) as { queues: QueueStats[] };
    assert.deepEqual(
      report.queues.map((q) => q.queue),
      ['feed', 'sweeps', 'import'],
    );
    const feed = report.queues[0]!;
    assert.equal(feed.failed, 1);
    assert.equal(feed.latestFailures.length, 1);
    const f = feed.latestFailures[0]!;
    assert.deepEqual({ id: f.id, kind: f.kind, reason: f.reason, attempts: f.attempts, maxAttempts: f.maxAttempts }, {
      id: 'probe-fails',
      kind: 'probe.feed',
      reason: 'probe fails fails run 3 on purpose',
      attempts: 3,
      maxAttempts: 3,
    });
    assert.ok(f.failedAt !== null && Math.abs(f.failedAt - at[2]!) < 5000);
    const text = await runCli(workerEnv(), ['jobs']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^feed\s+0\s+0\s+0\s+1\s+-$/m);
    assert.match(text.stdout, /probe\.feed {2}job probe-fails {2}run 3\/3: probe fails fails run 3 on purpose/);
  });

  test('fan-out is not held up by a backlog of sweeps', async () => {
    await redis.del(probe.effects);
    const sweeps = 20;
    for (let i = 0; i < sweeps; i++) await queue.enqueue('probe.sweeps', { tag: `sweep-${i}`, busyMs: 100 });
    const feeds = ['fan-0', 'fan-1', 'fan-2', 'fan-3', 'fan-4'];
    for (const tag of feeds) await queue.enqueue('probe.feed', { tag });
    await eventually('every fan-out probe done', async () => ((await effects()).filter((t) => t.startsWith('fan-')).length === feeds.length ? true : undefined));
    const order = await effects();
    const sweepsBefore = order.filter((t) => t.startsWith('sweep-')).length;
    console.log(`# ${feeds.length} fan-out jobs done while ${sweepsBefore} of ${sweeps} earlier sweeps had finished`);
    assert.ok(sweepsBefore <= 3, `fan-out waited for ${sweepsBefore} sweeps`);
    // The sweeps all finish too, in order, on their own slot.
    await eventually('every sweep done', async () => ((await effects()).filter((t) => t.startsWith('sweep-')).length === sweeps ? true : undefined));
    assert.deepEqual(
      (await effects()).filter((t) => t.startsWith('sweep-')),
      Array.from({ length: sweeps }, (_, i) => `sweep-${i}`),
    );
  });

  test('a worker SIGKILLed mid-job: another worker process runs it again, and it takes effect once', async () => {
    await stopWorker(w1);
    await redis.del(probe.effects);
    const a = await worker({ SHARDQL_WORKER_QUEUES: 'feed' });
    await queue.enqueue('probe.feed', { tag: 'killed', hold: true });
    await eventually('the probe started on worker A', async () => ((await starts('killed')).length === 1 ? true : undefined));
    assert.equal((await queue.queue('feed').getJobState('probe-killed')), 'active');
    const killedAt = Date.now();
    assert.deepEqual(await stopWorker(a, 'SIGKILL'), { code: null, signal: 'SIGKILL' });
    const b = await worker({ SHARDQL_WORKER_QUEUES: 'feed' });
    await redis.set(probe.release('killed'), '1');
    const job = await jobIn('feed', 'probe-killed', 'completed', 10_000);
    console.log(`# killed worker's job completed by another worker ${Date.now() - killedAt} ms after the kill (lock ${LOCK_MS} ms, stalled check every ${STALLED_CHECK_MS} ms)`);
    assert.deepEqual(job.returnvalue, { tag: 'killed', worker: b.name });
    assert.deepEqual(
      (await starts('killed')).map((s) => s.split(' ')[1]),
      [a.name, b.name],
      'started on A, run again on B',
    );
    // BullMQ counts the lost run against the job's attempts: a job that kills every worker ends failed, not looping.
    assert.equal(job.attemptsMade, 1, 'the lost run counted as one attempt');
    assert.deepEqual(await effects(), ['killed'], 'one effect');
    assert.ok(b.logs.some((l) => l.event === 'job_stalled' && l.id === 'probe-killed'), 'worker B found the job stalled');

    // SIGTERM: the running job goes back to its queue, unharmed, and the worker exits 0.
    await queue.enqueue('probe.feed', { tag: 'returned', hold: true });
    await eventually('the probe started on worker B', async () => ((await starts('returned')).length === 1 ? true : undefined));
    const termAt = Date.now();
    assert.deepEqual(await stopWorker(b, 'SIGTERM'), { code: 0, signal: null });
    console.log(`# SIGTERM with a job running: worker exited in ${Date.now() - termAt} ms`);
    assert.equal(await queue.queue('feed').getJobState('probe-returned'), 'waiting');
    assert.equal((await jobOf('feed', 'probe-returned'))!.attemptsMade, 0);
    assert.deepEqual(await effects(), ['killed']);
    const c = await worker({ SHARDQL_WORKER_QUEUES: 'feed' });
    await redis.set(probe.release('returned'), '1');
    const returned = await jobIn('feed', 'probe-returned', 'completed');
    assert.deepEqual(returned.returnvalue, { tag: 'returned', worker: c.name });
    assert.deepEqual(await effects(), ['killed', 'returned']);
    await stopWorker(c);
  });

  test('/metrics shows each queue’s depth, failures and lag; every queue key carries its hash tag', async () => {
    await workers.stopAll();
    const gateway: TestGateway = await startTestGateway(env, 'jobs', { queuePrefix: PREFIX }, { repair: { intervalMs: 0 } });
    try {
      // No worker runs now: a job waits, another is delayed.
      await queue.enqueue('probe.feed', { tag: 'waits' });
      await queue.enqueue('probe.feed', { tag: 'later' }, { delayMs: 60_000 });
      const gauge = (text: string, series: string): number => {
        const m = new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
        assert.ok(m, `${series} in /metrics`);
        return Number(m[1]);
      };
      const metrics = await eventually('the waiting job ≥ 0.3 s old in /metrics', async () => {
        const r = await checkedFetch(env, `${gateway.url}/metrics`);
        assert.equal(r.status, 200);
        return gauge(r.text, 'shardql_queue_lag_seconds{queue="feed"}') >= 0.3 ? r.text : undefined;
      });
      assert.equal(gauge(metrics, 'shardql_queue_jobs{queue="feed",state="waiting"}'), 1);
      assert.equal(gauge(metrics, 'shardql_queue_jobs{queue="feed",state="delayed"}'), 1);
      assert.equal(gauge(metrics, 'shardql_queue_jobs{queue="feed",state="failed"}'), 1);
      assert.equal(gauge(metrics, 'shardql_queue_jobs{queue="feed",state="active"}'), 0);
      assert.equal(gauge(metrics, 'shardql_queue_jobs{queue="sweeps",state="waiting"}'), 0);
      assert.ok(gauge(metrics, 'shardql_queue_lag_seconds{queue="feed"}') < 30);
      assert.equal(gauge(metrics, 'shardql_queue_lag_seconds{queue="sweeps"}'), 0);

      // Every key of a queue is under its own hash tag (one Redis Cluster slot per queue).
      const keys: string[] = [];
      for (let cursor = '0'; ; ) {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `*${PREFIX}*`, 'COUNT', 1000);
        keys.push(...batch);
        cursor = next;
        if (cursor === '0') break;
      }
      const queueKeys = keys.filter((k) => !k.startsWith(`${PREFIX}:probe:`));
      assert.ok(queueKeys.length > 10, `queue keys found: ${queueKeys.length}`);
      const untagged = queueKeys.filter((k) => !QUEUE_NAMES.some((q) => k.startsWith(`{${PREFIX}:${q}}:${q}:`)));
      assert.deepEqual(untagged, []);
    } finally {
      await gateway.stop();
    }
  });

  test('a waiting job survives Redis killed with SIGKILL and restarted (its append-only file is fsynced before each reply); a worker then runs it once', async () => {
    await workers.stopAll();
    await queue.enqueue('probe.feed', { tag: 'durable' });
    assert.equal(await queue.queue('feed').getJobState('probe-durable'), 'waiting');
    await stopService(env.stack.dir, 'redis', 'SIGKILL');
    await startService(env.stack.dir, 'redis');
    // The clients reconnect by themselves; the job is there, and runs.
    const w = await worker();
    const job = await jobIn('feed', 'probe-durable', 'completed', 30_000);
    assert.deepEqual(job.returnvalue, { tag: 'durable', worker: w.name });
    assert.equal((await starts('durable')).length, 1, 'one run');
    assert.equal((await effects()).filter((e) => e === 'durable').length, 1, 'one effect');
  });

  test('the event sweep runs on its schedule in a worker process: expired events and those beyond their kind’s versions are deleted, the rest kept', async () => {
    await workers.stopAll();
    const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
    const u = await writes.createUser({ username: 'jobs_events' });
    const now = Date.now();
    const comment = (ts: number, n: number): SequenceEvent => eventOf({ kind: 'COMMENT', actor: u.id, object: BigInt(1000 + n), detail: BigInt(5000 + n), ts }, u.id, 'activity');
    const fresh = comment(now - 60_000, 1); // a minute old: within the 1 h TTL below
    const expired = comment(now - 2 * 3600_000, 2); // two hours old: past it
    // Four likes (their edges stand), of which the retention below keeps the newest 2.
    const likes: SequenceEvent[] = [];
    for (let i = 0; i < 4; i++) {
      const ts = now - 1000 * (4 - i);
      const pin = BigInt(9000 + i);
      await env.storage.mappings.apply([{ op: 'add', table: 'user_likes_pins', from: u.id, to: pin, sequence: ts }]);
      likes.push(eventOf({ kind: 'LIKE', actor: u.id, object: pin, detail: null, ts }, u.id, 'activity'));
    }
    assert.equal(await env.storage.events.append([fresh, expired, ...likes]), 6);
    const ownIds = async (): Promise<string[]> => (await env.storage.events.stored(u.id)).map((e) => `${e.id}`).sort();
    assert.equal((await ownIds()).length, 6, 'all stored before any sweep');

    // A worker whose configuration turns the sweep on every 0.5 s with this retention: its scheduler does the rest.
    const w = await worker({ SHARDQL_EVENT_SWEEP_EVERY_MS: '500', SHARDQL_EVENT_RETENTION: 'commented_on_pin=1000/1h,liked_pin=2/1d' });
    const schedulers = await queue.queue('sweeps').getJobSchedulers();
    assert.deepEqual(schedulers.map((s) => [s.key, s.every]).sort(), [['sweep.events', 500], ['sweep.repair', 60000]]);
    // What the worker reports (a line per chunk that deleted something): one expired event and two
    // trimmed, over every shard of the topology (nothing else here is old or beyond its versions).
    const swept = (): number[] => {
      const lines = w.logs.filter((l) => l.event === 'events_swept');
      return [lines.reduce((n, l) => n + Number(l.expired), 0), lines.reduce((n, l) => n + Number(l.trimmed), 0)];
    };
    await eventually('the worker reported a sweep that deleted something', async () => (swept().some((n) => n > 0) ? true : undefined), 20_000);
    assert.deepEqual(swept(), [1, 2]);
    assert.deepEqual(await ownIds(), [fresh.id, likes[2]!.id, likes[3]!.id].map((id) => `${id}`).sort());
    const plans = (await queue.queue('sweeps').getJobs(['completed'])).filter((j) => j.name === 'sweep.events');
    assert.ok(plans.length >= 1 && plans.every((j) => (j.returnvalue as { shards: number }).shards === 16), `sweep plans: ${JSON.stringify(plans.map((j) => j.returnvalue))}`);
    await stopWorker(w);
    assert.equal(await queue.queue('sweeps').removeJobScheduler('sweep.events'), true);
  });

  // Issue 42 item 10: a repair run cut by a frozen primary was kept as failed after its one run
  // (`run 1/1: Shards 8, …, 15 are unavailable`), every run and one enqueued by hand alike.
  test('a repair sweep run during a frozen primary (SIGSTOP) is retried with the sweeps\' backoff (4 runs from 5 s) and completes once the primary is back', async () => {
    await workers.stopAll();
    // A follow interrupted after its first transaction, its intent on a shard of the host to freeze.
    const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
    const crash = new ProductWrites({
      storage: env.storage,
      topology: () => env.topology,
      faults: (point) => {
        if (point === 'after-first-commit') throw new Error('injected crash');
      },
    });
    const frozenHost = env.topology.hostOfShard(15)!;
    let a = await writes.createUser({ username: 'frozen_a0' });
    for (let i = 1; env.topology.hostOfShard(shardOf(a.id)) !== frozenHost; i++) a = await writes.createUser({ username: `frozen_a${i}` });
    const b = await writes.createUser({ username: 'frozen_b' });
    await assert.rejects(crash.followUser(a.id, b.id), /injected crash/);
    const frozenShards = env.topology.shardsByHost().get(frozenHost)!;
    assert.equal((await env.storage.intents.pending(frozenShards, 0, 10)).length, 1, 'the intent is on the host to freeze');

    // By hand: a repair job carries the sweeps' retry policy.
    const byHand = await queue.enqueue('sweep.repair', { minAgeMs: 60_000 });
    const job = (await jobOf('sweeps', byHand.id))!;
    assert.deepEqual([job.opts.attempts, job.opts.backoff], [4, { type: 'exponential', delay: 5000 }]);
    await job.remove();

    // On the schedule: a new schedule runs at once, with the primary of the intent's shard frozen.
    await queue.queue('sweeps').removeJobScheduler('sweep.repair');
    const pid = await stackPid(env.stack, `${frozenHost}-primary`);
    let w: WorkerProcess;
    const failures = (): Record<string, unknown>[] => w.logs.filter((l) => l.kind === 'sweep.repair' && (l.event === 'job_retry' || l.event === 'job_failed'));
    process.kill(pid, 'SIGSTOP');
    const frozenAt = Date.now();
    try {
      w = await worker({ SHARDQL_REPAIR_EVERY_MS: '600000' });
      // Two runs fail while it is frozen (each cut by its statement or connect timeout), and wait
      // their backoff; a run kept as failed instead ends the wait at once.
      await eventually('two failed runs of the scheduled repair', async () => (failures().length >= 2 || failures().some((l) => l.event === 'job_failed') ? true : undefined), 40_000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    console.log(`# ${frozenHost}-primary frozen ${Date.now() - frozenAt} ms`);
    const failed = failures();
    assert.deepEqual(failed.map((l) => [l.event, l.attempt]), [['job_retry', 1], ['job_retry', 2]], 'two runs failed and were each retried, none kept as failed');
    const id = String(failed[0]!.id);
    assert.match(id, /^repeat:sweep\.repair:/);
    assert.equal(failed[1]!.id, id, 'the same job, run again');
    for (const l of failed) assert.equal(l.error, `Shards ${frozenShards.join(', ')} are unavailable; retry later`);

    // The third run, after a backoff of ≥ 10 s, finds the primary back and completes the follow.
    const done = await jobIn('sweeps', id, 'completed', 30_000);
    assert.equal(done.attemptsMade, 3);
    assert.deepEqual(done.returnvalue, { completed: 1, failed: 0 });
    const at = failed.map((l) => Date.parse(String(l.time)));
    console.log(`# repair runs failed at +0 and +${at[1]! - at[0]!} ms, completed at +${done.finishedOn! - at[0]!} ms`);
    assert.ok(at[1]! - at[0]! >= 5000, `second run ≥ 5 s after the first failed, got ${at[1]! - at[0]!} ms`);
    assert.ok(done.finishedOn! - at[1]! >= 10_000, `third run ≥ 10 s after the second failed, got ${done.finishedOn! - at[1]!} ms`);
    assert.equal((await env.storage.intents.pending(frozenShards, 0, 10)).length, 0);
    assert.equal((await env.storage.mappings.existing('user_followed_by_users', [{ from: b.id, to: a.id }])).size, 1, 'the reverse edge is there');

    // `shardql jobs` keeps no failure of it.
    const cli = await runCli(workerEnv(), ['jobs', '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    const sweeps = (JSON.parse(cli.stdout) as { queues: QueueStats[] }).queues.find((q) => q.queue === 'sweeps')!;
    assert.deepEqual([sweeps.failed, sweeps.latestFailures], [0, []]);
    await stopWorker(w!);
  });
});
