/**
 * What the gateway tells the page (a JSON block in the HTML it serves, see src/http/webApp.ts):
 * where GraphQL is, the app's base path, in development only the demo user's token and, where
 * configured, the identity provider to sign in with.
 */
export interface SignInConfig {
  readonly name: string;
  readonly clientId: string;
  readonly authorizationUrl: string;
  readonly tokenUrl: string;
  readonly scope: string;
  readonly audience?: string;
}

export interface AppConfig {
  readonly endpoint: string;
  readonly base: string;
  readonly token?: string;
  readonly signIn?: SignInConfig;
}

export const CONFIG_ELEMENT_ID = 'shardql-app-config';
const TOKEN_KEY = 'shardql.token';
/** The identity provider's token, kept for this tab only (signIn.ts). */
export const SESSION_TOKEN_KEY = 'shardql.sessionToken';

export function readConfig(): AppConfig {
  const text = document.getElementById(CONFIG_ELEMENT_ID)?.textContent ?? '{}';
  const parsed = JSON.parse(text) as Partial<AppConfig>;
  return { endpoint: parsed.endpoint ?? '/graphql', base: parsed.base ?? '/app', ...(parsed.token ? { token: parsed.token } : {}), ...(parsed.signIn ? { signIn: parsed.signIn } : {}) };
}

/** The identity provider's token for this tab (signIn.ts), else one a person pasted (production: no token is handed out by the page). */
export function storedToken(): string | undefined {
  return window.sessionStorage.getItem(SESSION_TOKEN_KEY) ?? window.localStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function storeToken(token: string | undefined): void {
  if (token === undefined) window.localStorage.removeItem(TOKEN_KEY);
  else window.localStorage.setItem(TOKEN_KEY, token);
}
