/** `shardql schema print`: the served API's SDL as client tools read it (src/graphql/clientSchema.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { servedModelDir } from '../core/model/served.ts';
import { CLIENT_SCHEMA_FILE, printClientSchema } from '../graphql/clientSchema.ts';
import { loadTypeDefs } from '../graphql/schema.ts';
import { CliError, UsageError, type Command } from './command.ts';

const print: Command = {
  name: 'schema print',
  summary: "Print the API's SDL as clients see it (introspection's answer, no model directives)",
  options: {
    out: { type: 'string', value: 'FILE', help: 'Write it to FILE instead of stdout' },
    check: { type: 'string', value: 'FILE', help: 'Write nothing; exit 1 if FILE differs from it (for CI)' },
  },
  details: [
    'The file to point relay-compiler, GraphQL Code Generator, graphql-schema-linter or graphql-js',
    "buildSchema at: the model's declaration (schema/*.graphql) carries the model's directives, which",
    "those tools refuse. Printed from the model this command serves (--model <dir>, else SHARDQL_MODEL,",
    `else schema/); the project's is kept in ${CLIENT_SCHEMA_FILE} (\`npm run model\` rewrites it).`,
  ].join('\n'),
  async run(args, ctx) {
    const sdl = printClientSchema(loadTypeDefs());
    const out = args.string('out');
    const check = args.string('check');
    if (out !== undefined && check !== undefined) throw new UsageError('--out and --check exclude each other');
    if (check !== undefined) {
      let kept: string;
      try {
        kept = readFileSync(resolve(check), 'utf8');
      } catch (err) {
        throw new CliError(`cannot read ${check}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (kept !== sdl) throw new CliError(`${check} is not the API of the model in ${servedModelDir()}: write it with \`shardql schema print --out ${check}\``);
      ctx.stdout.write(`${check}: current\n`);
      return;
    }
    if (out !== undefined) writeFileSync(resolve(out), sdl);
    else ctx.stdout.write(sdl);
  },
};

export const schemaCommands: readonly Command[] = [print];
