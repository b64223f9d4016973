/**
 * Chooses the model the process serves (SHARDQL_MODEL: a directory of model SDL, default the
 * project's schema/) and reads it, before any other module of the CLI is evaluated: src/cli.ts
 * imports this first, so the gateway, the worker and every command derive their tables, resolvers,
 * cost and DDL from that model. A wrong model is refused here, at start: every problem with its
 * file:line:column on stderr, exit 1, no stack trace.
 */
import { resolve } from 'node:path';
import { chooseModel, DEFAULT_MODEL_DIR } from '../core/model/served.ts';
import { ModelError } from '../core/model/parseModel.ts';

try {
  // A directory given is the operator's, relative to where they run the command; the default is the project's.
  const dir = process.env.SHARDQL_MODEL?.trim();
  chooseModel(dir ? resolve(dir) : DEFAULT_MODEL_DIR);
} catch (err) {
  const text = err instanceof ModelError ? err.message : `cannot read the model (SHARDQL_MODEL): ${err instanceof Error ? err.message : String(err)}`;
  process.stderr.write(`shardql: ${text}\n`);
  process.exit(1);
}
