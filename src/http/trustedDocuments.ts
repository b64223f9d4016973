import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ShardqlError } from '../core/errors.ts';

/**
 * Persisted documents: operations a client sends by ID, their text kept in a manifest. Two formats
 * are read:
 *   Apollo's  { "format": "apollo-persisted-query-manifest", "version": 1,
 *               "operations": [{ "id": "<sha256 of body>", "name": "Profile", "type": "query", "body": "query Profile { … }" }] }
 *   Relay's   { "<id>": "query Profile { … }", … }   (relay-compiler's persistConfig with a local file;
 *             web/ builds one, its IDs the SHA-256 of the text)
 * A request names its operation by `documentId` (the GraphQL-over-HTTP persisted documents form) or
 * by Apollo's `extensions.persistedQuery.sha256Hash`.
 *
 * Two uses: trusted documents (production: {@link PersistedDocuments.resolve}, only the manifest's
 * operations run) and known documents (development: {@link PersistedDocuments.resolveKnown}, the
 * manifest's IDs work beside free-form queries, so the web app runs as in production while
 * GraphiQL stays free).
 */
export interface PersistedDocuments {
  readonly size: number;
  /** Trusted documents: rewrites a request body to carry the manifest's text, or throws a client error. */
  resolve(body: Record<string, unknown>): Record<string, unknown>;
  /**
   * Known documents: a manifest ID becomes its text; a `documentId` the manifest lacks is
   * PERSISTED_QUERY_NOT_FOUND; anything else (a query, an automatic persisted query's hash) passes
   * as it came.
   */
  resolveKnown(body: Record<string, unknown>): Record<string, unknown>;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The manifest's operations by ID, from either format. */
function operationsOf(json: unknown): Map<string, string> {
  const m = json as { format?: unknown; version?: unknown; operations?: unknown } | null;
  const byId = new Map<string, string>();
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    throw new Error('Expected a persisted-document manifest: an apollo-persisted-query-manifest or a JSON object of ID → operation text');
  }
  if (m.format !== undefined) {
    if (m.format !== 'apollo-persisted-query-manifest' || m.version !== 1 || !Array.isArray(m.operations)) {
      throw new Error('Expected an apollo-persisted-query-manifest, version 1, with an operations array');
    }
    for (const op of m.operations as { id?: unknown; body?: unknown }[]) {
      if (typeof op.id !== 'string' || typeof op.body !== 'string') throw new Error('Every manifest operation needs a string id and body');
      byId.set(op.id, op.body);
    }
    return byId;
  }
  for (const [id, text] of Object.entries(m)) {
    if (typeof text !== 'string') throw new Error(`Expected the manifest's operation ${JSON.stringify(id.slice(0, 64))} to be a string of GraphQL, got ${typeof text}`);
    byId.set(id, text);
  }
  return byId;
}

export function parseManifest(json: unknown): PersistedDocuments {
  const byId = operationsOf(json);
  const byHash = new Set([...byId.values()].map(sha256));
  /** The ID a request names, and the body without the fields that named it. */
  const idOf = (body: Record<string, unknown>) => {
    const ext = body.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined;
    const id = typeof body.documentId === 'string' ? body.documentId : ext?.persistedQuery?.sha256Hash;
    const { extensions: _ext, documentId: _doc, ...rest } = body;
    return { id: typeof id === 'string' ? id : undefined, rest };
  };
  const notFound = () => new ShardqlError('PERSISTED_QUERY_NOT_FOUND', 'Expected the ID of an operation in the persisted-document manifest, got an unknown ID');
  return {
    size: byId.size,
    resolve(body) {
      const { id, rest } = idOf(body);
      if (id !== undefined) {
        const text = byId.get(id);
        if (text === undefined) throw notFound();
        return { ...rest, query: text };
      }
      if (typeof body.query === 'string' && byHash.has(sha256(body.query))) return rest;
      throw new ShardqlError('PERSISTED_QUERY_NOT_ALLOWED', 'This gateway runs only trusted documents: send the ID of a manifest operation (extensions.persistedQuery.sha256Hash or documentId)');
    },
    resolveKnown(body) {
      const { id, rest } = idOf(body);
      const text = id === undefined ? undefined : byId.get(id);
      if (text !== undefined) return { ...rest, query: text };
      if (typeof body.documentId === 'string') throw notFound();
      return body;
    },
  };
}

export function loadManifest(path: string): PersistedDocuments {
  return parseManifest(JSON.parse(readFileSync(path, 'utf8')));
}
