import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hashTag, hashTagOf, keySlot } from '../../../src/core/redisKeySlot.ts';

describe('keySlot: the slot Redis Cluster gives a key', () => {
  // Every expected slot was read from a real cluster node (redis-server 7.0, CLUSTER KEYSLOT).
  const cases: [name: string, key: string, slot: number][] = [
    ['a plain key', 'foo', 12182],
    ['another plain key', 'bar', 5061],
    ['the empty key', '', 0],
    ['a mapping list', 'l:board_has_pins:1234567890123', 15366],
    ['a tagged key hashes its tag only', 'shardql:{inv}:log', 13198],
    ['the tag on its own', 'inv', 13198],
    ['a queue key', '{shardql:jobs:feed}:feed:wait', 14847],
    ['an empty first tag: the whole key is hashed', 'a{}{b}', 15033],
    ['an empty tag at the end', 'x{}', 2608],
    ['only the first tag counts', '{a}b{c}', 15495],
    ['non-ASCII: UTF-8 bytes are hashed', 'é{ü}', 9552],
    ['the specification example', '{user1000}.following', 3443],
  ];
  for (const [name, key, slot] of cases) test(`${name}: ${JSON.stringify(key)} → ${slot}`, () => assert.equal(keySlot(key), slot));

  test('keys sharing a tag share a slot', () => {
    assert.equal(keySlot('shardql:{inv}:epoch'), keySlot('shardql:{inv}:unshared'));
    assert.equal(keySlot('{user1000}.followers'), keySlot('{user1000}.following'));
  });
});

describe('hashTagOf and hashTag', () => {
  const cases: [key: string, tag: string | undefined][] = [
    ['plain', undefined],
    ['a{b}c', 'b'],
    ['a{}{b}', undefined],
    ['{', undefined],
    ['}{x}', 'x'],
  ];
  for (const [key, tag] of cases) test(`${JSON.stringify(key)} → ${JSON.stringify(tag)}`, () => assert.equal(hashTagOf(key), tag));

  test('hashTag wraps a tag and refuses one that would end early or be empty', () => {
    assert.equal(hashTag('shardql:jobs:feed'), '{shardql:jobs:feed}');
    assert.throws(() => hashTag('a}b'), /no braces, got "a}b"/);
    assert.throws(() => hashTag(''), /non-empty/);
  });
});
