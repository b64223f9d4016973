/** The CLI's global `--model <dir>` option, taken out of the command line before a command parses it (pure). */
/** `--model <dir>` or `--model=<dir>` in `argv`, and the arguments without it (a command never sees it). */
export function modelFlag(argv: readonly string[]): { readonly dir: string | undefined; readonly rest: readonly string[] } {
  const rest: string[] = [];
  let dir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === '--model' || a.startsWith('--model=')) {
      const value = a === '--model' ? argv[++i] : a.slice('--model='.length);
      if (value === undefined || value.trim() === '' || value.startsWith('-')) throw new ModelFlagError('--model needs a directory of model SDL, e.g. --model examples/qa');
      if (dir !== undefined && dir !== value) throw new ModelFlagError(`--model given twice (${dir}, ${value}); a process serves one model`);
      dir = value;
      continue;
    }
    rest.push(a);
  }
  return { dir, rest };
}

/** `--model` without a directory, or given twice with different ones: a usage mistake (exit 2). */
export class ModelFlagError extends Error {
  override readonly name = 'ModelFlagError';
}
