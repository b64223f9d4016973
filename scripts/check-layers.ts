/**
 * `npm run lint`: keeps the layers honest. Data flows one way —
 * http → graphql → loaders → services/stores → core — and nothing imports a layer above it.
 * Background jobs sit beside the gateway: handlers (jobs/) call services and stores; services reach
 * the queue only through their port (services/backgroundJobs.ts), which owns the job names and
 * payloads the job kinds implement. Products (src/product/) sit above the gateway's layers and attach
 * to them by name (product/served.ts); nothing generic imports them.
 * No import cycle among src/ files, type-only imports included; only entry points read
 * process.env; no SQL lives outside storage/. Outside the model and the products' own code (product/,
 * and demo/ and bulk/, the demo's and the benchmark's data), src/ names no type or table of the
 * project's model (scripts/productNames.ts).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { importCycles, importsOf } from './importGraph.ts';
import { codeOf, namesIn, productNames } from './productNames.ts';
import { readModelFiles } from '../src/core/model/modelFiles.ts';
import { parseModel } from '../src/core/model/parseModel.ts';

const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');

/**
 * What each folder of src/ may import from src/ (besides itself), runtime and type-only imports
 * alike: only down the flow http → graphql → loaders → services/stores → cache | router.
 */
const ALLOWED: Record<string, string[]> = {
  core: [],
  stack: [],
  // Stores read through the caches they are handed (storage/lookAside.ts).
  storage: ['core', 'cache'],
  topology: ['core'],
  auth: ['core'],
  redis: ['core'],
  cache: ['core', 'redis'],
  services: ['core', 'storage', 'cache'],
  // An import job carries a source's deletes through the product's own writes.
  jobs: ['core', 'storage', 'services', 'redis', 'product'],
  loaders: ['core', 'storage', 'services', 'cache'],
  graphql: ['core', 'loaders', 'services', 'storage'],
  // The handler hands requests to the GraphQL layer (and its fast lane); admission's rate limits and breaker live in cache/.
  http: ['core', 'log.ts', 'graphql', 'cache'],
  telemetry: ['core'],
  // Products attach to the generic layers by name; only entry points, jobs and demo data name them.
  product: ['core', 'storage', 'services', 'loaders', 'graphql'],
  demo: ['core', 'storage', 'services', 'product'],
  // Benchmark data: Pinterest's, so its events are in the product's kinds.
  bulk: ['core', 'storage', 'topology', 'stack', 'auth', 'product'],
  // The process's metrics read the counters of the layers they export.
  'metrics.ts': ['core', 'storage', 'jobs'],
};
/** Entry points: may import anything and read the environment. */
const ENTRY = ['cli.ts', 'cli', 'server.ts', 'worker.ts', 'config.ts', 'log.ts'];
/** Drivers only the layers that do I/O of that kind may import. */
const DRIVERS: Record<string, string[]> = {
  mysql2: ['storage', 'stack', 'bulk'],
  // Every Redis client comes from src/redis/redisClient.ts (one Redis or a cluster alike); the stack forms its cluster.
  ioredis: ['redis', 'stack'],
  bullmq: ['jobs'],
  memjs: ['cache', 'server.ts', 'cli'],
  etcd3: ['topology', 'server.ts', 'cli', 'bulk'],
  // Observability: OpenTelemetry only behind the tracing port (core/trace.ts), pino only in the
  // logger every layer reaches through its `Log` type, proxy-addr only where the client address is read.
  '@opentelemetry': ['telemetry'],
  pino: ['log.ts'],
  'pino-pretty': ['log.ts'],
  'proxy-addr': ['http'],
  jose: ['auth'],
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Where the project's model (schema/) may be named: the products, their demo and benchmark data, the generated model, the local stack (MySQL's own `user`). */
const NAMES_ALLOWED = ['product', 'demo', 'bulk', 'stack'];
const NAMES_ALLOWED_FILES = ['core/model/declared.ts'];
/** Words that are a generic layer's own vocabulary where they collide with a model name, file by file, and why. */
const NAMES_OWN: Readonly<Record<string, readonly string[]>> = {
  // An event sequence's row is its `user` (the events table's user_id), whatever the viewer's type is called.
  'core/events.ts': ["'user'"],
  'storage/eventStore.ts': ["'user'"],
};
const PRODUCT_NAMES = productNames(parseModel(readModelFiles(join(root, 'schema'))));

const problems: string[] = [];
/** src/ file → the src/ files it imports (type-only imports too), for the cycle check. */
const graph = new Map<string, Set<string>>();
for (const file of files(src)) {
  const rel = relative(src, file);
  const layer = rel.includes('/') ? rel.split('/')[0]! : rel;
  const source = readFileSync(file, 'utf8');
  // Comments may mention anything; the text checks read code only.
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const isEntry = ENTRY.includes(layer);
  const imported = new Set<string>();
  graph.set(rel, imported);
  for (const { spec, typeOnly } of importsOf(file, source)) {
    if (spec.startsWith('.')) {
      const target = relative(src, resolve(dirname(file), spec));
      if (target.startsWith('..')) { problems.push(`${rel}: imports ${spec}, outside src/`); continue; }
      // The file a module specifier names as NodeNext resolves it ('./x.js' may name x.ts).
      const named = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')].find((f) => existsSync(join(src, f)) && statSync(join(src, f)).isFile());
      if (named === undefined) problems.push(`${rel}: imports ${spec}, which names no file of src/`);
      else imported.add(named);
      const targetLayer = target.includes('/') ? target.split('/')[0]! : target;
      if (isEntry || targetLayer === layer) continue;
      const allowed = ALLOWED[layer];
      if (!allowed) { problems.push(`${rel}: folder '${layer}' has no layer rule in scripts/check-layers.ts`); continue; }
      // Type-only imports count: a type that must go up belongs in the layer below both (core/).
      if (!allowed.includes(targetLayer)) problems.push(`${rel}: layer '${layer}' imports '${targetLayer}'${typeOnly ? ' (a type-only import counts too)' : ''} (${spec})`);
    } else {
      const pkg = spec.split('/')[0]!; // a scope (@opentelemetry/api) is one driver
      const users = DRIVERS[pkg];
      if (users && !typeOnly && !users.includes(layer)) problems.push(`${rel}: layer '${layer}' imports the driver ${pkg}`);
    }
  }
  if (!NAMES_ALLOWED.includes(layer) && !NAMES_ALLOWED_FILES.includes(rel)) {
    const named = namesIn(codeOf(source), PRODUCT_NAMES).filter((n) => !NAMES_OWN[rel]?.includes(n));
    if (named.length > 0) problems.push(`${rel}: names the product's model (${[...new Set(named)].join(', ')}); generic code reads the served model`);
  }
  if (!isEntry && /process\.env\b/.test(text)) problems.push(`${rel}: reads process.env (only entry points may)`);
  if (layer !== 'storage' && layer !== 'bulk' && layer !== 'stack' && /['"`]\s*(SELECT|INSERT INTO|UPDATE \S+ SET|DELETE FROM)\s/i.test(text)) {
    problems.push(`${rel}: holds SQL; SQL belongs in storage/`);
  }
}
for (const { files: tied, cycle } of importCycles(graph)) {
  const path = [...cycle, cycle[0]!].map((f) => `src/${f}`).join(' → ');
  const others = tied.filter((f) => !cycle.includes(f));
  problems.push(`import cycle: ${path}${others.length > 0 ? ` (${tied.length} files tied in all, also ${others.map((f) => `src/${f}`).join(', ')})` : ''}`);
}

if (problems.length > 0) {
  console.error(`Layer check: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`Layer check: ${graph.size} files, layers respected, no import cycle`);
