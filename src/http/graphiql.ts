/**
 * The GraphiQL explorer, served by the gateway itself from npm package assets, so it works with no
 * internet (Apollo's default landing page loads its code from a CDN).
 *
 * Packaging: the UMD builds shipped inside the npm packages, loaded with plain <script> tags, no
 * bundler, no CDN:
 *   - react@18      umd/react.production.min.js        (global `React`)
 *   - react-dom@18  umd/react-dom.production.min.js    (global `ReactDOM`)
 *   - graphiql@3    graphiql.min.js + graphiql.min.css (global `GraphiQL`; fonts inlined as data: URLs)
 * plus a small start-up script of our own (`graphiql-init.js`).
 *
 * The page carries no inline script: its settings travel in a `<script type="application/json">`
 * block (data, never executed) that `graphiql-init.js` reads. So the page runs under a strict
 * Content-Security-Policy such as {@link GRAPHIQL_CONTENT_SECURITY_POLICY} (`script-src 'self'`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { escapeHtml, jsonForScript, staticAsset, type StaticAsset } from './html.ts';

export type { StaticAsset };

export interface GraphiqlPageOptions {
  /** URL path of the GraphQL endpoint, e.g. '/graphql'. */
  readonly endpoint: string;
  /** URL prefix under which assets are served, e.g. '/graphiql/assets'. */
  readonly assetPrefix: string;
  /** Query shown in the editor when the page opens. */
  readonly defaultQuery?: string;
  /** Headers pre-filled in the headers editor, e.g. { Authorization: 'Bearer …' } (development only). */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  readonly title?: string;
}

/**
 * A Content-Security-Policy the page works under (checked by the browser test). The server that
 * serves the page may send it as a header; nothing here sets headers. Styles need 'unsafe-inline'
 * because the page has a tiny <style> block and GraphiQL's UI libraries inject <style> elements.
 */
export const GRAPHIQL_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Reads the start-up script's settings; written by {@link graphiqlPage}, read by `graphiql-init.js`. */
const CONFIG_ELEMENT_ID = 'graphiql-config';

interface PageConfig {
  readonly endpoint: string;
  readonly defaultQuery?: string;
  /** The headers editor contents (a JSON object as text), or absent. */
  readonly headers?: string;
}

/**
 * Our start-up script, served as the asset `graphiql-init.js` (plain ES2017, runs as is in the
 * browser). The fetcher gets an absolute URL so a relative endpoint works under any page path.
 *
 * Headers: `defaultHeaders` fills the headers editor of the first and every new tab, and again
 * after a reload (checked by the browser test): headers are not persisted in localStorage
 * (shouldPersistHeaders: false, so a development token is never written to disk). The `headers`
 * prop is not used: it would overwrite whatever tab is active on every load.
 */
const INIT_SCRIPT = `/* GraphiQL start-up: reads settings from #${CONFIG_ELEMENT_ID}, renders into #graphiql. */
(function () {
  'use strict';
  var root = document.getElementById('graphiql');
  function fail(message) {
    root.textContent = 'GraphiQL failed to start: ' + message;
    root.className = 'graphiql-start-error';
  }
  try {
    if (typeof window.React === 'undefined' || typeof window.ReactDOM === 'undefined' || typeof window.GraphiQL === 'undefined') {
      fail('the React / GraphiQL scripts did not load.');
      return;
    }
    var config = JSON.parse(document.getElementById('${CONFIG_ELEMENT_ID}').textContent || '{}');
    var props = {
      fetcher: window.GraphiQL.createFetcher({ url: new URL(config.endpoint, window.location.href).href }),
      shouldPersistHeaders: false,
      isHeadersEditorEnabled: true
    };
    if (typeof config.defaultQuery === 'string') props.defaultQuery = config.defaultQuery;
    if (typeof config.headers === 'string') {
      props.defaultHeaders = config.headers;
      props.defaultEditorToolsVisibility = 'headers';
    }
    window.ReactDOM.createRoot(root).render(window.React.createElement(window.GraphiQL, props));
  } catch (err) {
    fail(err && err.message ? err.message : String(err));
  }
})();
`;

type AssetSource =
  | { readonly kind: 'package'; readonly pkg: string; readonly file: string; readonly contentType: string }
  | { readonly kind: 'inline'; readonly text: string; readonly contentType: string };

/** The allow-list: the only names {@link graphiqlAsset} serves. A Map, so no prototype keys match. */
const ASSET_SOURCES: ReadonlyMap<string, AssetSource> = new Map<string, AssetSource>([
  ['react.production.min.js', { kind: 'package', pkg: 'react', file: 'umd/react.production.min.js', contentType: JS }],
  ['react-dom.production.min.js', { kind: 'package', pkg: 'react-dom', file: 'umd/react-dom.production.min.js', contentType: JS }],
  ['graphiql.min.js', { kind: 'package', pkg: 'graphiql', file: 'graphiql.min.js', contentType: JS }],
  ['graphiql.min.css', { kind: 'package', pkg: 'graphiql', file: 'graphiql.min.css', contentType: CSS }],
  // graphiql.min.js ends with `//# sourceMappingURL=index.umd.js.map` (only fetched by devtools).
  ['index.umd.js.map', { kind: 'package', pkg: 'graphiql', file: 'graphiql.min.js.map', contentType: JSON_TYPE }],
  ['graphiql-init.js', { kind: 'inline', text: INIT_SCRIPT, contentType: JS }],
]);

/** Scripts in load order, then the stylesheet; all must be in {@link ASSET_SOURCES}. */
const PAGE_SCRIPTS = ['react.production.min.js', 'react-dom.production.min.js', 'graphiql.min.js', 'graphiql-init.js'] as const;
const PAGE_STYLESHEET = 'graphiql.min.css';

const requireFromHere = createRequire(import.meta.url);
const assetCache = new Map<string, StaticAsset>();

function packageDir(pkg: string): string {
  // Resolve package.json (not a subpath): the packages' `exports` maps do not expose the UMD files.
  return dirname(requireFromHere.resolve(`${pkg}/package.json`));
}

function loadAsset(source: AssetSource): StaticAsset {
  const body = source.kind === 'inline' ? Buffer.from(source.text, 'utf8') : readFileSync(join(packageDir(source.pkg), source.file));
  return staticAsset(body, source.contentType);
}

/**
 * Returns the asset for a name under assetPrefix (e.g. 'graphiql.min.js'), or undefined. Only a
 * fixed allow-list of files is served; no path traversal possible. Assets are read once and cached
 * in memory. Throws only if an allow-listed file is missing from node_modules (a broken install).
 */
export function graphiqlAsset(name: string): StaticAsset | undefined {
  const cached = assetCache.get(name);
  if (cached !== undefined) return cached;
  const source = ASSET_SOURCES.get(name);
  if (source === undefined) return undefined;
  const asset = loadAsset(source);
  assetCache.set(name, asset);
  return asset;
}

function assetUrl(prefix: string, name: string): string {
  return `${prefix.replace(/\/+$/, '')}/${name}`;
}

/** The GraphiQL page: a full HTML document loading only assets served by {@link graphiqlAsset}. */
export function graphiqlPage(opts: GraphiqlPageOptions): string {
  const config: PageConfig = {
    endpoint: opts.endpoint,
    ...(opts.defaultQuery !== undefined ? { defaultQuery: opts.defaultQuery } : {}),
    ...(opts.defaultHeaders !== undefined && Object.keys(opts.defaultHeaders).length > 0
      ? { headers: JSON.stringify(opts.defaultHeaders, null, 2) }
      : {}),
  };
  const title = escapeHtml(opts.title ?? 'GraphiQL');
  const scripts = PAGE_SCRIPTS.map((name) => `    <script src="${escapeHtml(assetUrl(opts.assetPrefix, name))}"></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>${title}</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${escapeHtml(assetUrl(opts.assetPrefix, PAGE_STYLESHEET))}">
    <style>html, body, #graphiql { height: 100%; margin: 0; } .graphiql-start-error { padding: 1rem; font-family: sans-serif; }</style>
  </head>
  <body>
    <div id="graphiql">Loading GraphiQL…</div>
    <noscript>GraphiQL needs JavaScript.</noscript>
    <script type="application/json" id="${CONFIG_ELEMENT_ID}">${jsonForScript(config)}</script>
${scripts}
  </body>
</html>
`;
}
