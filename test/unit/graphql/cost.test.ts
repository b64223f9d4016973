import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, getOperationAST, parse, validate, specifiedRules } from 'graphql';
import { checkCost, DEFAULT_COST_BUDGET, estimateCost, eventCost, WRITE_ROUND_TRIPS, WRITE_ROWS } from '../../../src/graphql/cost.ts';
import { PINTEREST_EVENTS } from '../../../src/product/pinterest/events.ts';
import { aliasLimit, depthLimit, directiveLimit } from '../../../src/graphql/limits.ts';
import { loadTypeDefs } from '../../../src/graphql/schema.ts';
import { FEED_COST_SOURCES, FEED_MAX_SOURCES, feedCost } from '../../../src/loaders/feed.ts';
import { servedFeed } from '../../../src/product/served.ts';
import { isShardqlError, type ShardqlError } from '../../../src/core/errors.ts';

const schema = buildSchema(loadTypeDefs());
/** The served product's feed, as the gateway passes it (a read of Query.homeFeed is charged as one). */
const feed = feedCost(servedFeed()!);

function cost(query: string, variables: Record<string, unknown> = {}, hosts = 2) {
  const document = parse(query);
  const operation = getOperationAST(document)!;
  // The served product's feed and event fields, as the gateway passes them (server.ts).
  return estimateCost({ schema, document, operation, variables, hosts, feed, events: eventCost(PINTEREST_EVENTS) });
}

const pick = (c: { rows: number; levels: number }): { rows: number; levels: number } => ({ rows: c.rows, levels: c.levels });

function refusal(fn: () => unknown): ShardqlError {
  try {
    fn();
  } catch (err) {
    if (isShardqlError(err)) return err;
    throw err;
  }
  assert.fail('expected a ShardqlError');
}

describe('Cost: estimated from the physical plan', () => {
  const cases: [string, string, { rows: number; levels: number }][] = [
    ['one object', '{ pin(id: "1") { id title } }', { rows: 1, levels: 1 }],
    ['an object and two counts (counts share the lists batch)', '{ pin(id: "1") { likeCount repinCount } }', { rows: 3, levels: 2 }],
    ['a user by username is a lookup, then the object', '{ user(username: "alice") { id } }', { rows: 2, levels: 2 }],
    ['a page: first + 1 mapping rows, then first objects', '{ user(id: "1") { boards(first: 10) { edges { node { name } } } } }', { rows: 1 + 11 + 10, levels: 3 }],
    ['the default page is 20', '{ user(id: "1") { boards { edges { node { name } } } } }', { rows: 1 + 21 + 20, levels: 3 }],
    [
      'nested pages multiply',
      '{ user(id: "1") { boards(first: 10) { edges { node { pins(first: 10) { edges { node { title } } } } } } } }',
      { rows: 1 + 21 + 10 * 21, levels: 5 },
    ],
    ['object references read one row per parent', '{ pin(id: "1") { board { owner { username } } pinner { id } } }', { rows: 1 + 2 + 1, levels: 3 }],
    ['viewer flags are edge checks', '{ pin(id: "1") { viewerHasLiked } }', { rows: 2, levels: 2 }],
    ['fragments and inline fragments count like fields', '{ node(id: "1") { ...U ... on Pin { likeCount } } } fragment U on User { followerCount }', { rows: 3, levels: 2 }],
    ['@skip and @include are honoured', '{ pin(id: "1") { likeCount @skip(if: true) repinCount @include(if: false) } }', { rows: 1, levels: 1 }],
    ['__typename and introspection are free', '{ __typename pin(id: "1") { __typename } }', { rows: 1, levels: 1 }],
  ];
  for (const [name, query, expected] of cases) {
    test(name, () => {
      const c = cost(query);
      assert.deepEqual({ rows: c.rows, levels: c.levels }, expected);
      assert.equal(c.roundTrips, c.levels * 2);
    });
  }

  test('page sizes come from variables', () => {
    const q = 'query($n: Int) { user(id: "1") { boards(first: $n) { edges { node { id } } } } }';
    assert.equal(cost(q, { n: 5 }).rows, 1 + 6 + 5);
    assert.equal(cost(q, {}).rows, 1 + 21 + 20);
  });

  test('the home feed is charged its stored path: follow lists, follower counts, the stored page and FEED_COST_SOURCES pages, pins, pinners and boards', () => {
    const c = cost('{ homeFeed(first: 10) { edges { node { id } } } }');
    assert.equal(c.rows, 2 * (FEED_MAX_SOURCES + 1) + 2 * FEED_MAX_SOURCES + (FEED_COST_SOURCES + 1) * 11 + 3 * 10);
    assert.equal(c.levels, 5);
  });

  test("the feed's charge follows the declared feed: one kind of source is one follow list and one source per item; no declared feed, a plain connection", () => {
    const document = parse('{ homeFeed(first: 10) { edges { node { id } } } }');
    const at = (f: typeof feed | undefined) => estimateCost({ schema, document, operation: getOperationAST(document)!, variables: {}, hosts: 2, feed: f });
    assert.equal(at({ ...feed, sources: 1 }).rows, 1 * (FEED_MAX_SOURCES + 1) + 1 * FEED_MAX_SOURCES + (FEED_COST_SOURCES + 1) * 11 + 2 * 10);
    assert.deepEqual(pick(at(undefined)), { rows: 11 + 10, levels: 2 });
    assert.deepEqual(pick(at({ ...feed, field: 'otherFeed' })), { rows: 11 + 10, levels: 2 });
  });

  test('latestActivity: perKind events of each kind asked, reading on past hidden ones, then each event\'s objects; a column is a plain list', () => {
    // At worst a kind reads on 3 more times (2, 4, 8 × perKind events) past hidden events, each
    // such read checking one subject per event: perKind × (1 + 2 × 14) rows and 2 levels a read.
    const readOn = (perKind: number) => perKind * (1 + 2 * 14);
    // 1 user; 2 kinds × 4 events read; per event its actor and pin.
    const q = '{ user(id: "1") { latestActivity(kinds: [LIKE, COMMENT], perKind: 4) { kind events { actor { id } pin { id } } } } }';
    assert.deepEqual(pick(cost(q)), { rows: 1 + 2 * readOn(4) + 2 * 4 * 2, levels: 3 + 3 * 2 });
    // Default: every kind (5), 5 per kind; a kind asked twice counts once.
    assert.deepEqual(pick(cost('{ user(id: "1") { latestActivity { events { actor { id } } } } }')), { rows: 1 + 5 * readOn(5) + 5 * 5, levels: 3 + 3 * 2 });
    assert.deepEqual(pick(cost('{ user(id: "1") { latestActivity(kinds: [LIKE, LIKE], perKind: 2) { events { actor { id } } } } }')), { rows: 1 + readOn(2) + 2, levels: 3 + 3 * 2 });
    const tooMany = refusal(() => cost('{ user(id: "1") { latestActivity(perKind: 101) { kind } } }'));
    assert.equal(tooMany.code, 'INVALID_ARGUMENT');
    assert.equal(tooMany.details.argument, 'perKind');
  });

  test('notifications: grouping reads every kept event of the kinds asked, whatever first; each group\'s actors are a list of up to 3', () => {
    const q = '{ viewer { notifications(first: 10, kinds: [LIKE]) { edges { node { count pin { id } actors { id } } } } } }';
    // viewer 1; the scan 1 × 1000; the page 11 + 10 (the generic connection charge); per group its pin and 3 actors.
    assert.deepEqual(pick(cost(q)), { rows: 1 + 1000 + 21 + 10 * (1 + 3), levels: 5 });
    const document = parse('{ viewer { notifications { edges { node { count } } } } }');
    const kept = estimateCost({ schema, document, operation: getOperationAST(document)!, variables: {}, hosts: 2, events: eventCost(PINTEREST_EVENTS, 50) });
    assert.deepEqual(pick(kept), { rows: 1 + 5 * 50 + 41, levels: 4 });
    // Aliases multiply it: 11 pages of notifications are over the default budget.
    const many = `{ viewer { ${Array.from({ length: 11 }, (_, i) => `n${i}: notifications(first: 1) { edges { node { count } } }`).join(' ')} } }`;
    assert.equal(refusal(() => checkCost(cost(many), DEFAULT_COST_BUDGET)).code, 'QUERY_TOO_COMPLEX');
  });

  test('mutations run one after another: each its own write and levels', () => {
    const c = cost('mutation { a: likePin(pinId: "1") { likeCount } b: likePin(pinId: "2") { likeCount } }');
    assert.equal(c.rows, 2 * (WRITE_ROWS + 1));
    assert.equal(c.roundTrips, 2 * WRITE_ROUND_TRIPS + 2 * 2);
  });

  test('round trips are levels × hosts, not objects', () => {
    const q = '{ user(id: "1") { boards(first: 100) { edges { node { pinCount } } } } }';
    // The user; the boards page; the boards; their counts.
    assert.equal(cost(q, {}, 1).roundTrips, 4);
    assert.equal(cost(q, {}, 8).roundTrips, 32);
  });

  test('a page size out of 1..100 is INVALID_ARGUMENT before anything runs, however deep', () => {
    for (const first of [0, -1, 101, 1000000]) {
      const err = refusal(() => cost(`{ user(id: "1") { boards(first: 1) { edges { node { pins(first: ${first}) { edges { cursor } } } } } } }`));
      assert.equal(err.code, 'INVALID_ARGUMENT');
      assert.equal(err.details.argument, 'first');
    }
  });

  test('a backward page (`last`) is charged what a forward page of its size is; its size is bounded alike', () => {
    const forward = cost('{ user(id: "1") { boards(first: 10) { edges { node { pins(first: 7) { edges { node { title } } } } } } } }');
    const backward = cost('{ user(id: "1") { boards(last: 10, before: "x") { edges { node { pins(last: 7) { edges { node { title } } } } } } } }');
    assert.deepEqual(pick(backward), pick(forward));
    assert.deepEqual(pick(backward), { rows: 1 + 21 + 10 * 15, levels: 5 });
    // From variables too: `last` is what makes the page's size then.
    assert.deepEqual(pick(cost('query($n: Int) { user(id: "1") { boards(last: $n) { edges { cursor } } } }', { n: 50 })), { rows: 1 + 51 + 50, levels: 3 });
    for (const last of [0, -1, 101]) {
      const err = refusal(() => cost(`{ user(id: "1") { boards(first: 1) { edges { node { pins(last: ${last}) { edges { cursor } } } } } } }`));
      assert.equal(err.code, 'INVALID_ARGUMENT');
      assert.equal(err.details.argument, 'last');
    }
  });

  test('`first` with `last` is INVALID_ARGUMENT naming both (the connections specification discourages it; no page answers it)', () => {
    const err = refusal(() => cost('query($f: Int, $l: Int) { user(id: "1") { boards(first: $f, last: $l) { edges { cursor } } } }', { f: 5, l: 5 }));
    assert.equal(err.code, 'INVALID_ARGUMENT');
    assert.match(err.message, /Expected first or last, not both, got first 5 and last 5/);
    // A null one is absent (Relay sends the other direction's size as null).
    assert.deepEqual(pick(cost('query($f: Int, $l: Int) { user(id: "1") { boards(first: $f, last: $l) { edges { cursor } } } }', { f: null, l: 5 })), { rows: 1 + 6 + 5, levels: 3 });
  });

  test('over budget is QUERY_TOO_COMPLEX, stating the cost and the budget', () => {
    const c = cost('{ user(id: "1") { boards(first: 100) { edges { node { pins(first: 100) { edges { node { likers(first: 100) { edges { cursor } } } } } } } } } }');
    assert.ok(c.rows > 1_000_000, `${c.rows}`);
    const err = refusal(() => checkCost(c, DEFAULT_COST_BUDGET));
    assert.equal(err.code, 'QUERY_TOO_COMPLEX');
    assert.equal(err.details.cost, c.rows);
    assert.equal(err.details.budget, DEFAULT_COST_BUDGET.rows);
    const rt = refusal(() => checkCost({ rows: 1, levels: 10, roundTrips: 1000 }, DEFAULT_COST_BUDGET));
    assert.equal(rt.details.sqlRoundTrips, 1000);
    checkCost(cost('{ user(id: "1") { boards(first: 20) { edges { node { pins(first: 25) { edges { node { likers(first: 3) { edges { cursor } } } } } } } } } }'), DEFAULT_COST_BUDGET);
  });
});

describe('Limits: the shape of an operation', () => {
  const errorsOf = (query: string) => validate(schema, parse(query), [...specifiedRules, depthLimit(12), aliasLimit(30), directiveLimit(10)]);
  const limitOf = (query: string): unknown[] =>
    errorsOf(query).map((e) => (isShardqlError(e.originalError) ? [e.originalError.code, e.originalError.details.limit] : e.message));

  test('depth over 12 is refused, through fragments too', () => {
    // n fields deep: pin, n - 2 vias, id.
    const deep = (n: number): string => `{ pin(id: "1") { ${'via { '.repeat(n - 2)}id${' }'.repeat(n - 2)} } }`;
    assert.deepEqual(limitOf(deep(12)), []);
    assert.deepEqual(limitOf(deep(13)), [['QUERY_TOO_COMPLEX', 'depth']]);
    assert.deepEqual(limitOf(`{ pin(id: "1") { ...A } } fragment A on Pin { ${'via { '.repeat(12)}id${' }'.repeat(12)} }`), [['QUERY_TOO_COMPLEX', 'depth']]);
  });

  test('more than 30 aliases is refused, counting fragments', () => {
    const aliases = (n: number): string => Array.from({ length: n }, (_, i) => `a${i}: pin(id: "1") { id }`).join(' ');
    assert.deepEqual(limitOf(`{ ${aliases(30)} }`), []);
    assert.deepEqual(limitOf(`{ ${aliases(31)} }`), [['QUERY_TOO_COMPLEX', 'aliases']]);
    assert.deepEqual(limitOf(`{ ${aliases(20)} ...F } fragment F on Query { ${Array.from({ length: 11 }, (_, i) => `f${i}: viewer { id }`).join(' ')} }`), [['QUERY_TOO_COMPLEX', 'aliases']]);
  });

  test('more than 10 directives is refused', () => {
    const fields = (n: number): string => Array.from({ length: n }, () => 'id @include(if: true)').join(' ');
    assert.deepEqual(limitOf(`{ viewer { ${fields(10)} } }`), []);
    assert.deepEqual(limitOf(`{ viewer { ${fields(11)} } }`), [['QUERY_TOO_COMPLEX', 'directives']]);
  });
});
