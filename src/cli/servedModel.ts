/**
 * Chooses the model the process serves and reads it, before any other module of the CLI is
 * evaluated: src/cli.ts imports this first, so the gateway, the worker and every command derive
 * their tables, resolvers, cost and DDL from that model. The model is a directory of model SDL:
 * `--model <dir>` anywhere on the command line, else SHARDQL_MODEL, else the project's schema/.
 * A wrong model is refused here, at start: every problem with its file:line:column on stderr,
 * exit 1, no stack trace.
 *
 *   shardql serve --model examples/qa      same as SHARDQL_MODEL=examples/qa shardql serve
 */
import { resolve } from 'node:path';
import { chooseModel, DEFAULT_MODEL_DIR } from '../core/model/served.ts';
import { ModelError } from '../core/model/parseModel.ts';
import { modelFlag, ModelFlagError } from './modelFlag.ts';

/** The command line without `--model`: what src/cli.ts dispatches on. */
export let CLI_ARGS: readonly string[] = [];

try {
  const flag = modelFlag(process.argv.slice(2));
  CLI_ARGS = flag.rest;
  // A directory given is the operator's, relative to where they run the command; the default is the project's.
  const given = flag.dir ?? process.env.SHARDQL_MODEL?.trim();
  const dir = given ? resolve(given) : DEFAULT_MODEL_DIR;
  // The processes this one starts (dev's gateway and worker, a pool's workers) serve the same model.
  if (flag.dir !== undefined) process.env.SHARDQL_MODEL = dir;
  chooseModel(dir);
} catch (err) {
  if (err instanceof ModelFlagError) {
    process.stderr.write(`shardql: ${err.message}\n`);
    process.exit(2);
  }
  const from = process.argv.some((a) => a === '--model' || a.startsWith('--model=')) ? '--model' : 'SHARDQL_MODEL';
  const text = err instanceof ModelError ? err.message : `cannot read the model (${from}): ${err instanceof Error ? err.message : String(err)}`;
  process.stderr.write(`shardql: ${text}\n`);
  process.exit(1);
}
