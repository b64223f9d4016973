/**
 * An OpenID Connect provider of the test's own: a real node:http server on loopback that publishes
 * its keys (JWKS), and signs a person in by the authorization code flow with PKCE S256 as a public
 * client would expect of it (GET /authorize approves as `user`; POST /token trades a code, once,
 * for an RS256 token signed with the first published key). Used by identity.test.ts (tokens) and
 * webApp.test.ts (the web app's sign-in).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';

export const PROVIDER_ISSUER = 'https://id.example.test/';
export const PROVIDER_AUDIENCE = 'https://api.example.test/graphql';

export interface ProviderKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256' | 'EdDSA';
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
  readonly spki: string;
}

export async function providerKey(kid: string, alg: ProviderKey['alg']): Promise<ProviderKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, spki: await exportSPKI(publicKey) };
}

export interface Claims {
  readonly iss?: string;
  readonly aud?: string;
  readonly sub?: string;
  readonly exp?: number;
  readonly nbf?: number;
  readonly iat?: number;
  readonly [claim: string]: unknown;
}

const now = (): number => Math.floor(Date.now() / 1000);

export async function sign(key: ProviderKey, claims: Claims, header: { kid?: string } = {}): Promise<string> {
  const { iss = PROVIDER_ISSUER, aud = PROVIDER_AUDIENCE, exp = now() + 600, iat = now(), ...rest } = claims;
  return new SignJWT({ ...rest, iss, aud, exp })
    .setProtectedHeader({ alg: key.alg, kid: header.kid ?? key.kid, typ: 'JWT' })
    .setIssuedAt(iat)
    .sign(key.privateKey);
}

const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

interface Grant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly challenge: string;
  readonly sub: string;
}

/**
 * The provider. `published` are the keys its JWKS serves (or it fails with `status`), `fetches`
 * counts JWKS fetches. For sign-in: `clientId` is the one client it knows, `appOrigin` the origin
 * its token endpoint answers CORS for, `user` who approves at /authorize.
 */
export class JwksServer {
  published: ProviderKey[] = [];
  status = 200;
  fetches = 0;
  clientId = 'shardql-web';
  appOrigin: string | undefined;
  user: string | undefined;
  /** The query of every /authorize request, in order. */
  readonly authorizeRequests: URLSearchParams[] = [];
  /** Every /token request's answer status, in order. */
  readonly tokenAnswers: number[] = [];
  readonly #grants = new Map<string, Grant>();
  #base = '';
  readonly #server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://provider');
    if (url.pathname === '/authorize' && req.method === 'GET') return this.#authorize(url, res);
    if (url.pathname === '/token') return void this.#token(req, res);
    this.fetches++;
    if (this.status !== 200) return void res.writeHead(this.status, { 'content-type': 'text/plain' }).end('Service Unavailable');
    const body = JSON.stringify({ keys: this.published.map((k) => k.jwk) });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });

  /** Starts it; answers the JWKS URL. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return `${this.#base}/.well-known/jwks.json`;
  }

  get authorizationUrl(): string {
    return `${this.#base}/authorize`;
  }

  get tokenUrl(): string {
    return `${this.#base}/token`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #authorize(url: URL, res: ServerResponse): void {
    const p = url.searchParams;
    this.authorizeRequests.push(new URLSearchParams(p));
    const redirectUri = p.get('redirect_uri');
    if (p.get('client_id') !== this.clientId || redirectUri === null || !redirectUri.startsWith('http://127.0.0.1:')) {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('unknown client or redirect_uri');
    }
    const back = new URL(redirectUri);
    const state = p.get('state');
    if (state !== null) back.searchParams.set('state', state);
    const challenge = p.get('code_challenge');
    if (this.user === undefined) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The person declined');
    } else if (p.get('response_type') !== 'code' || p.get('code_challenge_method') !== 'S256' || challenge === null || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('error_description', 'response_type=code with an S256 code_challenge is required');
    } else {
      const code = randomBytes(16).toString('base64url');
      this.#grants.set(code, { clientId: this.clientId, redirectUri, challenge, sub: this.user });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.href }).end();
  }

  async #token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cors: Record<string, string> = this.appOrigin !== undefined && req.headers.origin === this.appOrigin ? { 'access-control-allow-origin': this.appOrigin, vary: 'Origin' } : {};
    if (req.method === 'OPTIONS') return void res.writeHead(204, { ...cors, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type' }).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const answer = (status: number, body: Record<string, unknown>): void => {
      this.tokenAnswers.push(status);
      res.writeHead(status, { ...cors, 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    };
    const code = form.get('code') ?? '';
    const grant = this.#grants.get(code);
    this.#grants.delete(code); // a code is good once, whatever the outcome
    if (form.get('grant_type') !== 'authorization_code') return answer(400, { error: 'unsupported_grant_type' });
    if (grant === undefined) return answer(400, { error: 'invalid_grant', error_description: 'unknown or used code' });
    if (form.get('client_id') !== grant.clientId || form.get('redirect_uri') !== grant.redirectUri) return answer(400, { error: 'invalid_grant', error_description: 'client or redirect_uri does not match' });
    if (s256(form.get('code_verifier') ?? '') !== grant.challenge) return answer(400, { error: 'invalid_grant', error_description: 'code_verifier does not match the challenge' });
    const key = this.published[0]!;
    return answer(200, { access_token: await sign(key, { sub: grant.sub }), token_type: 'Bearer', expires_in: 600 });
  }
}
