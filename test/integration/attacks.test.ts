import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { attackCorpus, type Attack, type CorpusIds } from '../corpus/attacks.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';

let env: TestEnv;
let gw: TestGateway;
let corpus: Attack[];
let ids: CorpusIds;

/** The gateway's own count of SQL round trips, from /metrics. */
async function sqlRoundTrips(): Promise<number> {
  const m = await checkedFetch(env, `${gw.url}/metrics`);
  const line = /^shardql_sql_round_trips_total (\d+)/m.exec(m.text);
  assert.ok(line, 'the metric is exposed');
  return Number(line[1]);
}

before(async () => {
  env = await freshEnv({ shards: 16 });
  const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
  const user = await writes.createUser({ username: 'target' });
  const board = await writes.createBoard(user.id, { name: 'Target board' });
  const pin = await writes.createPin(user.id, board.id, { title: 'Target pin' });
  await writes.likePin(user.id, pin.id);
  // What the public sees: production (no introspection, no suggestions, masked errors).
  gw = await startTestGateway(env, 'attacks', { env: 'production' });
  ids = { userId: String(user.id), boardId: String(board.id), pinId: String(pin.id), username: 'target' };
  corpus = attackCorpus(ids);
});
after(async () => {
  await gw?.stop();
  await env?.close();
});

describe('Attack corpus: every bad request is refused before any SQL runs, with a stable code', () => {
  test('the corpus', async () => {
    assert.ok(corpus.length >= 300, `${corpus.length} attacks`);
    assert.equal(new Set(corpus.map((a) => a.name)).size, corpus.length, 'every attack has its own name');
    const before = await sqlRoundTrips();
    const wrong: string[] = [];
    const byKind = new Map<string, { n: number; refused: number; codes: Set<string> }>();
    const started = Date.now();
    for (const attack of corpus) {
      const { method, search = '', headers, body } = attack.request;
      // Every attack asks for its cost too: a refusal must show no SQL.
      const res = await checkedFetch(env, `${gw.url}/graphql${search}`, { method, headers: { ...headers, 'x-shardql-cost': '1' }, ...(body !== undefined ? { body } : {}) });
      const errors: { extensions?: { code?: string } }[] = res.body?.errors ?? [];
      const codes = new Set(errors.map((e) => e.extensions?.code));
      // Refused: errors, and no data (a field refused by its arguments leaves only nulls).
      const data = res.body?.data;
      const refused = errors.length > 0 && (data == null || Object.values(data).every((v) => v === null));
      const sql = res.body?.extensions?.cost?.sqlRoundTrips ?? 0;
      const k = byKind.get(attack.kind) ?? { n: 0, refused: 0, codes: new Set<string>() };
      k.n++;
      if (refused && sql === 0) k.refused++;
      for (const c of codes) if (c) k.codes.add(c);
      byKind.set(attack.kind, k);
      if (res.status !== attack.expect.status || codes.size !== 1 || !codes.has(attack.expect.code) || !refused || sql !== 0) {
        wrong.push(`${attack.name}: expected ${attack.expect.status} ${attack.expect.code}, got ${res.status} ${[...codes].join(',')} sql=${sql} ${res.text.slice(0, 200)}`);
      }
    }
    const ms = Date.now() - started;
    const after = await sqlRoundTrips();
    for (const [kind, k] of byKind) console.log(`# attacks: ${kind}: ${k.refused}/${k.n} refused before SQL (${[...k.codes].join(', ')})`);
    console.log(`# attacks: ${corpus.length - wrong.length}/${corpus.length} refused with the expected code; SQL round trips during the corpus: ${after - before}; ${ms} ms`);
    assert.deepEqual(wrong, []);
    assert.equal(after - before, 0, 'no SQL ran');
    // The measure works: a legitimate query moves it.
    const ok = await gw.gql(`{ pin(id: "${ids.pinId}") { id likeCount } }`);
    assert.equal(ok.body.data.pin.id, ids.pinId);
    assert.ok((await sqlRoundTrips()) > after, 'a query that runs moves the counter');
  });
});
