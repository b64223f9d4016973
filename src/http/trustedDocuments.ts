import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ShardqlError } from '../core/errors.ts';

/**
 * Trusted documents: only operations listed in a persisted-query manifest run. The manifest is
 * Apollo's format:
 *   { "format": "apollo-persisted-query-manifest", "version": 1,
 *     "operations": [{ "id": "<sha256 of body>", "name": "Profile", "type": "query", "body": "query Profile { … }" }] }
 */
export interface TrustedDocuments {
  readonly size: number;
  /** Rewrites a request body to carry the manifest's text, or throws a client error. */
  resolve(body: Record<string, unknown>): Record<string, unknown>;
}

export function parseManifest(json: unknown): TrustedDocuments {
  const m = json as { format?: unknown; version?: unknown; operations?: unknown };
  if (m?.format !== 'apollo-persisted-query-manifest' || m.version !== 1 || !Array.isArray(m.operations)) {
    throw new Error('Expected an apollo-persisted-query-manifest, version 1, with an operations array');
  }
  const byId = new Map<string, string>();
  for (const op of m.operations as { id?: unknown; body?: unknown }[]) {
    if (typeof op.id !== 'string' || typeof op.body !== 'string') throw new Error('Every manifest operation needs a string id and body');
    byId.set(op.id, op.body);
  }
  const byHash = new Set([...byId.values()].map((body) => createHash('sha256').update(body).digest('hex')));
  return {
    size: byId.size,
    resolve(body) {
      const ext = body.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined;
      const id = typeof body.documentId === 'string' ? body.documentId : ext?.persistedQuery?.sha256Hash;
      const { extensions: _ext, documentId: _doc, ...rest } = body;
      if (typeof id === 'string') {
        const text = byId.get(id);
        if (text === undefined) throw new ShardqlError('PERSISTED_QUERY_NOT_FOUND', 'Expected the ID of an operation in the trusted-documents manifest, got an unknown ID');
        return { ...rest, query: text };
      }
      if (typeof body.query === 'string' && byHash.has(createHash('sha256').update(body.query).digest('hex'))) return rest;
      throw new ShardqlError('PERSISTED_QUERY_NOT_ALLOWED', 'This gateway runs only trusted documents: send the ID of a manifest operation (extensions.persistedQuery.sha256Hash or documentId)');
    },
  };
}

export function loadManifest(path: string): TrustedDocuments {
  return parseManifest(JSON.parse(readFileSync(path, 'utf8')));
}
