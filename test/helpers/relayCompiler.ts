import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadTypeDefs } from '../../src/graphql/schema.ts';

const root = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);

/** The small Relay app's documents (test/fixtures/relay-app). */
export const RELAY_APP = join(root, 'test/fixtures/relay-app');

export interface RelayCompilation {
  /** The compiler's exit status: 0 only when every document compiled. */
  readonly status: number | null;
  /** What it printed (stdout and stderr). */
  readonly output: string;
  /** The directory of the generated artifacts (`<name>.graphql.js`, CommonJS). */
  readonly artifacts: string;
  /** Removes the temporary directory (sources, config, artifacts). */
  remove(): void;
}

/**
 * Compiles the fixture app against `schema` (SDL text; default: the API the gateway serves, which
 * is schema/ without the declared model's vocabulary) with the relay-compiler package's own binary
 * (shipped inside the npm package: nothing is downloaded), in a fresh temporary directory.
 */
export function compileRelayApp(schema = loadTypeDefs()): RelayCompilation {
  const binary = require('relay-compiler') as string | null;
  if (binary === null) throw new Error(`relay-compiler has no binary for ${process.platform} ${process.arch}`);
  const dir = mkdtempSync(join(tmpdir(), 'shardql-relay-'));
  cpSync(RELAY_APP, join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'schema.graphql'), schema);
  mkdirSync(join(dir, '__generated__'));
  writeFileSync(
    join(dir, 'relay.config.json'),
    JSON.stringify({ src: './src', schema: './schema.graphql', artifactDirectory: './__generated__', language: 'javascript', eagerEsModules: false }),
  );
  const run = spawnSync(binary, ['--noWatchman', '--output', 'verbose', join(dir, 'relay.config.json')], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  return {
    status: run.status,
    output: `${run.stdout}${run.stderr}${run.error ? String(run.error) : ''}`,
    artifacts: join(dir, '__generated__'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A generated operation: its name and the query text the Relay runtime would send. */
export interface RelayOperation {
  readonly name: string;
  readonly kind: 'query' | 'mutation' | 'subscription';
  readonly text: string;
}

/** The operations among a compilation's artifacts, by name. */
export function relayOperations(c: RelayCompilation): Map<string, RelayOperation> {
  const out = new Map<string, RelayOperation>();
  for (const file of readdirSync(c.artifacts)) {
    if (!file.endsWith('.graphql.js')) continue;
    const node = require(join(c.artifacts, file)) as { kind: string; params?: { name: string; operationKind: RelayOperation['kind']; text: string } };
    if (node.kind === 'Request' && node.params) out.set(node.params.name, { name: node.params.name, kind: node.params.operationKind, text: node.params.text });
  }
  return out;
}
