/**
 * What the gateway tells the page (a JSON block in the HTML it serves, see src/http/webApp.ts):
 * where GraphQL is, the app's base path and, in development only, the demo user's token.
 */
export interface AppConfig {
  readonly endpoint: string;
  readonly base: string;
  readonly token?: string;
}

export const CONFIG_ELEMENT_ID = 'shardql-app-config';
const TOKEN_KEY = 'shardql.token';

export function readConfig(): AppConfig {
  const text = document.getElementById(CONFIG_ELEMENT_ID)?.textContent ?? '{}';
  const parsed = JSON.parse(text) as Partial<AppConfig>;
  return { endpoint: parsed.endpoint ?? '/graphql', base: parsed.base ?? '/app', ...(parsed.token ? { token: parsed.token } : {}) };
}

/** The token a person pasted (production: no token is handed out by the page). */
export function storedToken(): string | undefined {
  return window.localStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function storeToken(token: string | undefined): void {
  if (token === undefined) window.localStorage.removeItem(TOKEN_KEY);
  else window.localStorage.setItem(TOKEN_KEY, token);
}
