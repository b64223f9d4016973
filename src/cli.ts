/**
 * `shardql`: the command line of the gateway. The only module of the CLI that reads the process
 * (argv, environment, streams, signals); the commands in src/cli/ get all of it through a context.
 *
 *   shardql stack up|down|status     the local MariaDB/Redis/memcached/etcd stack
 *   shardql topology <command>       the shard map in etcd: publish, show, diff, open-range, move, promote, fence
 *   shardql provision                create the shard databases
 *   shardql token <user>             mint a viewer token
 *   shardql serve | dev              run the gateway (dev: everything for a fresh machine first, and a worker)
 *   shardql worker | jobs            run background jobs; the queues' depth, failures and lag
 *   shardql import --from URL        move an unsharded MySQL database into the shards (as jobs)
 *   shardql schema print             the API's SDL as client tools read it
 *
 * Every command takes `--model <dir>`: the directory of model SDL it serves (default SHARDQL_MODEL, else schema/).
 *
 * Exit status: 0 success, 1 failure (one line on stderr; SHARDQL_DEBUG=1 adds the stack), 2 usage.
 */
// First: the model every other module derives from (--model or SHARDQL_MODEL), chosen and read before they load.
import { CLI_ARGS } from './cli/servedModel.ts';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { CliError, UsageError, commandHelp, groupHelp, mainHelp, parseCommandArgs, usageLine, type CliContext, type Command } from './cli/command.ts';
import { dataCommands } from './cli/dataCommands.ts';
import { importCommands } from './cli/importCommands.ts';
import { repairCommands } from './cli/repairCommands.ts';
import { schemaCommands } from './cli/schemaCommands.ts';
import { serverCommands } from './cli/serverCommands.ts';
import { stackCommands } from './cli/stackCommands.ts';
import { topologyCommands } from './cli/topologyCommands.ts';
import { topologyOpsCommands } from './cli/topologyOpsCommands.ts';
import { workerCommands } from './cli/workerCommands.ts';
import { StackError } from './stack/errors.ts';
import { ModelError } from './core/model/parseModel.ts';
import { PROJECT_ROOT } from './core/projectRoot.ts';

const COMMANDS: readonly Command[] = [...stackCommands, ...topologyCommands, ...topologyOpsCommands, ...dataCommands, ...importCommands, ...repairCommands, ...schemaCommands, ...serverCommands, ...workerCommands];

const root = PROJECT_ROOT;

/** One line for the operator: the message, what caused it, and where a log is. */
function describeError(err: unknown): { line: string; more: boolean } {
  if (!(err instanceof Error)) return { line: String(err), more: false };
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 4; e = e.cause) {
    const text = e.message || (e instanceof AggregateError ? e.errors.map((x) => (x instanceof Error ? x.message : String(x))).join('; ') : '') || String((e as NodeJS.ErrnoException).code ?? e.name);
    // gRPC (etcd) messages end in an empty "Resolution note:".
    const clean = text.replace(/\s*Resolution note:\s*$/, '').trim();
    if (clean !== '' && !parts.some((p) => p.includes(clean))) parts.push(clean);
  }
  let text = parts.length > 0 ? parts.join(': ') : err.name;
  if (err instanceof StackError && err.logFile !== undefined && !text.includes(err.logFile)) text += ` (log: ${err.logFile})`;
  const [first = '', ...rest] = text.split('\n');
  return { line: first, more: rest.some((l) => l.trim() !== '') };
}

function usageError(ctx: CliContext, cmd: Command, message: string): number {
  ctx.stderr.write(`shardql ${cmd.name}: ${message}\nUsage: ${usageLine(cmd)}\nRun 'shardql ${cmd.name} --help' for details.\n`);
  return 2;
}

async function main(argv: readonly string[], ctx: CliContext): Promise<number> {
  const [first, second] = argv;
  if (first === undefined) {
    ctx.stderr.write(mainHelp(COMMANDS));
    return 2;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    if (first === 'help' && argv.length > 1) return main([...argv.slice(1), '--help'], ctx);
    ctx.stdout.write(mainHelp(COMMANDS));
    return 0;
  }
  if (first === '--version' || first === '-V') {
    ctx.stdout.write(`shardql ${(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version}\n`);
    return 0;
  }

  const pair = COMMANDS.find((c) => c.name === `${first} ${second}`);
  const cmd = pair ?? COMMANDS.find((c) => c.name === first);
  if (cmd === undefined) {
    if (COMMANDS.some((c) => c.name.startsWith(`${first} `))) {
      if (second === '--help' || second === '-h') {
        ctx.stdout.write(groupHelp(first, COMMANDS));
        return 0;
      }
      const problem = second === undefined ? `'shardql ${first}' needs a command` : `unknown command '${first} ${second}'`;
      ctx.stderr.write(`shardql: ${problem}\n\n${groupHelp(first, COMMANDS)}`);
      return 2;
    }
    ctx.stderr.write(`shardql: unknown command '${first}'\n\n${mainHelp(COMMANDS)}`);
    return 2;
  }

  try {
    const args = parseCommandArgs(cmd, argv.slice(pair ? 2 : 1));
    if (args === null) {
      ctx.stdout.write(commandHelp(cmd));
      return 0;
    }
    return (await cmd.run(args, ctx)) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) return usageError(ctx, cmd, err.message);
    // Every problem of a refused model, one a line with its file:line:column (as at start).
    if (err instanceof ModelError) {
      ctx.stderr.write(`shardql ${cmd.name}: ${err.message}\n`);
      return 1;
    }
    if (ctx.env.SHARDQL_DEBUG === '1') {
      ctx.stderr.write(`shardql ${cmd.name}: ${inspect(err, { depth: 6 })}\n`);
      return 1;
    }
    const { line, more } = describeError(err);
    const hint = more || !(err instanceof CliError) ? ' (SHARDQL_DEBUG=1 for details)' : '';
    ctx.stderr.write(`shardql ${cmd.name}: ${line}${hint}\n`);
    return 1;
  }
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    const first = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', first);
      process.off('SIGTERM', first);
      // A second signal while stopping: give up at once.
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      resolveSignal(signal);
    };
    process.on('SIGINT', first);
    process.on('SIGTERM', first);
  });
}

// `shardql topology show | head` closes our stdout early: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

const ctx: CliContext = {
  env: process.env,
  root,
  stackDir: resolve(process.env.SHARDQL_STACK_DIR ?? join(root, '.stack')),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  waitForSignal,
};

// Exit explicitly: a client library keeping a handle open must not keep a finished command alive.
// (stdout and stderr writes are synchronous on Linux for files, pipes and terminals.)
process.exit(await main(CLI_ARGS, ctx));
