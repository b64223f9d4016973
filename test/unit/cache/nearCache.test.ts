import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NearCache, splitKey } from '../../../src/cache/nearCache.ts';

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('NearCache: what a view may read and fill', () => {
  test('nothing fills before the first barrier', () => {
    const c = new NearCache();
    assert.equal(c.fill({ seq: 0, at: Date.now() }, 'o', 1n, 'o', 'x'), false);
  });

  test('a fill under a view is read back under later views', () => {
    const t = clock();
    const c = new NearCache({ now: t.now });
    const v = c.advance({ epoch: 'e', seq: 7, keys: [] });
    assert.equal(c.fill(v, 'o', 1n, 'o', 'one'), true);
    assert.equal(c.get(c.advance({ epoch: 'e', seq: 7, keys: [] }), 'o', 1n, 'o'), 'one');
  });

  test('an invalidation in the log drops the key before the next view is handed out', () => {
    const c = new NearCache();
    const v7 = c.advance({ epoch: 'e', seq: 7, keys: [] });
    c.fill(v7, 'o', 1n, 'o', 'old');
    c.fill(v7, 'l:board_has_pins', 5n, 'n', 3);
    const v8 = c.advance({ epoch: 'e', seq: 8, keys: ['l:board_has_pins:5'] });
    assert.equal(c.get(v8, 'l:board_has_pins', 5n, 'n'), undefined);
    assert.equal(c.get(v8, 'o', 1n, 'o'), 'old', 'other keys stay');
  });

  test('a fill read before an invalidation it has not seen is refused; one read after it is kept', () => {
    const c = new NearCache();
    const v7 = c.advance({ epoch: 'e', seq: 7, keys: [] });
    const v8 = c.advance({ epoch: 'e', seq: 8, keys: ['o:1'] });
    assert.equal(c.fill(v7, 'o', 1n, 'o', 'maybe stale'), false);
    assert.equal(c.fill(v7, 'o', 2n, 'o', 'not invalidated'), true);
    assert.equal(c.fill(v8, 'o', 1n, 'o', 'fresh'), true);
    assert.equal(c.get(v8, 'o', 1n, 'o'), 'fresh');
  });

  test("a gateway's own write drops the key at once and refuses older fills", () => {
    const c = new NearCache();
    const v = c.advance({ epoch: 'e', seq: 3, keys: [] });
    c.fill(v, 'o', 1n, 'o', 'old');
    c.invalidateLocal(['o:1'], 4);
    assert.equal(c.get(v, 'o', 1n, 'o'), undefined);
    assert.equal(c.fill(v, 'o', 1n, 'o', 'old again'), false);
  });

  test('a failed append empties the cache and nothing fills until a new epoch is seen', () => {
    const c = new NearCache();
    const v = c.advance({ epoch: 'e', seq: 3, keys: [] });
    c.fill(v, 'o', 2n, 'o', 'x');
    c.invalidateLocal(['o:1'], undefined);
    assert.equal(c.size, 0);
    const same = c.advance({ epoch: 'e', seq: 3, keys: [] });
    assert.equal(c.fill(same, 'o', 2n, 'o', 'x'), true, 'the next barrier (after the replay) starts afresh');
  });

  test('a new epoch, a gap or a log that went backwards empties the cache', () => {
    for (const [name, next] of [
      ['new epoch', { epoch: 'f', seq: 9, keys: [] }],
      ['gap', { epoch: 'e', seq: 9, keys: undefined }],
      ['backwards', { epoch: 'e', seq: 2, keys: [] }],
    ] as const) {
      const c = new NearCache();
      c.fill(c.advance({ epoch: 'e', seq: 5, keys: [] }), 'o', 1n, 'o', 'x');
      const v = c.advance(next);
      assert.equal(c.get(v, 'o', 1n, 'o'), undefined, name);
      assert.equal(c.size, 0, name);
    }
  });

  test('entries older than the max age are not served', () => {
    const t = clock();
    const c = new NearCache({ now: t.now, maxAgeMs: 1000 });
    c.fill(c.advance({ epoch: 'e', seq: 1, keys: [] }), 'o', 1n, 'o', 'x');
    t.advance(1001);
    assert.equal(c.get(c.advance({ epoch: 'e', seq: 1, keys: [] }), 'o', 1n, 'o'), undefined);
  });

  test('forgotten invalidations raise the floor: views from before them may not fill', () => {
    const c = new NearCache({ maxRemembered: 1 });
    const v1 = c.advance({ epoch: 'e', seq: 1, keys: [] });
    c.advance({ epoch: 'e', seq: 2, keys: ['o:1'] });
    assert.equal(c.fill(v1, 'o', 1n, 'o', 'stale'), false, "refused by the key's own record");
    c.advance({ epoch: 'e', seq: 3, keys: ['o:9'] }); // o:1's record is forgotten: floor 2
    assert.equal(c.fill(v1, 'o', 1n, 'o', 'stale'), false, 'refused by the floor');
    assert.equal(c.fill(v1, 'o', 5n, 'o', 'any'), false, 'no view below the floor fills');
    const v3 = c.advance({ epoch: 'e', seq: 3, keys: [] });
    assert.equal(c.fill(v3, 'o', 1n, 'o', 'fresh'), true);
  });

  test('with no entries allowed (a worker, the CLI) nothing fills and no invalidation is remembered', () => {
    const none = new NearCache({ maxEntries: 0 });
    const some = new NearCache();
    for (const c of [none, some]) {
      c.advance({ epoch: 'e', seq: 7, keys: [] });
      const v = c.advance({ epoch: 'e', seq: 8, keys: ['o:1'] });
      c.invalidateLocal(['o:2', 'l:board_has_pins:5'], 9);
      c.fill(v, 'o', 3n, 'o', 'x');
    }
    assert.deepEqual([none.remembered, none.size, none.get(none.advance({ epoch: 'e', seq: 9, keys: [] }), 'o', 3n, 'o')], [0, 0, undefined]);
    assert.deepEqual([some.remembered, some.size, some.get(some.advance({ epoch: 'e', seq: 9, keys: [] }), 'o', 3n, 'o')], [3, 1, 'x']);
  });

  test('log keys split into a namespace and an ID; anything else is no key', () => {
    assert.deepEqual(splitKey('o:42'), { ns: 'o', id: 42n });
    assert.deepEqual(splitKey('l:board_has_pins:241294492511762325'), { ns: 'l:board_has_pins', id: 241294492511762325n });
    for (const bad of ['o:', ':1', 'o:x1', 'nocolon', `o:${'1'.repeat(21)}`]) assert.equal(splitKey(bad), undefined, bad);
  });

  test('the oldest entries go first beyond the size limit', () => {
    const c = new NearCache({ maxEntries: 2 });
    const v = c.advance({ epoch: 'e', seq: 1, keys: [] });
    c.fill(v, 'o', 1n, 'o', 1);
    c.fill(v, 'o', 2n, 'o', 2);
    c.fill(v, 'o', 3n, 'o', 3);
    assert.equal(c.size, 2);
    assert.equal(c.get(v, 'o', 1n, 'o'), undefined);
    assert.equal(c.get(v, 'o', 3n, 'o'), 3);
  });
});
