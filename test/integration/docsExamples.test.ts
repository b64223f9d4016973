/**
 * Every GraphQL example of the docs (```graphql fences in README.md and docs/*.md) runs against a real
 * gateway over the demo data (`npm run dev`'s), as the demo user alice, and answers without errors.
 * An example meant to be refused is fenced ```graphql-error and must answer with an error code. When
 * a ```json fence holding `"data"` follows an example, the answer's data must equal it: the README's
 * sample answer is what the gateway says, not what it once said. A fence of type definitions (the
 * model's SDL in docs/model.md) is schema, not an operation: it must parse, and is not sent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { docPages, fencesOf, readPage, type Fence } from '../helpers/markdown.ts';
import { Kind, parse } from 'graphql';
import { seedDemo } from '../../src/demo/seed.ts';

let env: TestEnv;
let gw: TestGateway;
let token: string;

before(async () => {
  env = await freshEnv({ shards: 16 });
  const { users } = await seedDemo(env.storage, () => env.topology);
  gw = await startTestGateway(env, 'docs-examples');
  token = await gw.token(users.find((u) => u.username === 'alice')!.id);
});

after(async () => {
  await gw?.stop();
  await env?.close();
});

/** Each GraphQL example with the fence that follows it (its printed answer, if it is JSON). */
function examples(): { example: Fence; answer: Fence | undefined }[] {
  return docPages().flatMap((page) => {
    const fences = fencesOf(page, readPage(page));
    return fences.flatMap((f, i) => (f.lang === 'graphql' || f.lang === 'graphql-error' ? [{ example: f, answer: fences[i + 1]?.lang === 'json' ? fences[i + 1] : undefined }] : []));
  });
}

/** A printed answer's `data`, when the fence is complete JSON with data (an answer abridged with … is not compared). */
function printedData(answer: Fence | undefined): unknown {
  if (!answer) return undefined;
  try {
    const parsed = JSON.parse(answer.body) as { data?: unknown };
    return parsed.data;
  } catch {
    return undefined;
  }
}

/** The example's definitions; a fence that does not parse fails the file, naming where it is. */
function parsed(example: Fence): ReturnType<typeof parse>['definitions'] {
  try {
    return parse(example.body).definitions;
  } catch (err) {
    throw new Error(`${example.page}:${example.line}: not GraphQL: ${(err as Error).message}`);
  }
}

describe('Docs: every GraphQL example answers', () => {
  const all = examples();

  test('the docs hold GraphQL examples, the README among them', () => {
    assert.ok(all.length >= 3, `found ${all.length}`);
    assert.ok(all.some((e) => e.example.page === 'README.md'), 'the README shows a query');
  });

  for (const { example, answer } of all) {
    const definitions = parsed(example);
    if (definitions.every((d) => d.kind !== Kind.OPERATION_DEFINITION && d.kind !== Kind.FRAGMENT_DEFINITION)) continue; // SDL: parsed, not sent
    test(`${example.page}:${example.line} (${example.lang})`, async () => {
      const r = await gw.gql(example.body, {}, { token });
      if (example.lang === 'graphql-error') {
        assert.ok((r.body.errors ?? []).length > 0, `meant to fail, but answered ${r.text.slice(0, 300)}`);
        for (const e of r.body.errors!) assert.match(String(e.extensions?.code), /^[A-Z_]+$/, 'a refusal carries a stable code');
        return;
      }
      assert.equal(r.status, 200, r.text.slice(0, 300));
      assert.deepEqual(r.body.errors, undefined, `errors: ${JSON.stringify(r.body.errors)}`);
      assert.ok(r.body.data !== null && typeof r.body.data === 'object' && Object.values(r.body.data).every((v) => v !== null), `no data: ${r.text.slice(0, 300)}`);
      assert.equal(typeof r.body.extensions?.cost?.sqlRoundTrips, 'number', 'the answer carries extensions.cost');
      const printed = printedData(answer);
      if (printed !== undefined) assert.deepEqual(r.body.data, printed, `${answer!.page}:${answer!.line} prints another answer than the gateway gives`);
      if (example.page === 'README.md') {
        // The README says: asked again, everything comes from the gateway's memory.
        const again = await gw.gql(example.body, {}, { token });
        assert.deepEqual(again.body.data, r.body.data);
        assert.equal(again.body.extensions.cost.sqlRoundTrips, 0, 'warm: 0 SQL round trips');
        assert.equal(again.body.extensions.cost.cache.redis.roundTrips, 1, 'warm: 1 Redis round trip, the read barrier');
        assert.equal(again.body.extensions.cost.cache.memcached.roundTrips, 0, 'warm: 0 memcached round trips');
      }
    });
  }
});
