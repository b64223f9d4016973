/**
 * The web app (web/, built by scripts/buildWeb.mjs into a directory such as dist/web): its page
 * and bundle, served by the gateway under /app, and the manifest of its persisted operations.
 *
 *   <dir>/assets/app.js, app.css, *.map   read once at start, served from memory by name only
 *   <dir>/persisted-documents.json        Relay's manifest (see trustedDocuments.ts)
 *
 * The page is generated here, not built: its settings (the endpoint, the base path and, in
 * development only, the demo user's token; where configured, the identity provider to sign in with) travel in a `<script type="application/json">` block,
 * so the page carries no inline script and runs under {@link webAppContentSecurityPolicy}.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { escapeHtml, jsonForScript, staticAsset, type StaticAsset } from './html.ts';

/** Where the gateway serves the app. */
export const WEB_APP_BASE = '/app';
/** The manifest's name in the built app's directory (scripts/buildWeb.mjs writes it). */
export const WEB_APP_MANIFEST = 'persisted-documents.json';
/** The element the page's settings are in; web/src/config.ts reads it. */
const CONFIG_ELEMENT_ID = 'shardql-app-config';

/**
 * The identity provider the page signs in with (authorization code flow with PKCE, a public
 * client): the page goes to `authorizationUrl` and posts the code to `tokenUrl`.
 */
export interface WebSignIn {
  readonly name: string;
  readonly clientId: string;
  readonly authorizationUrl: string;
  readonly tokenUrl: string;
  readonly scope: string;
  /** Sent as `audience` to the authorization endpoint (providers such as Auth0 need it for a JWT). */
  readonly audience?: string | undefined;
}

/**
 * Everything the page loads is its own origin's; nothing inline runs (checked by the browser test).
 * With a sign-in, the page may also post to the provider's token endpoint (its origin only).
 */
export function webAppContentSecurityPolicy(signIn?: WebSignIn): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    signIn ? `connect-src 'self' ${new URL(signIn.tokenUrl).origin}` : "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

export interface WebApp {
  /** The manifest of the app's operations. */
  readonly manifestPath: string;
  /** An asset by its name under /app/assets/ (e.g. 'app.js'), or undefined. */
  asset(name: string): StaticAsset | undefined;
  /** The page for any path under /app (the app routes in the browser). */
  page(opts: { readonly endpoint: string; readonly token?: string | undefined; readonly signIn?: WebSignIn | undefined }): string;
}

/**
 * Reads a built app. Throws when `dir` holds no build (with the command that makes one): a gateway
 * told to serve the app does not start without it.
 */
export function loadWebApp(dir: string): WebApp {
  const assetDir = join(dir, 'assets');
  const manifestPath = join(dir, WEB_APP_MANIFEST);
  if (!existsSync(join(assetDir, 'app.js')) || !existsSync(manifestPath)) {
    throw new Error(`Expected a built web app in ${dir} (assets/app.js and ${WEB_APP_MANIFEST}); build it with: node scripts/buildWeb.mjs`);
  }
  // A Map of the files found: only these names are served, so no path can reach anything else.
  const assets = new Map<string, StaticAsset>();
  for (const name of readdirSync(assetDir)) {
    const type = CONTENT_TYPES[extname(name)];
    if (type !== undefined) assets.set(name, staticAsset(readFileSync(join(assetDir, name)), type));
  }
  const version = (name: string): string => `${WEB_APP_BASE}/assets/${name}?v=${encodeURIComponent(assets.get(name)?.etag.slice(1, 9) ?? '')}`;
  return {
    manifestPath,
    asset: (name) => assets.get(name),
    page({ endpoint, token, signIn }) {
      const config = { endpoint, base: WEB_APP_BASE, ...(token !== undefined ? { token } : {}), ...(signIn !== undefined ? { signIn } : {}) };
      return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>shardql</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${escapeHtml(version('app.css'))}">
  </head>
  <body>
    <div id="root"></div>
    <noscript>This app needs JavaScript.</noscript>
    <script type="application/json" id="${CONFIG_ELEMENT_ID}">${jsonForScript(config)}</script>
    <script type="module" src="${escapeHtml(version('app.js'))}"></script>
  </body>
</html>
`;
    },
  };
}
