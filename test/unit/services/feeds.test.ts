import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveFeed } from '../../../src/core/feedSpec.ts';
import { servedModel } from '../../../src/core/model/served.ts';
import { pinterestFeed } from '../../../src/product/pinterest/feed.ts';
import { visibleIn, type Follows } from '../../../src/services/feeds.ts';
import { storedObject, type StoredObject } from '../../../src/storage/objectStore.ts';

const feed = resolveFeed(pinterestFeed, servedModel()).feed!;
const pinner = storedObject(1n, 'user', { username: 'p' }, 1, 1);
const board = storedObject(2n, 'board', { name: 'b', owner_id: '1' }, 1, 1);
const pin = storedObject(3n, 'pin', { board_id: '2', pinner_id: '1' }, 5, 5);
const gone = (o: StoredObject): StoredObject => storedObject(o.id, o.type, { ...o.data, active: false }, o.createdAt, o.updatedAt);
const follows = (pinners: bigint[], boards: bigint[]): Follows => new Map([['pinner', new Set(pinners)], ['board', new Set(boards)]]);

describe('Feeds: what an item may show, by the feed the product declares', () => {
  const cases: [string, StoredObject | null, Follows, StoredObject[], boolean][] = [
    ['a pin of a followed pinner', pin, follows([1n], []), [pinner, board], true],
    ['a pin on a followed board', pin, follows([], [2n]), [pinner, board], true],
    ['a pin of no source followed', pin, follows([9n], [8n]), [pinner, board], false],
    ['a deleted pin', gone(pin), follows([1n], [2n]), [pinner, board], false],
    ['a pin of a deleted pinner, followed through its board', pin, follows([], [2n]), [gone(pinner), board], false],
    ['a pin on a deleted board, followed through its pinner', pin, follows([1n], []), [pinner, gone(board)], false],
    ['a pin whose board is missing', pin, follows([1n], []), [pinner], false],
    ['an object of another type', board, follows([1n], [2n]), [pinner, board], false],
    ['nothing', null, follows([1n], [2n]), [pinner, board], false],
  ];
  for (const [name, item, f, loaded, shows] of cases) {
    test(`${name}: ${shows ? 'shows' : 'hidden'}`, () => {
      const objects = new Map(loaded.map((o) => [o.id, o]));
      assert.equal(visibleIn(feed, f, item, (id) => objects.get(id)), shows);
    });
  }
});
