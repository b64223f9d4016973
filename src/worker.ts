/**
 * The composition root of a worker process (`shardql worker`): the topology (watched like a
 * gateway's, and registered like one, so a shard move waits for this process too before copying),
 * storage with the caches (a worker's writes invalidate memcached, Redis and every gateway's L1 like
 * a gateway's), the job queue, the sweep schedules, and the workers. Gateways and workers share
 * nothing but Redis, MySQL and etcd: either scales on its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createCacheLayers } from './cache/cacheLayers.ts';
import { importPassword, servedEventSettings, type GatewayConfig, type WorkerConfig } from './config.ts';
import { jobsRedis } from './jobs/connection.ts';
import { describeRedisTarget } from './redis/redisClient.ts';
import { MIN_REDIS_VERSION } from './redis/redisVersion.ts';
import type { JobRegistry } from './jobs/jobKind.ts';
import { JobQueue } from './jobs/jobQueue.ts';
import { JobWorkers } from './jobs/jobWorkers.ts';
import { probeKinds } from './jobs/kinds/probe.ts';
import { DEFAULT_QUEUE_PREFIX } from './jobs/queues.ts';
import { JOB_KINDS } from './jobs/registry.ts';
import { scheduleSweeps } from './jobs/schedules.ts';
import type { Log } from './log.ts';
import { servedEvents } from './product/served.ts';
import { importSources } from './storage/importSource.ts';
import { createStorage } from './storage/index.ts';
import { checkModShardCountAtStart } from './storage/modShardCountRecord.ts';
import { servedFeed } from './product/served.ts';
import { DEFAULT_FEED_OPTIONS, FeedWrites, type FeedOptions } from './services/feeds.ts';
import { faultAt } from './services/testFaults.ts';
import { startWatchedTopology } from './topology/watchedTopology.ts';

export interface RunningWorker {
  /** `host-pid`. */
  readonly name: string;
  /** Finish or return running jobs (up to the configured grace), then close every client. */
  stop(): Promise<void>;
}

async function holdWhile(redis: { exists(key: string): Promise<number> }, key: string): Promise<void> {
  while ((await redis.exists(key)) === 1) await sleep(20);
}

export async function startWorker(config: GatewayConfig, workerConfig: WorkerConfig, log: Log): Promise<RunningWorker> {
  const watched = await startWatchedTopology({
    endpoints: config.etcdEndpoints,
    access: config.etcdAccess,
    topologyKey: config.topologyKey,
    refreshIntervalMs: config.topologyRefreshMs,
    log,
  });
  const { watcher } = watched;
  const current = watched.current;

  // No L1 here: a worker reads little twice, and its writes must reach every gateway's L1 through the log.
  const feedOptions: FeedOptions = { ...DEFAULT_FEED_OPTIONS, ...config.feed };
  const layers = await createCacheLayers({ redis: config.redis, memcached: config.memcached, nearEntries: 0, feedSize: feedOptions.size });
  // Its queues wait for Redis (they reconnect by themselves); say why it does not answer now.
  if (!layers.redisReachable) log('redis_unavailable', { redis: describeRedisTarget(config.redis), error: layers.redisError }, 'error');
  if (layers.memcachedError !== undefined) log('memcached_unavailable', { memcached: config.memcached.servers, error: layers.memcachedError }, 'error');
  for (const server of layers.redisOutdated) log('redis_unsupported', { server, need: MIN_REDIS_VERSION, effect: 'the invalidation log fails: every write waits for the repair pass' }, 'error');
  // Event sequences only when an attached product declares them: else none is swept.
  const eventSpec = servedEvents();
  const storage = createStorage({
    topology: current,
    credentials: config.mysql,
    events: eventSpec ? servedEventSettings(config, eventSpec) : null,
    ...(config.queryTimeoutMs !== undefined ? { queryTimeoutMs: config.queryTimeoutMs } : {}),
    cache: { objects: layers.objects, lists: layers.lists, near: layers.near },
    onInvalidationError: (layer, err) => log('cache_invalidation_failed', { layer, error: err instanceof Error ? err.message : String(err) }),
    onReadOnly: () => void watcher.refresh(),
  });
  await checkModShardCountAtStart(storage.router, current(), log).catch(async (err: unknown) => {
    await storage.close();
    layers.close();
    await watched.close();
    throw err;
  });

  const redis = jobsRedis(config.redis, 'worker');
  const prefix = config.queuePrefix ?? DEFAULT_QUEUE_PREFIX;
  const jobs = new JobQueue({ redis, prefix, registry: JOB_KINDS });
  const registry: JobRegistry = workerConfig.testJobs ? { ...JOB_KINDS, ...probeKinds(redis, `${prefix}:probe`) } : JOB_KINDS;
  if (workerConfig.queues.includes('sweeps')) {
    await scheduleSweeps(jobs, JOB_KINDS, {
      repairEveryMs: workerConfig.repairEveryMs,
      reconcileEveryMs: workerConfig.reconcileEveryMs,
      eventSweepEveryMs: eventSpec ? workerConfig.eventSweepEveryMs : 0,
    });
  }
  // The feed jobs' machinery only when an attached product declares a home feed.
  const feed = servedFeed();
  const sources = importSources((loc) => importPassword(workerConfig.importPassword, loc.user, config.mysql));
  const workers = new JobWorkers({
    redis,
    prefix,
    registry,
    queues: workerConfig.queues,
    concurrency: workerConfig.concurrency,
    lockMs: workerConfig.lockMs,
    stalledCheckMs: workerConfig.stalledCheckMs,
    storage,
    importSources: sources,
    topology: current,
    jobs,
    ...(config.testFault ? { writeFaults: faultAt(config.testFault) } : {}),
    feeds: feed
      ? new FeedWrites({
          feed,
          storage,
          feeds: layers.feeds,
          options: feedOptions,
          tuning: {
            pageSize: workerConfig.fanoutPage,
            // Test jobs only: a fan-out waits between pages while the test holds it (to kill its worker midway).
            ...(workerConfig.testJobs ? { beforePage: () => holdWhile(redis, `${prefix}:probe:hold-fanout`) } : {}),
          },
        })
      : undefined,
    log,
  });
  await workers.start();

  return {
    name: workers.name,
    async stop() {
      await workers.stop(workerConfig.stopGraceMs);
      await jobs.close();
      await sources.close();
      redis.disconnect();
      await storage.close();
      layers.close();
      await watched.close();
      log('worker_stopped', { worker: workers.name });
    },
  };
}
