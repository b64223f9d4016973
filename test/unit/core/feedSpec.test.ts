import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveFeed, sourcesOf, type FeedSpec } from '../../../src/core/feedSpec.ts';
import { readModelFiles } from '../../../src/core/model/modelFiles.ts';
import { parseModel } from '../../../src/core/model/parseModel.ts';
import { servedModel } from '../../../src/core/model/served.ts';
import { pinterestFeed } from '../../../src/product/pinterest/feed.ts';

const pinterest = servedModel();
const qa = parseModel(readModelFiles('examples/qa'));

describe('Feed spec: resolved against the model', () => {
  test("Pinterest's feed: each source's items from its reference's listing, its followers from the follow list's inverse", () => {
    assert.deepEqual(resolveFeed(pinterestFeed, pinterest), {
      feed: {
        field: 'homeFeed',
        item: 'pin',
        sources: [
          { ref: 'pinner', type: 'user', follows: 'user_follows_users', followers: 'user_followed_by_users', items: 'user_has_pins' },
          { ref: 'board', type: 'board', follows: 'user_follows_boards', followers: 'board_followed_by_users', items: 'board_has_pins' },
        ],
      },
      problems: [],
    });
  });

  test('a feed of another model: questions reach the followers of their author', () => {
    const spec: FeedSpec = { field: 'questionFeed', item: 'question', sources: [{ ref: 'author', follows: 'user_follows_users' }] };
    const { feed, problems } = resolveFeed(spec, qa);
    assert.deepEqual(problems, []);
    assert.deepEqual(feed?.sources, [{ ref: 'author', type: 'user', follows: 'user_follows_users', followers: 'user_followed_by_users', items: 'user_asked_questions' }]);
  });

  const withSource = (source: FeedSpec['sources'][number], item = 'pin'): FeedSpec => ({ field: 'homeFeed', item, sources: [pinterestFeed.sources[0]!, source] });
  const refused: [string, FeedSpec, string[]][] = [
    ['an item type the model lacks', { ...pinterestFeed, item: 'photo' }, ['type photo']],
    ['a reference the item lacks', withSource({ ref: 'album', follows: 'user_follows_boards' }), ['ref pin.album']],
    ['a follow list the model lacks', withSource({ ref: 'board', follows: 'user_follows_walls' }), ['relation user_follows_walls']],
    ['a follow list of another type of source', withSource({ ref: 'board', follows: 'user_follows_users' }), ['relation user_follows_users from user to board (got from user to user)']],
    ['a follow list without an inverse to find followers by', withSource({ ref: 'board', follows: 'user_has_boards' }), ["relation user_has_boards with an inverse listing a board's followers"]],
    ['one source named twice', withSource(pinterestFeed.sources[0]!), ['feed homeFeed: source pinner named twice']],
    ['no source', { ...pinterestFeed, sources: [] }, ['feed homeFeed: at least one source (expected sources, got none)']],
  ];
  for (const [name, spec, problems] of refused) {
    test(`refused: ${name}`, () => assert.deepEqual(resolveFeed(spec, pinterest), { feed: undefined, problems }));
  }

  test('refused: a reference named like the item or its time, which a fan-out payload already names', () => {
    // A pin with a reference `time` to a user, listed in user_has_pins: everything else fits.
    const pinType = pinterest.objects.find((o) => o.key === 'pin')!;
    const withTime = { ...pinterest, objects: pinterest.objects.map((o) => (o === pinType ? { ...o, refs: [...o.refs, { ...o.refs.find((r) => r.field === 'pinner')!, field: 'time', key: 'time_id' }] } : o)) };
    const spec: FeedSpec = { field: 'homeFeed', item: 'pin', sources: [{ ref: 'time', follows: 'user_follows_users' }] };
    assert.deepEqual(resolveFeed(spec, withTime).problems, ['feed homeFeed: a source\'s reference other than pin and time (they name the item and its time in a fan-out), got time']);
    assert.deepEqual(resolveFeed({ ...spec, sources: [{ ref: 'pinner', follows: 'user_follows_users' }] }, withTime).problems, []);
  });

  test('refused in another model: a follow list without an inverse (examples/qa saves questions, nobody follows them)', () => {
    const spec: FeedSpec = { field: 'answerFeed', item: 'answer', sources: [{ ref: 'question', follows: 'user_saved_questions' }] };
    assert.deepEqual(resolveFeed(spec, qa), { feed: undefined, problems: ["relation user_saved_questions with an inverse listing a question's followers"] });
  });
});

describe('Feed spec: the sources an item names', () => {
  test('every source by its reference', () => assert.deepEqual(sourcesOf(pinterestFeed, { pinner: 7n, board: 9n, via: 3n }), { pinner: 7n, board: 9n }));
  test('an item without one of them reaches no feed', () => assert.equal(sourcesOf(pinterestFeed, { pinner: 7n }), undefined));
});
