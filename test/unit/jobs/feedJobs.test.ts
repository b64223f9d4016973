import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { feedJobs } from '../../../src/jobs/kinds/feed.ts';
import { JobPayloadError } from '../../../src/jobs/jobKind.ts';
import { pinterestFeed } from '../../../src/product/pinterest/feed.ts';
import type { FeedSpec } from '../../../src/core/feedSpec.ts';

const pinterest = feedJobs(() => pinterestFeed);
const item = { item: 11n, sources: { pinner: 22n, board: 33n } };

describe('Feed jobs: payloads named in the feed’s own words', () => {
  test('a fan-out of a pin crosses the queue as { pin, pinner, board, time }, as the build before the feed spec wrote it', () => {
    const data = pinterest['feed.fanout'].encode({ ...item, time: 1764136800000 });
    assert.deepEqual(data, { pin: '11', pinner: '22', board: '33', time: 1764136800000 });
    assert.deepEqual(Object.keys(data), ['pin', 'pinner', 'board', 'time']);
    assert.deepEqual(pinterest['feed.fanout'].decode(JSON.parse(JSON.stringify(data))), { ...item, time: 1764136800000 });
    assert.equal(pinterest['feed.fanout'].jobId!({ ...item, time: 1 }), 'fanout-11');
  });

  test('a retraction: { pin, pinner, board }, one job per pin', () => {
    assert.deepEqual(pinterest['feed.retract'].encode(item), { pin: '11', pinner: '22', board: '33' });
    assert.deepEqual(pinterest['feed.retract'].decode({ pin: '11', pinner: '22', board: '33' }), item);
    assert.equal(pinterest['feed.retract'].jobId!(item), 'retract-11');
  });

  test('another feed names its payload by its own item and sources', () => {
    const questions: FeedSpec = { field: 'questionFeed', item: 'question', sources: [{ ref: 'author', follows: 'user_follows_users' }] };
    const jobs = feedJobs(() => questions);
    assert.deepEqual(jobs['feed.fanout'].encode({ item: 5n, sources: { author: 6n }, time: 7 }), { question: '5', author: '6', time: 7 });
    assert.deepEqual(jobs['feed.fanout'].decode({ question: '5', author: '6', time: 7 }), { item: 5n, sources: { author: 6n }, time: 7 });
  });

  const refused: [string, unknown, RegExp][] = [
    ['a source missing', { pin: '11', pinner: '22', time: 1 }, /^board: expected a string matching/],
    ['the item missing', { pinner: '22', board: '33', time: 1 }, /^pin: expected a string matching/],
    ['an ID that is not decimal', { pin: '0x1', pinner: '22', board: '33', time: 1 }, /^pin: expected/],
    ['a time that is not ms since the epoch', { pin: '11', pinner: '22', board: '33', time: -1 }, /^time: expected ms since the epoch, got -1/],
  ];
  for (const [name, data, message] of refused) {
    test(`a fan-out payload with ${name} is refused`, () => assert.throws(() => pinterest['feed.fanout'].decode(data), (e: unknown) => e instanceof JobPayloadError && message.test(e.message)));
  }

  test('a clean names its items; a payload without them cleans the whole feed', () => {
    assert.deepEqual(pinterest['feed.clean'].encode({ viewer: 1n, items: [2n, 3n] }), { viewer: '1', items: ['2', '3'] });
    assert.deepEqual(pinterest['feed.clean'].decode({ viewer: '1', items: ['2', '3'] }), { viewer: 1n, items: [2n, 3n] });
    assert.deepEqual(pinterest['feed.clean'].decode({ viewer: '1' }), { viewer: 1n });
  });

  test('without a declared feed (examples/qa) every feed payload is refused: nothing enqueues one', () => {
    const none = feedJobs(() => undefined);
    assert.throws(() => none['feed.fanout'].encode({ ...item, time: 1 }), /expected a home feed declared by an attached product, got none/);
    assert.throws(() => none['feed.retract'].decode({ pin: '11', pinner: '22', board: '33' }), JobPayloadError);
  });
});
