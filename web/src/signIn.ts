/**
 * Sign-in with the deployment's identity provider (OpenID Connect authorization code flow with
 * PKCE S256, as a public client: no secret lives in the page). The verifier and `state` wait in
 * sessionStorage for the provider to send the browser back to /app/signed-in; the token it answers
 * is kept in sessionStorage only (gone with the tab).
 */
import { SESSION_TOKEN_KEY, type SignInConfig } from './config';

const PENDING_KEY = 'shardql.signIn';
/** Where the provider sends the browser back to, under the app's base. */
export const SIGNED_IN_PATH = '/signed-in';

interface Pending {
  readonly verifier: string;
  readonly state: string;
  readonly returnTo: string;
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const random = (): string => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** The S256 code challenge of a verifier (RFC 7636). */
async function challengeOf(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

const redirectUri = (base: string): string => `${window.location.origin}${base}${SIGNED_IN_PATH}`;

/** Leaves for the provider's login; it comes back to /app/signed-in. */
export async function startSignIn(signIn: SignInConfig, base: string): Promise<void> {
  const pending: Pending = { verifier: random(), state: random(), returnTo: window.location.pathname + window.location.search };
  window.sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(signIn.authorizationUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', signIn.clientId);
  url.searchParams.set('redirect_uri', redirectUri(base));
  url.searchParams.set('scope', signIn.scope);
  if (signIn.audience) url.searchParams.set('audience', signIn.audience);
  url.searchParams.set('state', pending.state);
  url.searchParams.set('code_challenge', await challengeOf(pending.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  window.location.assign(url.href);
}

/**
 * On /app/signed-in: checks `state`, trades the code for a token, keeps the token and returns the
 * path to go back to. Throws with the provider's own words when it refused.
 */
export async function finishSignIn(signIn: SignInConfig, base: string): Promise<{ token: string; returnTo: string }> {
  const params = new URLSearchParams(window.location.search);
  const text = window.sessionStorage.getItem(PENDING_KEY);
  window.sessionStorage.removeItem(PENDING_KEY);
  const error = params.get('error');
  if (error !== null) throw new Error(`${signIn.name} refused the sign-in: ${params.get('error_description') ?? error}`);
  const pending = text === null ? undefined : (JSON.parse(text) as Pending);
  if (pending === undefined || params.get('state') !== pending.state) throw new Error('This sign-in was not started here (its state does not match): sign in again');
  const code = params.get('code');
  if (code === null) throw new Error(`${signIn.name} sent no code: sign in again`);
  const response = await fetch(signIn.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri(base), client_id: signIn.clientId, code_verifier: pending.verifier }),
  });
  const body = (await response.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
  if (!response.ok || typeof body.access_token !== 'string') {
    throw new Error(`${signIn.name} refused the sign-in: ${body.error_description ?? body.error ?? `HTTP ${response.status}`}`);
  }
  window.sessionStorage.setItem(SESSION_TOKEN_KEY, body.access_token);
  const returnTo = pending.returnTo.startsWith(`${base}/`) || pending.returnTo === base ? pending.returnTo : `${base}/`;
  return { token: body.access_token, returnTo: returnTo.startsWith(`${base}${SIGNED_IN_PATH}`) ? `${base}/` : returnTo };
}
