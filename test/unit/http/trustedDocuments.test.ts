import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parseManifest } from '../../../src/http/trustedDocuments.ts';
import { isShardqlError } from '../../../src/core/errors.ts';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const TEXT = 'query Viewer { viewer { id } }';
const ID = sha256(TEXT);
const APOLLO = { format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: ID, name: 'Viewer', type: 'query', body: TEXT }] };
const RELAY = { [ID]: TEXT };

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return isShardqlError(err) ? err.code : `not a ShardqlError: ${String(err)}`;
  }
  return undefined;
};

describe('parseManifest: both formats', () => {
  for (const [name, json] of [['Apollo', APOLLO], ['Relay', RELAY]] as const) {
    test(`${name}'s manifest: an ID (documentId or the APQ hash) becomes its text`, () => {
      const docs = parseManifest(json);
      assert.equal(docs.size, 1);
      assert.deepEqual(docs.resolve({ documentId: ID, variables: { a: 1 } }), { variables: { a: 1 }, query: TEXT });
      assert.deepEqual(docs.resolve({ extensions: { persistedQuery: { version: 1, sha256Hash: ID } } }), { query: TEXT });
    });
  }

  test('refuses what is neither format, naming what it expected', () => {
    for (const bad of [null, [], 'text', { format: 'other' }, { [ID]: 42 }]) {
      assert.throws(() => parseManifest(bad), /Expected/);
    }
  });
});

describe('Trusted documents (resolve) against known documents (resolveKnown)', () => {
  const docs = parseManifest(RELAY);
  const cases = [
    { name: 'a manifest ID', body: { documentId: ID }, trusted: { query: TEXT }, known: { query: TEXT } },
    { name: "a manifest operation's full text", body: { query: TEXT }, trusted: { query: TEXT }, known: { query: TEXT } },
    { name: 'a free-form query', body: { query: '{ viewer { username } }' }, trusted: 'PERSISTED_QUERY_NOT_ALLOWED', known: { query: '{ viewer { username } }' } },
    { name: 'an unknown documentId', body: { documentId: sha256('other') }, trusted: 'PERSISTED_QUERY_NOT_FOUND', known: 'PERSISTED_QUERY_NOT_FOUND' },
    {
      name: "an automatic persisted query's unknown hash (Apollo's protocol answers it)",
      body: { extensions: { persistedQuery: { version: 1, sha256Hash: sha256('other') } } },
      trusted: 'PERSISTED_QUERY_NOT_FOUND',
      known: { extensions: { persistedQuery: { version: 1, sha256Hash: sha256('other') } } },
    },
  ] as const;
  for (const c of cases) {
    test(c.name, () => {
      if (typeof c.trusted === 'string') assert.equal(codeOf(() => docs.resolve({ ...c.body })), c.trusted);
      else assert.deepEqual(docs.resolve({ ...c.body }), c.trusted);
      if (typeof c.known === 'string') assert.equal(codeOf(() => docs.resolveKnown({ ...c.body })), c.known);
      else assert.deepEqual(docs.resolveKnown({ ...c.body }), c.known);
    });
  }
});
