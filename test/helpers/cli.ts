/**
 * How a test starts `shardql` in a process of its own: node on the build (dist/cli.mjs, rebuilt
 * here first if a source file is newer, as bin/shardql does), so a test runs what operators run.
 */
import { ensureBuilt } from '../../scripts/build.mjs';

let built: string | undefined;

/** node's arguments for `shardql <args>`: the built CLI, with stack traces mapped to src/. */
export function cliArgv(...args: readonly string[]): string[] {
  built ??= ensureBuilt();
  return ['--enable-source-maps', built, ...args];
}
