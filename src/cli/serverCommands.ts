/** `shardql serve` (the gateway) and `shardql dev` (everything for a fresh machine, then the gateway). */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { mintToken } from '../auth/tokens.ts';
import { isShardqlError } from '../core/errors.ts';
import { PROJECT_ROOT } from '../core/projectRoot.ts';
import { parseTopology, type Topology } from '../core/topology.ts';
import type { GatewayConfig } from '../config.ts';
import { assertModShardCountRecorded } from '../storage/modShardCountRecord.ts';
import { CliError, type CliContext, type Command } from './command.ts';
import { runProvision } from './dataCommands.ts';
import { seconds } from './format.ts';
import { configFor, println, stackHosts, stackInfo, withEtcd, withStorage } from './runtime.ts';
import { bringStackUp } from './stackCommands.ts';
import { spawnWorker, type WorkerProcess } from './workerCommands.ts';
import { DEFAULT_STACK_SHARDS, ensurePrimariesWritable, printChanges, publishIfUnchanged, readPublished, serversOutside, stackLayout } from './topologyCommands.ts';

const STOP_TIMEOUT_MS = 15_000;
const DEV_TOKEN_TTL_SECONDS = 7 * 86400;

interface RunningGateway {
  readonly url: string;
  stop(): Promise<void>;
}

async function startGateway(ctx: CliContext, config: GatewayConfig, opts: { host?: string; graphiqlToken?: string } = {}): Promise<RunningGateway> {
  // Loaded on demand: Apollo and the schema are only needed by the commands that serve.
  const server = await import('../server.ts');
  return server.startGateway(config, { log: (line: string) => println(ctx.stdout, line), ...opts });
}

/**
 * Waits for SIGINT/SIGTERM, then stops the gateway and its worker, if any (giving up after
 * STOP_TIMEOUT_MS). `signalled` is `ctx.waitForSignal()` called before the gateway started: a
 * handler installed only after "listening on" was printed would leave a moment in which a
 * supervisor that read the line and sent SIGTERM killed the process outright.
 */
async function serveUntilSignal(ctx: CliContext, signalled: Promise<NodeJS.Signals>, gateway: RunningGateway, worker?: WorkerProcess): Promise<number> {
  const signal = await signalled;
  println(ctx.stderr, `${signal}: stopping the gateway${worker ? ' and the worker' : ''} (again to force)`);
  const workerStopped = worker?.stop(STOP_TIMEOUT_MS);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS);
  });
  try {
    const outcome = await Promise.race([Promise.all([gateway.stop(), workerStopped]).then(() => 'stopped' as const), timeout]);
    if (outcome === 'timeout') throw new CliError(`The gateway did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
  } finally {
    clearTimeout(timer);
  }
  println(ctx.stderr, worker ? 'Gateway and worker stopped.' : 'Gateway stopped.');
  return 0;
}

const serve: Command = {
  name: 'serve',
  summary: 'Run the GraphQL gateway (configured by SHARDQL_* variables); stops gracefully on SIGINT/SIGTERM',
  options: {
    host: { type: 'string', value: 'ADDR', help: 'Address to listen on (default $SHARDQL_HOST, else 127.0.0.1; 0.0.0.0 in a container)' },
  },
  details: 'Listens on $SHARDQL_PORT (default 4000). Logs are JSON lines on stdout.',
  async run(args, ctx) {
    const config = configFor(ctx);
    const signalled = ctx.waitForSignal();
    const host = args.string('host') ?? ctx.env.SHARDQL_HOST;
    const gateway = await startGateway(ctx, config, host !== undefined && host !== '' ? { host } : {});
    println(ctx.stdout, `shardql gateway (${config.env}) listening on ${gateway.url}${config.env === 'development' ? `; GraphiQL at ${gateway.url}/graphiql` : ''}${config.webApp ? `; web app at ${gateway.url}/app` : ''}`);
    return serveUntilSignal(ctx, signalled, gateway);
  },
};

function step(ctx: CliContext, n: number, text: string): void {
  println(ctx.stdout, `\n[${n}/7] ${text}`);
}

/**
 * Builds the web app if web/, schema/ or the packages changed since its last build (a separate
 * process: scripts/buildWeb.mjs runs relay-compiler and esbuild). Returns the built directory.
 */
function ensureWebApp(ctx: CliContext): string {
  const run = spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts/buildWeb.mjs'), '--if-stale'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new CliError(`${run.stderr || run.stdout || String(run.error)}`.trim());
  if (run.stdout.trim() !== '') println(ctx.stdout, run.stdout.trim());
  else println(ctx.stdout, 'The web app is up to date (dist/web)');
  return join(PROJECT_ROOT, 'dist/web');
}

/**
 * The map `dev` serves: the published one whenever there is one, else the stack's layout, published.
 * A published map is never replaced from here: after a promotion it names a stack's replica as its
 * host's primary, and putting the stack's layout back would make the demoted server the primary again
 * and hide every write acknowledged since. A map naming servers the stack does not run, or one that is
 * not valid, is refused: publishing over it is the operator's explicit `topology publish`.
 */
async function ensureStackTopology(ctx: CliContext, config: GatewayConfig, hosts: ReturnType<typeof stackHosts>, layout: () => Topology): Promise<Topology> {
  return withEtcd(config, async (etcd) => {
    const current = await readPublished(etcd, config);
    const where = `${config.topologyKey} (revision ${current.modRevision})`;
    const replace = 'Publish the map to serve explicitly (`shardql topology publish` shows what changes), or set SHARDQL_TOPOLOGY_KEY to another key';
    if (current.modRevision !== null && current.topology === null) {
      throw new CliError(`The topology at ${where} is not valid (${current.problem}); \`dev\` does not replace a published map. ${replace}`);
    }
    if (current.topology !== null) {
      const outside = serversOutside(current.topology.doc, hosts);
      if (outside.length > 0) {
        throw new CliError(`The topology at ${where} names servers this stack does not run: ${outside.join(', ')}; \`dev\` does not replace a published map. ${replace}`);
      }
      const unmapped = Object.keys(hosts).filter((h) => current.topology?.doc.hosts[h] === undefined);
      println(ctx.stdout, `Serving the topology at ${where}: ${current.topology.doc.shards.ranges.length} ranges, ${current.topology.openShardCount} open shards`);
      if (unmapped.length > 0) println(ctx.stdout, `  the stack's ${unmapped.join(', ')} are in no map yet (\`shardql topology publish\` or \`topology open-range\` adds them)`);
      return current.topology;
    }
    const next = layout();
    // Databases provisioned for another map (tests interrupted before their clean-up) would refuse
    // this layout at provisioning: say so before publishing it.
    await withStorage(config, next, (storage) => assertModShardCountRecorded(storage.router, next), 2);
    printChanges(ctx, config, current, next);
    const revision = await publishIfUnchanged(etcd, config.topologyKey, next, current.modRevision);
    println(ctx.stdout, `Published revision ${revision} at ${config.topologyKey}`);
    return next;
  });
}

/**
 * Runs `fn`, turning a refusal for another recorded mod-shard count (storage/modShardCountRecord.ts)
 * into what to run on a local stack: its databases hold claims made under another map, usually the
 * integration tests' (they drop their databases when they finish; an interrupted run leaves them).
 */
async function refusingOtherCounts<T>(ctx: CliContext, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!isShardqlError(err, 'INVALID_TOPOLOGY') || err.details.recorded === undefined) throw err;
    throw new CliError(
      `${err.message}. On this local stack they are left from another map (an interrupted integration test run leaves its data): ` +
        `\`bin/shardql stack down && rm -rf ${ctx.stackDir}\` starts the stack from nothing, then run \`npm run dev\` again`,
    );
  }
}

const dev: Command = {
  name: 'dev',
  summary: 'Fresh machine to running gateway: stack up, topology, databases, demo data, the web app, GraphiQL and a token',
  details:
    `Starts (or reuses) the local stack with replicas, publishes a ${DEFAULT_STACK_SHARDS}-shard layout when no map is published (a\n` +
    'published one is served as it is, e.g. after a promotion; one naming servers the stack does not run is\n' +
    'refused), creates the shard databases, loads the demo data once, builds the web app (web/) when it\n' +
    'changed, and serves the gateway (the app at /app, signed in as the first demo user) in\n' +
    'development mode on $SHARDQL_PORT (default 4000), with one `shardql worker` process beside it (background\n' +
    'jobs: sweeps now, feed fan-out later). Ctrl-C stops both; the stack keeps running.\n' +
    'With --redis-cluster, the gateway and the worker use the stack\'s 3-primary Redis Cluster instead of its single Redis.',
  options: {
    'redis-cluster': { type: 'boolean', help: "Run on the stack's Redis Cluster (started if missing) instead of its single Redis" },
  },
  async run(args, ctx) {
    const started = Date.now();
    step(ctx, 1, 'Local stack');
    // Two hosts on a fresh machine; a stack that already has more keeps them (stacks never shrink).
    const hosts = Math.max(2, stackInfo(ctx)?.mysql.hosts.length ?? 0);
    const onCluster = args.flag('redis-cluster');
    const info = await bringStackUp(ctx, ctx.stackDir, { hosts, replicas: true, ...(onCluster ? { redisCluster: true } : {}) });
    const clusterNodes = info.redisCluster?.nodes.map((n) => `${n.host}:${n.port}`).join(',');
    // The gateway (config) and the worker (its environment) both read the cluster from SHARDQL_REDIS_CLUSTER.
    const redisEnv: Record<string, string> = onCluster && clusterNodes ? { SHARDQL_REDIS: '', SHARDQL_REDIS_CLUSTER: clusterNodes } : {};
    const config = configFor(ctx, { SHARDQL_ENV: 'development', ...redisEnv });

    const topology = await refusingOtherCounts(ctx, async () => {
      step(ctx, 2, 'Topology');
      const served = await ensureStackTopology(ctx, config, stackHosts(info), () => parseTopology(stackLayout(info, DEFAULT_STACK_SHARDS)));
      // Every server starts read-only; the map's primaries take writes.
      if (!(await ensurePrimariesWritable(ctx, config, served.doc, 'the topology'))) throw new CliError('Some primaries of the topology are not writable (see above)');

      step(ctx, 3, 'Shard databases');
      await runProvision(ctx, config, served);
      return served;
    });

    step(ctx, 4, 'Demo data');
    const { seedDemo } = await import('../demo/seed.ts');
    const demo = await withStorage(config, topology, (storage) => seedDemo(storage, () => topology, (line) => println(ctx.stderr, `  ${line}`)));
    println(ctx.stdout, demo.created ? `Loaded the demo data: ${demo.users.length} users` : `Demo data already loaded (${demo.users.length} users)`);

    step(ctx, 5, 'Web app');
    const webApp = ensureWebApp(ctx);

    step(ctx, 6, 'Gateway');
    const first = demo.users[0];
    const token = first === undefined ? undefined : await mintToken(config.jwtSecret, first.id, DEV_TOKEN_TTL_SECONDS);
    // GraphiQL and the web app open signed in as the first demo user.
    // From here a signal stops what started gracefully (before, Ctrl-C leaves at once).
    const signalled = ctx.waitForSignal();
    const gateway = await startGateway(ctx, { ...config, webApp }, token !== undefined ? { graphiqlToken: token } : {});
    const lines = ['', `Ready in ${seconds(Date.now() - started)}.`, `  Web app:   ${gateway.url}/app`, `  GraphiQL:  ${gateway.url}/graphiql`, `  GraphQL:   ${gateway.url}/graphql`];
    if (first !== undefined && token !== undefined) {
      lines.push(
        '',
        `Token for demo user ${first.username} (id ${first.id}), valid 7 days:`,
        `  export SHARDQL_TOKEN=${token}`,
        `  curl -s ${gateway.url}/graphql -H 'content-type: application/json' -H "authorization: Bearer $SHARDQL_TOKEN" \\`,
        `    -d '{"query":"{ viewer { id username } }"}'`,
      );
    }
    step(ctx, 7, 'Worker');
    const worker = spawnWorker(ctx, { SHARDQL_ENV: 'development', ...redisEnv });
    lines.push('', `Worker: pid ${worker.pid} (background jobs; \`shardql jobs\` shows the queues).`);
    lines.push('', 'Ctrl-C stops the gateway and the worker; the stack keeps running (`shardql stack down` stops it).');
    for (const line of lines) println(ctx.stdout, line);
    return serveUntilSignal(ctx, signalled, gateway, worker);
  },
};

export const serverCommands: readonly Command[] = [serve, dev];
