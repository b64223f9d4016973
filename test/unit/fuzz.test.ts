import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCursor, encodeCursor } from '../../src/core/cursor.ts';
import { isShardqlError } from '../../src/core/errors.ts';
import { encodeId, formatId, parseId, typeOf } from '../../src/core/ids.ts';

/** mulberry32: a small seeded generator, so every run tries the same inputs. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = 20240607;
const N = 20_000;

function fuzzer(seed: number) {
  const r = rng(seed);
  const int = (n: number): number => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const chars = (alphabet: string, n: number): string => Array.from({ length: n }, () => alphabet[int(alphabet.length)]).join('');
  const unicode = (n: number): string => String.fromCodePoint(...Array.from({ length: n }, () => pick([int(0x80), int(0x800), int(0x10000), 0xd800 + int(0x800), 0xff10 + int(10), 0x660 + int(10), 0])));
  const mutate = (s: string): string => {
    const i = int(s.length + 1);
    switch (int(4)) {
      case 0: return s.slice(0, i) + s.slice(i + 1); // drop
      case 1: return s.slice(0, i) + chars('0123456789azAZ-_+/=| \u0000', 1) + s.slice(i); // insert
      case 2: return s.slice(0, i) + chars('0123456789azAZ-_', 1) + s.slice(i + 1); // replace
      default: return s + s.slice(0, int(8)); // extend
    }
  };
  return { r, int, pick, chars, unicode, mutate };
}

function idInput(f: ReturnType<typeof fuzzer>): unknown {
  const { int, pick, chars, unicode, mutate } = f;
  switch (int(10)) {
    case 0: return chars('0123456789', int(25));
    case 1: return pick(['', '0', '00', '-0', '+1', ' 1', '1 ', '0x10', '1e3', '1.0', '٣', '１', '4611686018427387904', '4611686018427387903', '18446744073709551616']);
    case 2: return formatId(encodeId({ shard: int(65536), type: int(1024), local: BigInt(int(2 ** 30)) }));
    case 3: return mutate(formatId(encodeId({ shard: int(70), type: 1 + int(4), local: BigInt(int(1000)) })));
    case 4: return pick([0, 1, -1, 1.5, NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 2 ** 62, f.r() * 1e20]);
    case 5: return pick([null, undefined, true, false, {}, [], ['1'], { id: '1' }, 10n, Symbol('id'), () => 1]);
    case 6: return unicode(int(30));
    case 7: return chars('0123456789', 1 + int(5)).padStart(1 + int(40), '0');
    case 8: return `${chars('0123456789', 1 + int(19))}${pick(['', '\n', '\u0000', ' ', 'n', '\u200b'])}`;
    default: return chars('0123456789abcdefxXn-+. ', int(64));
  }
}

function cursorInput(f: ReturnType<typeof fuzzer>, list: string): unknown {
  const { int, pick, chars, unicode, mutate } = f;
  const num = (): string => pick(['0', '-0', '01', '-1', '9223372036854775807', '9223372036854775808', '-9223372036854775808', '18446744073709551615', '18446744073709551616', '1e3', '', ' 1', chars('0123456789', int(22))]);
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');
  switch (int(8)) {
    case 0: return encodeCursor({ list, key: BigInt(int(2 ** 40)), id: BigInt(int(2 ** 40)) });
    case 1: return mutate(encodeCursor({ list, key: BigInt(int(2 ** 40)), id: BigInt(int(2 ** 40)) }));
    case 2: return b64(`${pick(['v1', 'v2', 'V1', ''])}|${pick([list, 'other:t', list + ' ', ''])}|${num()}|${num()}${pick(['', '|', '|x'])}`);
    case 3: return chars('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', int(260));
    case 4: return chars('ABCabc012+/=-_ .|%\\\'"', int(40));
    case 5: return b64(unicode(int(60)));
    case 6: return pick([null, undefined, 0, 1, {}, [], true, 12n]);
    default: return b64(`v1|${list}|${chars('0123456789-', int(25))}|${chars('0123456789', int(25))}`);
  }
}

describe('Fuzz: the ID codec and the cursor decoder', () => {
  test(`parseId: ${N} random inputs give an ID or INVALID_ID, nothing else`, () => {
    const f = fuzzer(SEED);
    const outcomes = new Map<string, number>();
    const known = (s: number): boolean => s < 4096;
    for (let i = 0; i < N; i++) {
      const input = idInput(f);
      const opts = i % 3 === 0 ? { shardExists: known } : i % 3 === 1 ? { expect: f.pick(['pin', 'board', 'user', 'comment'] as const) } : {};
      let outcome: string;
      try {
        const id = parseId(input, opts);
        assert.equal(typeof id, 'bigint');
        assert.ok(id >= 0n && id < 1n << 62n, `in range: ${id}`);
        assert.notEqual(typeOf(id), undefined, 'a known type');
        if ('expect' in opts) assert.equal(typeOf(id), opts.expect);
        if (typeof input === 'string') assert.equal(formatId(id), input, 'one spelling per ID');
        outcome = 'valid';
      } catch (err) {
        assert.ok(isShardqlError(err, 'INVALID_ID'), `only INVALID_ID for ${String(input).slice(0, 40)}: ${err}`);
        assert.ok(err.message.length < 400, 'a bounded message');
        outcome = String(err.details.reason);
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    const summary = [...outcomes.entries()].sort().map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`# fuzz parseId (seed ${SEED}): ${N} inputs, 0 crashes — ${summary}`);
    assert.ok((outcomes.get('valid') ?? 0) > 100, 'the generator also makes valid IDs');
  });

  test(`decodeCursor: ${N} random inputs give a cursor of this list or INVALID_CURSOR, nothing else`, () => {
    const f = fuzzer(SEED + 1);
    const list = 'board_has_pins:123:t';
    const outcomes = new Map<string, number>();
    for (let i = 0; i < N; i++) {
      const input = cursorInput(f, list);
      let outcome: string;
      try {
        const c = decodeCursor(input, list);
        assert.equal(c.list, list);
        assert.ok(c.key >= -(2n ** 63n) && c.key < 2n ** 63n, 'key is a signed 64-bit number');
        assert.ok(c.id >= 0n && c.id < 2n ** 64n, 'id is an unsigned 64-bit number');
        assert.deepEqual(decodeCursor(encodeCursor(c), list), c, 'round-trips');
        outcome = 'valid';
      } catch (err) {
        assert.ok(isShardqlError(err, 'INVALID_CURSOR'), `only INVALID_CURSOR for ${String(input).slice(0, 40)}: ${err}`);
        assert.ok(err.message.length < 400, 'a bounded message');
        outcome = String(err.details.reason);
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    const summary = [...outcomes.entries()].sort().map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`# fuzz decodeCursor (seed ${SEED + 1}): ${N} inputs, 0 crashes — ${summary}`);
    assert.ok((outcomes.get('valid') ?? 0) > 100, 'the generator also makes valid cursors');
  });
});
