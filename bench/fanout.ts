/**
 * The fan-out scenario: how long a new pin takes to reach the stored feeds of its pinner's
 * followers, and how many feed insertions per second the queue sustains.
 *
 *   1. a `shardql worker` process (feed queue only) on the benchmark's stack;
 *   2. one pinner (a mutation user of the data set) gets `followers` followers — the users a feed-1k
 *      user follows, those not following it yet — and each follower's feed is read once through the
 *      gateway, so it exists (fan-out only reaches feeds that exist);
 *   3. latency: `pins` pins one after another, each timed from sending `createPin` to the pin being
 *      in every follower's stored feed (Redis polled every 5 ms: one pipeline of ZSCOREs);
 *   4. throughput: a burst of `burst` pins sent together (8 at a time), timed from the first send
 *      to the last insertion: insertions per second (and the workers' own counter of them);
 *   5. the pins are deleted again (their retractions run before the worker stops), and the follows
 *      made in 2 undone: the data set is left as the flat database has it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { feedKey, feedMember, FEED_WORK_KEY } from '../src/cache/redisFeeds.ts';
import { JobQueue } from '../src/jobs/jobQueue.ts';
import { DEFAULT_QUEUE_PREFIX } from '../src/jobs/queues.ts';
import { JOB_KINDS } from '../src/jobs/registry.ts';
import type { StackInfo } from '../src/stack/localStack.ts';
import { ROOT } from './stack.ts';

export interface FanoutResult {
  readonly followers: number;
  readonly workerConcurrency: string;
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number; readonly samples: number };
  readonly burst: { readonly pins: number; readonly insertions: number; readonly seconds: number; readonly insertionsPerSecond: number; readonly countedInsertions: number };
  readonly setupSeconds: number;
}

export interface FanoutInputs {
  readonly stack: StackInfo;
  readonly stackDir: string;
  readonly topologyKey: string;
  /** POST a GraphQL request as `viewer` to the gateway under test. */
  readonly send: (query: string, variables: Record<string, unknown>, viewer?: string) => Promise<{ data?: any; errors?: { message: string }[] }>;
  readonly pinner: string;
  /** A user who follows many pinners: their follows become the pinner's followers. */
  readonly followSource: string;
  readonly followers: number;
  readonly pins: number;
  readonly burst: number;
  readonly log: (line: string) => void;
}

async function startWorker(inputs: FanoutInputs): Promise<{ child: ChildProcess; name: string }> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('SHARDQL_')) delete env[k];
  Object.assign(env, { SHARDQL_STACK_DIR: inputs.stackDir, SHARDQL_TOPOLOGY_KEY: inputs.topologyKey, SHARDQL_WORKER_QUEUES: 'feed', NODE_ENV: 'production' });
  const child = spawn(process.execPath, ['--max-semi-space-size=64', '--import', 'tsx', join(ROOT, 'src/cli.ts'), 'worker'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const name = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start in 30 s: ${stderr}`)), 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const e = JSON.parse(line) as Record<string, unknown>;
        if (e.event === 'worker_started') (clearTimeout(timer), resolve(`${e.worker} (${String(e.queues)})`));
        else if (/failed|error/.test(String(e.event))) inputs.log(`  [worker] ${line.slice(0, 300)}`);
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${stderr}`)));
  });
  return { child, name };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

export async function runFanout(inputs: FanoutInputs): Promise<FanoutResult> {
  const { send, log } = inputs;
  const ok = async (query: string, variables: Record<string, unknown>, viewer?: string): Promise<any> => {
    const r = await send(query, variables, viewer);
    if (r.errors?.length) throw new Error(`fan-out setup: ${r.errors[0]!.message}`);
    return r.data;
  };
  const t0 = Date.now();
  const redis = new Redis({ host: inputs.stack.redis.host, port: inputs.stack.redis.port });
  const worker = await startWorker(inputs);
  log(`  fan-out: worker ${worker.name}`);
  const made: string[] = [];
  const followed: string[] = [];
  try {
    // The audience: users the follow source follows, each following the pinner, each with a feed.
    const followers: string[] = [];
    let after: string | null = null;
    while (followers.length < inputs.followers) {
      const d = await ok('query($u: ID!, $a: String) { user(id: $u) { following(first: 100, after: $a) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }', { u: inputs.followSource, a: after });
      const page = d.user.following;
      for (const e of page.edges) if (e.node.id !== inputs.pinner && followers.length < inputs.followers) followers.push(e.node.id);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    // Only those who do not follow the pinner yet follow it, and unfollow it again at the end: the
    // data set's follows stay the flat database's (the profile compares following counts).
    await pool(followers, 8, async (f) => {
      const d = await ok('query($u: ID!) { user(id: $u) { viewerFollows } }', { u: inputs.pinner }, f);
      if (d.user.viewerFollows) return;
      await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: inputs.pinner }, f);
      followed.push(f);
    });
    await pool(followers, 8, async (f) => void (await ok('{ homeFeed(first: 1) { edges { cursor } } }', {}, f)));
    const keys = followers.map((f) => feedKey(BigInt(f)));
    const missing = (await Promise.all(keys.map((k) => redis.exists(k)))).filter((n) => n === 0).length;
    if (missing > 0) throw new Error(`fan-out setup: ${missing} of ${keys.length} followers have no stored feed after reading it`);
    let board: string | undefined = (await ok('query($u: ID!) { user(id: $u) { boards(first: 1) { edges { node { id } } } } }', { u: inputs.pinner })).user.boards.edges[0]?.node.id;
    board ??= (await ok('mutation { createBoard(input: { name: "fan-out" }) { id } }', {}, inputs.pinner)).createBoard.id as string;
    const setupSeconds = (Date.now() - t0) / 1000;
    log(`  fan-out: ${followers.length} followers of ${inputs.pinner}, each with a stored feed (setup ${setupSeconds.toFixed(1)} s)`);

    const createPin = async (title: string): Promise<string> => {
      const id = (await ok('mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: board, t: title }, inputs.pinner)).createPin.id as string;
      made.push(id);
      return id;
    };
    /** Resolves when every follower's feed holds every pin of `pins`. */
    const landed = async (pins: readonly string[]): Promise<void> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const pipe = redis.pipeline();
        for (const k of keys) for (const p of pins) pipe.zscore(k, feedMember(BigInt(p)));
        const res = (await pipe.exec()) ?? [];
        if (res.every(([err, v]) => !err && v !== null)) return;
        if (Date.now() > deadline) throw new Error(`fan-out: ${res.filter(([, v]) => v === null).length} insertions still missing after 60 s`);
        await sleep(5);
      }
    };

    const counted = async (): Promise<number> => Number((await redis.hget(FEED_WORK_KEY, 'insertions')) ?? 0);
    // A worker counts a fan-out's insertions just after writing them, so `landed` can see the pins
    // before the count moves: wait (with a deadline) until it reaches what is expected, then read it.
    const settled = async (atLeast: number): Promise<number> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const n = await counted();
        if (n >= atLeast || Date.now() > deadline) return n;
        await sleep(5);
      }
    };
    const atStart = await counted();
    const latencies: number[] = [];
    for (let i = 0; i < inputs.pins; i++) {
      const start = performance.now();
      const pin = await createPin(`fan-out ${i}`);
      await landed([pin]);
      latencies.push(performance.now() - start);
    }
    latencies.sort((a, b) => a - b);
    log(`  fan-out: createPin → in all ${followers.length} feeds: p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p99 ${quantile(latencies, 0.99).toFixed(0)} ms over ${latencies.length} pins`);

    const before = await settled(atStart + inputs.pins * followers.length);
    const burstStart = performance.now();
    const burstPins: string[] = [];
    await pool(Array.from({ length: inputs.burst }, (_, i) => i), 8, async (i) => void burstPins.push(await createPin(`fan-out burst ${i}`)));
    await landed(burstPins);
    const seconds = (performance.now() - burstStart) / 1000;
    const insertions = burstPins.length * followers.length;
    const countedInsertions = (await settled(before + insertions)) - before;
    log(`  fan-out: burst of ${burstPins.length} pins → ${insertions} insertions in ${seconds.toFixed(2)} s: ${(insertions / seconds).toFixed(0)}/s (workers counted ${countedInsertions})`);
    return {
      followers: followers.length,
      workerConcurrency: worker.name,
      latencyMs: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) ?? NaN, samples: latencies.length },
      burst: { pins: burstPins.length, insertions, seconds, insertionsPerSecond: insertions / seconds, countedInsertions },
      setupSeconds,
    };
  } finally {
    // Leave the data set as it was: the pins go, their retractions run before the worker stops.
    await pool(made, 8, async (p) => void (await send('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p }, inputs.pinner)));
    await pool(followed, 8, async (f) => void (await send('mutation($u: ID!) { unfollowUser(userId: $u) { id } }', { u: inputs.pinner }, f)));
    const queue = new JobQueue({ redis, prefix: DEFAULT_QUEUE_PREFIX, registry: JOB_KINDS });
    const drainBy = Date.now() + 60_000;
    while (Date.now() < drainBy) {
      const feed = (await queue.stats()).find((s) => s.queue === 'feed')!;
      if (feed.waiting + feed.active + feed.delayed === 0) break;
      await sleep(50);
    }
    await queue.close();
    worker.child.kill('SIGTERM');
    await new Promise((resolve) => worker.child.once('exit', resolve));
    redis.disconnect();
  }
}
