/**
 * `npm run bench` entry (see bench/main.ts for what it does and its options).
 *
 * The benchmark measures the production configuration, so the process runs with
 * NODE_ENV=production (unless set otherwise): graphql-js then skips its development-only
 * cross-realm checks (about 40% of execute() time on a profile query), for the gateway and the
 * baselines alike. It must be set before graphql-js is loaded, hence this two-step start.
 */
process.env.NODE_ENV ??= 'production';
await import('./main.ts');
