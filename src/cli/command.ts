/**
 * The little framework under `shardql`: a command is its name, its help and its options (fed to
 * `node:util` parseArgs), and a `run` that gets parsed arguments and a context. Usage mistakes are
 * `UsageError` (exit 2, with the command's usage); expected failures are `CliError` (exit 1, one line).
 */
import { parseArgs } from 'node:util';

export type Env = Readonly<Record<string, string | undefined>>;

/** Everything a command may touch of the process: passed down, never read from globals below cli.ts. */
export interface CliContext {
  readonly env: Env;
  /** The project root (where package.json is). */
  readonly root: string;
  /** The local stack's folder: SHARDQL_STACK_DIR, else <root>/.stack. */
  readonly stackDir: string;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  /** Resolves with the first SIGINT or SIGTERM received from now on. */
  waitForSignal(): Promise<NodeJS.Signals>;
}

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** Placeholder shown in help for a string option, e.g. 'N'. */
  readonly value?: string;
  readonly help: string;
}

export interface Command {
  /** 'stack up', 'provision', … */
  readonly name: string;
  /** One line, for the command list. */
  readonly summary: string;
  /** Positional arguments as shown in the usage line, e.g. '<userId|username>'. */
  readonly args?: string;
  readonly positionals?: { readonly min: number; readonly max: number };
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** Paragraphs after the option list. */
  readonly details?: string;
  run(args: ParsedArgs, ctx: CliContext): Promise<number | void>;
}

/** A mistake in how the command was called: printed with the usage, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An expected failure with a message for the operator: printed as one line, exit 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

export class ParsedArgs {
  readonly #values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];

  constructor(values: Record<string, string | boolean | undefined>, positionals: readonly string[]) {
    this.#values = values;
    this.positionals = positionals;
  }

  flag(name: string): boolean {
    return this.#values[name] === true;
  }

  string(name: string): string | undefined {
    const v = this.#values[name];
    return typeof v === 'string' ? v : undefined;
  }

  has(name: string): boolean {
    return this.#values[name] !== undefined;
  }

  /** An integer option in min..max, or `fallback` when absent. */
  int(name: string, fallback: number, min: number, max: number): number;
  int(name: string, fallback: undefined, min: number, max: number): number | undefined;
  int(name: string, fallback: number | undefined, min: number, max: number): number | undefined {
    const text = this.string(name);
    if (text === undefined) return fallback;
    if (!/^[0-9]+$/.test(text) || Number(text) < min || Number(text) > max) {
      throw new UsageError(`--${name} must be an integer in ${min}..${max}, got ${JSON.stringify(text)}`);
    }
    return Number(text);
  }
}

const HELP_OPTION: OptionSpec = { type: 'boolean', short: 'h', help: 'Show this help' };

/** Parses argv for one command; `--help` is answered by the caller (returns null). */
export function parseCommandArgs(cmd: Command, argv: readonly string[]): ParsedArgs | null {
  const specs = { ...cmd.options, help: HELP_OPTION };
  const options = Object.fromEntries(
    Object.entries(specs).map(([name, s]) => [name, s.short === undefined ? { type: s.type } : { type: s.type, short: s.short }]),
  );
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs throws TypeErrors with codes ERR_PARSE_ARGS_*; their messages are clear enough.
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(err.message.replace(/\. To specify a positional argument.*$/s, ''));
    }
    throw err;
  }
  if (parsed.values.help === true) return null;
  const { min, max } = cmd.positionals ?? { min: 0, max: 0 };
  const n = parsed.positionals.length;
  if (n < min) throw new UsageError(`missing argument ${cmd.args ?? ''}`.trimEnd());
  if (n > max) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[max])}`);
  return new ParsedArgs(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
}

function optionLabel(name: string, s: OptionSpec): string {
  const long = s.type === 'string' ? `--${name} ${s.value ?? 'VALUE'}` : `--${name}`;
  return s.short === undefined ? `    ${long}` : `-${s.short}, ${long}`;
}

export function usageLine(cmd: Command): string {
  const opts = Object.entries(cmd.options ?? {}).map(([name, s]) => (s.type === 'string' ? `[--${name} ${s.value ?? 'VALUE'}]` : `[--${name}]`));
  return ['shardql', cmd.name, cmd.args, ...opts].filter((x) => x !== undefined && x !== '').join(' ');
}

export function commandHelp(cmd: Command): string {
  const specs = { ...cmd.options, help: HELP_OPTION };
  const labels = Object.entries(specs).map(([name, s]) => [optionLabel(name, s), s.help] as const);
  const width = Math.max(...labels.map(([l]) => l.length));
  const lines = [`Usage: ${usageLine(cmd)}`, '', cmd.summary, '', 'Options:', ...labels.map(([l, h]) => `  ${l.padEnd(width)}  ${h}`)];
  if (cmd.details) lines.push('', cmd.details.trim());
  return `${lines.join('\n')}\n`;
}

/** `stack` → the commands of that group, for `shardql stack --help`. */
export function groupHelp(group: string, commands: readonly Command[]): string {
  const members = commands.filter((c) => c.name.startsWith(`${group} `));
  const width = Math.max(...members.map((c) => c.name.length));
  return [
    `Usage: shardql ${group} <command> [options]`,
    '',
    'Commands:',
    ...members.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Run 'shardql ${group} <command> --help' for a command's options.`,
    '',
  ].join('\n');
}

export function mainHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: shardql <command> [options]',
    '',
    'GraphQL gateway over Pinterest-style sharded MySQL: local stack, topology, provisioning, gateway.',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'shardql <command> --help' for a command's options. Every command takes --model <dir>: the",
    'directory of model SDL it serves (default SHARDQL_MODEL, else the project\'s schema/).',
    'Configuration comes from SHARDQL_* variables (see src/config.ts); a local stack (SHARDQL_STACK_DIR,',
    'default <project>/.stack) supplies defaults. SHARDQL_DEBUG=1 prints stack traces on errors.',
    '',
  ].join('\n');
}
