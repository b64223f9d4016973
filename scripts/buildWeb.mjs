/**
 * Builds the web app (web/) into dist/web/:
 *
 *   dist/web/schema.graphql             the API the gateway serves (`shardql schema print`), the compiler's input
 *   dist/web/persisted-documents.json   Relay's manifest: { "<sha256 of the text>": "<operation text>" }
 *   dist/web/assets/app.js, app.css     the bundle the gateway serves under /app/assets/
 *
 * Three steps, each failing the build:
 *   1. relay-compiler (the npm package's own binary, web/relay.config.json) checks every `graphql`
 *      document of web/src against the served schema, writes the artifacts beside the components
 *      (web/src/__generated__, not committed) and the manifest. Its artifacts carry only the
 *      operation's ID (`params.text` is null), so the bundle holds no document text at all.
 *   2. tsc checks web/ against the artifacts' types (what a component reads is what its fragment selects).
 *   3. esbuild bundles web/src/main.tsx. Its one plugin turns each graphql`…` tag into an import of
 *      the artifact named after the tag's operation or fragment (what babel-plugin-relay does):
 *      the project has no Babel, Relay forbids interpolation inside the tags (so a tag's text ends at
 *      the next backtick), and the compiler has already refused any tag it could not compile, so a
 *      tag whose artifact is missing fails the bundle too.
 *
 *   node scripts/buildWeb.mjs              build
 *   node scripts/buildWeb.mjs --if-stale   build only if web/, schema/ or the packages changed since
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** Where the built app lives, relative to the repository root. */
export const WEB_OUT = 'dist/web';
/** The manifest's file name inside {@link WEB_OUT}. */
export const MANIFEST = 'persisted-documents.json';

/** The built app's absolute directory. */
export function webDir(root = ROOT) {
  return join(root, WEB_OUT);
}

function newest(path, found = 0) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return found;
  found = Math.max(found, stat.mtimeMs);
  if (!stat.isDirectory()) return found;
  for (const entry of readdirSync(path)) if (entry !== '__generated__') found = newest(join(path, entry), found);
  return found;
}

/** Whether the built app is missing or older than its sources (web/, schema/, the lock of the packages). */
export function isWebStale(root = ROOT) {
  const built = statSync(join(webDir(root), 'assets', 'app.js'), { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return true;
  return Math.max(newest(join(root, 'web')), newest(join(root, 'schema')), newest(join(root, 'package-lock.json'))) > built;
}

/** A failed step: its message is what the compiler or the bundler said. */
export class WebBuildError extends Error {}

/**
 * Compiles the documents of `web` (a directory holding relay.config.json and src/; its config reads
 * and writes ../dist/web) against the schema this repository serves. Returns the manifest's path.
 * Throws WebBuildError with the compiler's output when a document does not match the schema.
 */
export async function compileDocuments(web = join(ROOT, 'web')) {
  const out = join(web, '..', WEB_OUT);
  mkdirSync(out, { recursive: true });
  const { tsImport } = await import('tsx/esm/api');
  const { loadTypeDefs } = await tsImport(join(ROOT, 'src/graphql/schema.ts'), import.meta.url);
  const { printClientSchema } = await tsImport(join(ROOT, 'src/graphql/clientSchema.ts'), import.meta.url);
  writeFileSync(join(out, 'schema.graphql'), printClientSchema(loadTypeDefs()));
  // The compiler adds to the file it finds: a fresh one holds exactly today's operations.
  writeFileSync(join(out, MANIFEST), '{}\n');
  rmSync(join(web, 'src', '__generated__'), { recursive: true, force: true });
  mkdirSync(join(web, 'src', '__generated__'));
  const binary = require('relay-compiler');
  if (binary === null) throw new WebBuildError(`relay-compiler has no binary for ${process.platform} ${process.arch}`);
  const run = spawnSync(binary, ['--noWatchman', join(web, 'relay.config.json')], { cwd: web, encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) {
    throw new WebBuildError(`relay-compiler refused the documents of ${relative(ROOT, web) || '.'}/src:\n${run.stdout}${run.stderr}${run.error ? String(run.error) : ''}`);
  }
  return join(out, MANIFEST);
}

/**
 * graphql`…` → an import of the artifact of the tag's first definition (see the header), in the
 * app's own TypeScript files under `src` (never the artifacts, never a package).
 */
export function relayTagPlugin(src, artifacts) {
  return {
    name: 'relay-tags',
    setup(build) {
      build.onLoad({ filter: /\.tsx?$/ }, (args) => {
        if (!args.path.startsWith(src) || args.path.startsWith(artifacts)) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('graphql`')) return undefined;
        const imports = [];
        const errors = [];
        const contents = source.replace(/\bgraphql`([^`]*)`/g, (_tag, text) => {
          const name = /^\s*(?:query|mutation|subscription|fragment)\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(text)?.[1];
          if (name === undefined) {
            errors.push({ text: `Expected a graphql tag to start with a named operation or fragment, got ${JSON.stringify(text.trim().slice(0, 40))}` });
            return 'undefined';
          }
          const local = `__relay_${name}`;
          let from = relative(dirname(args.path), join(artifacts, `${name}.graphql.ts`)).replaceAll('\\', '/');
          if (!from.startsWith('.')) from = `./${from}`;
          imports.push(`import ${local} from ${JSON.stringify(from)};`);
          return local;
        });
        return { contents: `${[...new Set(imports)].join('\n')}\n${contents}`, loader: args.path.endsWith('x') ? 'tsx' : 'ts', errors };
      });
    },
  };
}

/**
 * Type-checks web/ (web/tsconfig.json) with the artifacts' types: a component reading a field its
 * fragment does not select fails here. Throws WebBuildError with tsc's messages.
 */
export function typecheckWeb(web = join(ROOT, 'web')) {
  const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(web, 'tsconfig.json')], { encoding: 'utf8', timeout: 300_000 });
  if (run.status !== 0) throw new WebBuildError(`tsc found type errors in web/:\n${run.stdout}${run.stderr}${run.error ? String(run.error) : ''}`);
}

/** Builds dist/web (see the header). Throws WebBuildError when a step fails. */
export async function buildWeb(root = ROOT) {
  const web = join(root, 'web');
  await compileDocuments(web);
  typecheckWeb(web);
  const { build } = require('esbuild');
  const assets = join(webDir(root), 'assets');
  const tmp = `${assets}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: join(web, 'src', 'main.tsx') },
    outdir: tmp,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2020',
    jsx: 'automatic',
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [relayTagPlugin(join(web, 'src'), join(web, 'src', '__generated__'))],
    logLevel: 'silent',
  }).catch((err) => {
    throw new WebBuildError(`esbuild could not bundle the web app:\n${err.message}`);
  });
  if (result.errors.length > 0) throw new WebBuildError(result.errors.map((e) => e.text).join('\n'));
  // Whole directory swapped at once: a gateway reading assets never finds half a build.
  rmSync(assets, { recursive: true, force: true });
  renameSync(tmp, assets);
  return webDir(root);
}

/** The built app's directory, built first if stale. */
export async function ensureWebBuilt(root = ROOT) {
  return isWebStale(root) ? buildWeb(root) : webDir(root);
}

/** Builds the app and says how long it took; a failed build says why and ends the process (exit 1). */
export async function buildWebOrExit() {
  try {
    const t0 = Date.now();
    await buildWeb();
    console.log(`built ${WEB_OUT} in ${Date.now() - t0} ms`);
  } catch (err) {
    console.error(`shardql: the build of web/ failed:\n${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes('--if-stale') || isWebStale()) await buildWebOrExit();
}
