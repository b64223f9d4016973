/**
 * `npm run bench` entry (see bench/main.ts for what it does and its options).
 *
 * The benchmark measures the production configuration:
 * - the process runs with NODE_ENV=production (unless set otherwise): graphql-js then skips its
 *   development-only cross-realm checks (about 40% of execute() time on a profile query), for the
 *   gateway and the baselines alike. It must be set before graphql-js is loaded;
 * - the systems run bundled by esbuild as the CLI is (scripts/build.mjs `buildBench`: dist/bench.mjs),
 *   not through tsx's transform, whose kept function names cost every closure a call.
 * Hence this two-step start. The CPU profile maps the bundle back to the project's files through its
 * source map (bench/profile.ts).
 */
import { pathToFileURL } from 'node:url';
import { buildBench } from '../scripts/build.mjs';

process.env.NODE_ENV ??= 'production';
await import(pathToFileURL(buildBench()).href);
