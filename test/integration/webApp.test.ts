/**
 * The web app (web/) in headless Chromium against real gateways: one in development (the app's
 * manifest known beside free-form queries, the page signed in as alice) and one in production with
 * the app's manifest as its trusted documents. Every request the page makes is watched: GraphQL
 * ones must carry a persisted ID and no document, and none may leave the machine.
 *
 * SHARDQL_WEB_SCREENSHOTS=1 writes a screenshot of each page into docs/images/web-*.png.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { codes, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { seedDemo } from '../../src/demo/seed.ts';
import { buildWeb, compileDocuments, WebBuildError } from '../../scripts/buildWeb.mjs';
import { JwksServer, PROVIDER_AUDIENCE, PROVIDER_ISSUER, providerKey } from '../helpers/oidcProvider.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SCREENSHOTS = process.env.SHARDQL_WEB_SCREENSHOTS === '1';
/** The app's page size on a board (web/src/BoardPage.tsx BOARD_PAGE_SIZE). */
const BOARD_PAGE = 12;
const PAGING_PINS = 30;
/** The app's page sizes on a profile (web/src/ProfilePage.tsx) and the home feed (web/src/HomePage.tsx). */
const PROFILE_PINS_PAGE = 12;
const PEOPLE_PAGE = 20;
const FEED_PAGE = 12;
/** How many users follow (and are followed by) the paged profile: more than one page of people. */
const PAGING_FANS = 25;

let env: TestEnv;
let dev: TestGateway;
let prod: TestGateway;
let browser: Browser;
let manifest: Record<string, string>;
let webDir: string;
let users: Map<string, string>;
let aliceToken: string;
/** Every GraphQL request body any page sent, every request that tried to leave, every page error. */
const graphqlBodies: Record<string, unknown>[] = [];
const external: string[] = [];
const pageErrors: string[] = [];

before(async () => {
  env = await freshEnv({ shards: 16 });
  const demo = await seedDemo(env.storage, () => env.topology);
  users = new Map(demo.users.map((u) => [u.username, u.id.toString()]));
  const dir = await buildWeb();
  webDir = dir;
  manifest = JSON.parse(readFileSync(join(dir, 'persisted-documents.json'), 'utf8')) as Record<string, string>;
  const alice = users.get('alice')!;
  const { mintToken } = await import('../../src/auth/tokens.ts');
  const { TEST_JWT_SECRET } = await import('../helpers/gateway.ts');
  aliceToken = await mintToken(TEST_JWT_SECRET, BigInt(alice), 3600);
  dev = await startTestGateway(env, 'web-dev', { webApp: dir }, { graphiqlToken: aliceToken });
  prod = await startTestGateway(env, 'web-prod', { env: 'production', webApp: dir, trustedDocuments: join(dir, 'persisted-documents.json') });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  await prod?.stop();
  await env?.close();
});

/** A page whose requests are watched: loopback ones go through, any other is recorded and refused. */
async function openPage(opts: { token?: string; hold?: { operation: string; until: Promise<void> } } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    // A held operation reaches the gateway only once `until` resolves: what the page shows meanwhile is its own doing.
    if (opts.hold && url.pathname === '/graphql' && (route.request().postDataJSON() as { operationName?: string }).operationName === opts.hold.operation) await opts.hold.until;
    if (url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]') return route.continue();
    external.push(url.href);
    return route.abort('blockedbyclient');
  });
  if (opts.token !== undefined) await context.addInitScript(`window.localStorage.setItem('shardql.token', ${JSON.stringify(opts.token)})`);
  const page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(`uncaught: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(`console: ${msg.text()}`);
  });
  page.on('request', (req) => {
    if (new URL(req.url()).pathname === '/graphql') graphqlBodies.push(req.postDataJSON() as Record<string, unknown>);
  });
  return { context, page };
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/images', `web-${name}.png`), fullPage: false });
}

/** The text of every element matching `selector`, in order. */
const texts = (page: Page, selector: string): Promise<string[]> => page.locator(selector).allInnerTexts();

/** Waits for the answer to the page's next operation named `name`, and for the page to render it. */
function answered(page: Page, name: string) {
  return page.waitForResponse((r) => new URL(r.url()).pathname === '/graphql' && (r.request().postDataJSON() as { operationName?: string })?.operationName === name);
}

/** Waits until the element shows exactly this number. */
const shows = (locator: Locator, n: number): Promise<void> => locator.filter({ hasText: new RegExp(`^${n}$`) }).waitFor();

async function devOk(query: string, variables: Record<string, unknown> = {}): Promise<Record<string, any>> {
  return dev.ok(query, variables, aliceToken);
}

describe('The web app in development', () => {
  test('the profile renders with its boards (with pin counts), pins, followers, following and activity', async () => {
    const { context, page } = await openPage();
    try {
      await page.goto(`${dev.url}/app/u/alice`);
      await page.getByTestId('profile').waitFor();
      const truth = await devOk('{ user(username: "alice") { boards(first: 50) { edges { node { name pinCount } } } pins(first: 12) { edges { node { title } } } followers(first: 20) { edges { node { username } } } following(first: 20) { edges { node { username } } } activity(first: 10) { edges { node { kind pin { title } board { name } user { username } } } } } }');
      const boards = truth.user.boards.edges.map((e: any) => e.node);
      assert.deepEqual(await texts(page, '[data-testid=board-name]'), boards.map((b: any) => b.name));
      assert.deepEqual(await texts(page, '[data-testid=board-pin-count]'), boards.map((b: any) => String(b.pinCount)));
      assert.ok(boards.some((b: any) => b.name === 'Tea time' && b.pinCount === 5), 'Tea time: 3 pins and 2 repins');
      assert.deepEqual(await texts(page, '[data-testid=pin-card] .pin-title'), truth.user.pins.edges.map((e: any) => e.node.title));
      assert.deepEqual(await texts(page, '[data-testid=followers] [data-testid=username]'), truth.user.followers.edges.map((e: any) => e.node.username));
      assert.deepEqual((await texts(page, '[data-testid=following] [data-testid=username]')).sort(), ['bob', 'carol', 'erin']);
      const activity = (await texts(page, '[data-testid=activity] li')).map((t) => t.replace(/\s+/g, ' '));
      const verbs = { LIKE: 'liked', REPIN: 'saved', COMMENT: 'commented on', FOLLOW_USER: 'followed', FOLLOW_BOARD: 'followed the board' } as Record<string, string>;
      const events = truth.user.activity.edges.map((e: any) => e.node);
      assert.deepEqual(
        activity.map((t) => t.replace(/ \S+$/, '')),
        events.map((n: any) => `${verbs[n.kind]} ${n.pin?.title ?? n.board?.name ?? n.user?.username}`),
      );
      assert.ok(activity.some((t) => t.startsWith('saved Fern wall')), "alice's repin of erin's pin shows as activity");
      await screenshot(page, 'profile');
    } finally {
      await context.close();
    }
  });

  test("scrolling a board loads its next page, with no pin twice, until the board's end", async () => {
    const board = (await devOk('mutation { createBoard(input: { name: "Paging" }) { id } }')).createBoard.id as string;
    const titles: string[] = [];
    for (let i = 1; i <= PAGING_PINS; i++) {
      titles.push(`Paging pin ${i}`);
      await devOk('mutation($b: ID!, $t: String!) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: board, t: `Paging pin ${i}` });
    }
    const { context, page } = await openPage();
    try {
      const sent = graphqlBodies.length;
      await page.goto(`${dev.url}/app/b/${board}`);
      await page.getByTestId('board').waitFor();
      await page.locator('[data-testid=pin-card]').nth(BOARD_PAGE - 1).waitFor();
      assert.equal(await page.locator('[data-testid=pin-card]').count(), BOARD_PAGE, 'one page before any scrolling');
      assert.equal(graphqlBodies.slice(sent).filter((b) => b.operationName === 'BoardPinsPaginationQuery').length, 0, 'no next page asked for before scrolling');
      await screenshot(page, 'board');
      for (const shown of [2 * BOARD_PAGE, PAGING_PINS]) {
        await page.getByTestId('load-more').scrollIntoViewIfNeeded();
        await page.locator('[data-testid=pin-card]').nth(shown - 1).waitFor();
      }
      await page.getByText("That's all.").waitFor();
      const seen = await texts(page, '[data-testid=pin-card] .pin-title');
      assert.deepEqual(seen, [...titles].reverse(), 'every pin once, newest first');
      assert.equal(graphqlBodies.slice(sent).filter((b) => b.operationName === 'BoardPinsPaginationQuery').length, 2);
    } finally {
      await context.close();
    }
  });

  test("scrolling a profile pages its pins, followers and following, and a viewer's home feed, each item once and in order", async () => {
    const signUp = async (username: string): Promise<{ id: string; token: string }> => {
      const made = (await dev.ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u: username })).createUser;
      return { id: made.user.id, token: made.token };
    };
    const pager = await signUp('pager');
    const board = (await dev.ok('mutation { createBoard(input: { name: "Pager pins" }) { id } }', {}, pager.token)).createBoard.id as string;
    for (let i = 1; i <= PAGING_PINS; i++) {
      await dev.ok('mutation($b: ID!, $t: String!) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: board, t: `Pager pin ${i}` }, pager.token);
    }
    const fans: { id: string; token: string }[] = [];
    for (let i = 1; i <= PAGING_FANS; i++) {
      const fan = await signUp(`pager_fan_${i}`);
      await dev.ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: pager.id }, fan.token);
      await dev.ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: fan.id }, pager.token);
      fans.push(fan);
    }
    const truth = (await devOk('{ user(username: "pager") { pins(first: 100) { edges { node { title } } } followers(first: 100) { edges { node { username } } } following(first: 100) { edges { node { username } } } } }')).user;
    const pinTitles = truth.pins.edges.map((e: any) => e.node.title);
    const followers = truth.followers.edges.map((e: any) => e.node.username);
    const following = truth.following.edges.map((e: any) => e.node.username);
    assert.deepEqual([...pinTitles].sort(), Array.from({ length: PAGING_PINS }, (_, i) => `Pager pin ${i + 1}`).sort());
    assert.equal(followers.length, PAGING_FANS);
    assert.equal(following.length, PAGING_FANS);

    const ops = (from: number, name: string): number => graphqlBodies.slice(from).filter((b) => b.operationName === name).length;
    /** Scrolls a list's end into view until it shows `total` items and says it has them all. */
    const scrollThrough = async (page: Page, list: string, item: string, total: number): Promise<void> => {
      const end = page.locator(`${list} [data-testid=load-more]`);
      while ((await page.locator(`${list} ${item}`).count()) < total) {
        const shown = await page.locator(`${list} ${item}`).count();
        await end.scrollIntoViewIfNeeded();
        await page.locator(`${list} ${item}`).nth(Math.min(shown, total - 1)).waitFor();
      }
      await end.getByText("That's all.").waitFor();
    };

    const { context, page } = await openPage();
    try {
      const sent = graphqlBodies.length;
      await page.goto(`${dev.url}/app/u/pager`);
      await page.getByTestId('profile').waitFor();
      await page.locator('[data-testid=profile-pins] [data-testid=pin-card]').nth(PROFILE_PINS_PAGE - 1).waitFor();
      assert.equal(ops(sent, 'ProfilePinsPaginationQuery'), 0, 'no next page of pins asked for before scrolling');
      await scrollThrough(page, '[data-testid=profile-pins]', '[data-testid=pin-card]', PAGING_PINS);
      await scrollThrough(page, '[data-testid=followers]', '[data-testid=username]', PAGING_FANS);
      await scrollThrough(page, '[data-testid=following]', '[data-testid=username]', PAGING_FANS);
      assert.deepEqual(await texts(page, '[data-testid=profile-pins] .pin-title'), pinTitles, 'every pin once, in the order the API gives');
      assert.deepEqual(await texts(page, '[data-testid=followers] [data-testid=username]'), followers, 'every follower once, in order');
      assert.deepEqual(await texts(page, '[data-testid=following] [data-testid=username]'), following, 'every followed user once, in order');
      assert.equal(ops(sent, 'ProfilePinsPaginationQuery'), Math.ceil(PAGING_PINS / PROFILE_PINS_PAGE) - 1);
      assert.equal(ops(sent, 'ProfileFollowersPaginationQuery'), Math.ceil(PAGING_FANS / PEOPLE_PAGE) - 1);
      assert.equal(ops(sent, 'ProfileFollowingPaginationQuery'), Math.ceil(PAGING_FANS / PEOPLE_PAGE) - 1);
    } finally {
      await context.close();
    }

    // A fan's home feed holds the pager's pins: more than two pages. Seen through the production
    // gateway (trusted documents only), signed in as the fan.
    const fan = fans[0]!;
    const feed = (await dev.ok('{ homeFeed(first: 100) { edges { node { title } } } }', {}, fan.token)).homeFeed.edges.map((e: any) => e.node.title);
    assert.deepEqual(feed, pinTitles, "the fan's feed: the pager's pins, newest first");
    const home = await openPage({ token: fan.token });
    try {
      const sent = graphqlBodies.length;
      await home.page.goto(`${prod.url}/app`);
      await home.page.getByTestId('home').waitFor();
      await home.page.locator('[data-testid=pin-card]').nth(FEED_PAGE - 1).waitFor();
      assert.equal(ops(sent, 'HomeFeedPaginationQuery'), 0, 'no next page of the feed asked for before scrolling');
      await scrollThrough(home.page, '[data-testid=home]', '[data-testid=pin-card]', feed.length);
      assert.deepEqual(await texts(home.page, '[data-testid=home] .pin-title'), feed, 'every feed pin once, in order');
      assert.equal(ops(sent, 'HomeFeedPaginationQuery'), Math.ceil(feed.length / FEED_PAGE) - 1);
    } finally {
      await home.context.close();
    }
  });

  test('a like moves the count at once, shows alice among the likers, and survives a reload', async () => {
    const pin = (await devOk('{ user(username: "dave") { pins(first: 1) { edges { node { id likeCount viewerHasLiked } } } } }')).user.pins.edges[0].node;
    assert.equal(pin.viewerHasLiked, false, 'the demo has alice not liking dave\'s newest pin');
    let release = (): void => undefined;
    const until = new Promise<void>((r) => (release = r));
    const { context, page } = await openPage({ hold: { operation: 'LikeButtonLikeMutation', until } });
    try {
      await page.goto(`${dev.url}/app/p/${pin.id}`);
      const count = page.getByTestId('pin').getByTestId('like-count');
      await count.waitFor();
      assert.equal(await count.innerText(), String(pin.likeCount));
      const done = answered(page, 'LikeButtonLikeMutation');
      await page.getByTestId('pin').getByTestId('like').click();
      await shows(count, pin.likeCount + 1);
      const held = (await devOk('query($id: ID!) { pin(id: $id) { likeCount } }', { id: pin.id })).pin.likeCount;
      assert.equal(held, pin.likeCount, 'the count moved before the write reached the gateway');
      release();
      await done;
      await page.getByTestId('likers').getByText('alice').waitFor();
      await screenshot(page, 'pin');
      await page.reload();
      await page.getByTestId('pin').getByTestId('like').and(page.locator('[aria-pressed=true]')).waitFor();
      assert.equal(await page.getByTestId('pin').getByTestId('like-count').innerText(), String(pin.likeCount + 1));
      const after = (await devOk('query($id: ID!) { pin(id: $id) { likeCount viewerHasLiked } }', { id: pin.id })).pin;
      assert.deepEqual(after, { likeCount: pin.likeCount + 1, viewerHasLiked: true });
    } finally {
      await context.close();
    }
  });

  test("a follow moves the count at once and shows in the followed user's followers, after a reload too", async () => {
    const { context, page } = await openPage();
    try {
      await page.goto(`${dev.url}/app/u/dave`);
      await page.getByTestId('profile').waitFor();
      const before = Number(await page.getByTestId('follower-count').innerText());
      assert.ok(!(await texts(page, '[data-testid=followers] [data-testid=username]')).includes('alice'));
      const done = answered(page, 'FollowButtonFollowMutation');
      await page.getByTestId('follow').click();
      await shows(page.getByTestId('follower-count'), before + 1);
      await done;
      await page.getByTestId('followers').getByText('alice').waitFor();
      await page.reload();
      await page.getByTestId('followers').getByText('alice').waitFor();
      assert.equal(await page.getByTestId('follower-count').innerText(), String(before + 1));
      assert.equal(await page.getByTestId('follow').innerText(), 'Following');
    } finally {
      await context.close();
    }
  });

  test('a comment, a repin, a new board and a new pin each move their counts', async () => {
    const pin = (await devOk('{ user(username: "erin") { pins(first: 1) { edges { node { id commentCount repinCount } } } } }')).user.pins.edges[0].node;
    const { context, page } = await openPage();
    try {
      await page.goto(`${dev.url}/app/p/${pin.id}`);
      await page.getByTestId('pin').waitFor();
      await page.getByLabel('Comment').fill('Nice greenhouse');
      await page.getByRole('button', { name: 'Comment' }).click();
      await page.getByTestId('comments').getByText('Nice greenhouse').waitFor();
      assert.equal(await page.getByTestId('comment-count').innerText(), String(pin.commentCount + 1));
      await page.getByRole('button', { name: 'Save to board' }).click();
      await shows(page.getByTestId('repin-count'), pin.repinCount + 1);

      await page.goto(`${dev.url}/app/u/alice`);
      await page.getByTestId('profile').waitFor();
      const boards = Number(await page.getByTestId('board-count').innerText());
      await page.getByLabel('New board name').fill('Made in the browser');
      await page.getByRole('button', { name: 'Create board' }).click();
      await page.getByTestId('board-name').getByText('Made in the browser').waitFor();
      assert.equal(await page.getByTestId('board-count').innerText(), String(boards + 1));

      await page.getByText('Made in the browser').click();
      await page.getByTestId('board').waitFor();
      assert.equal(await page.getByTestId('board-pin-total').innerText(), '0');
      await page.getByLabel('New pin title').fill('First of its board');
      await page.getByRole('button', { name: 'Add pin' }).click();
      await page.getByTestId('board-pins').getByText('First of its board').waitFor();
      assert.equal(await page.getByTestId('board-pin-total').innerText(), '1');
    } finally {
      await context.close();
    }
  });

  test("a refused write shows the gateway's message and leaves the page as the server holds it", async () => {
    const pin = (await devOk('{ user(username: "carol") { pins(first: 1) { edges { node { id commentCount } } } } }')).user.pins.edges[0].node;
    const { context, page } = await openPage();
    try {
      await page.goto(`${dev.url}/app/p/${pin.id}`);
      await page.getByTestId('pin').waitFor();
      const comments = await texts(page, '[data-testid=comments] li');
      const done = answered(page, 'PinPageCommentMutation');
      await page.getByLabel('Comment').fill('   ');
      await page.getByRole('button', { name: 'Comment' }).click();
      await done;
      const banner = page.locator('.banner[role=alert]');
      await banner.waitFor();
      assert.match(await banner.innerText(), /Expected text to be non-empty text/);
      assert.equal(await page.getByTestId('comment-count').innerText(), String(pin.commentCount));
      assert.deepEqual(await texts(page, '[data-testid=comments] li'), comments);
    } finally {
      await context.close();
    }
  });

  test('a like refused (its pin deleted meanwhile) rolls its optimistic count back and says why', async () => {
    const board = (await devOk('{ user(username: "alice") { boards(first: 1) { edges { node { id } } } } }')).user.boards.edges[0].node.id;
    const pin = (await devOk('mutation($b: ID!) { createPin(input: { boardId: $b, title: "Soon gone" }) { id } }', { b: board })).createPin.id;
    const { context, page } = await openPage();
    try {
      await page.goto(`${dev.url}/app/p/${pin}`);
      const count = page.getByTestId('pin').getByTestId('like-count');
      await shows(count, 0);
      await devOk('mutation($id: ID!) { deletePin(id: $id) { deleted } }', { id: pin });
      const done = answered(page, 'LikeButtonLikeMutation');
      await page.getByTestId('pin').getByTestId('like').click();
      const answer = await (await done).json();
      assert.deepEqual(answer.errors.map((e: any) => e.extensions.code), ['NOT_FOUND']);
      const banner = page.locator('.banner[role=alert]');
      await banner.waitFor();
      assert.equal(await banner.locator('.banner-text').innerText(), answer.errors[0].message);
      await shows(count, 0);
      assert.equal(await page.getByTestId('pin').getByTestId('like').getAttribute('aria-pressed'), 'false');
    } finally {
      await context.close();
    }
  });

  test('the home feed and the notifications render', async () => {
    const { context, page } = await openPage();
    try {
      await page.goto(`${dev.url}/app`);
      await page.getByTestId('home').waitFor();
      await page.locator('[data-testid=pin-card]').first().waitFor();
      const feed = await devOk('{ homeFeed(first: 12) { edges { node { title } } } }');
      assert.deepEqual(await texts(page, '[data-testid=pin-card] .pin-title'), feed.homeFeed.edges.map((e: any) => e.node.title ?? 'Untitled pin'));
      await screenshot(page, 'home');
      await page.getByRole('link', { name: 'Notifications' }).click();
      await page.getByTestId('notifications').waitFor();
      const items = await texts(page, '.notifications li');
      assert.ok(items.some((t) => /liked your pin/.test(t)), JSON.stringify(items));
      assert.ok(items.some((t) => /followed you/.test(t)), JSON.stringify(items));
      await screenshot(page, 'notifications');
    } finally {
      await context.close();
    }
  });

  test('GraphiQL stays free beside the manifest: a free-form query runs, an unknown document ID does not', async () => {
    const free = await dev.gql('{ user(username: "alice") { username } }');
    assert.equal(free.body.data.user.username, 'alice');
    const unknown = await dev.gql('', {}, { body: { documentId: 'f'.repeat(64) } });
    assert.deepEqual(codes(unknown), ['PERSISTED_QUERY_NOT_FOUND']);
  });
});

describe('The web app against a gateway in production with trusted documents', () => {
  test('the page (signed in with a pasted token) works; a document outside the manifest is refused', async () => {
    const html = await (await fetch(`${prod.url}/app/u/alice`)).text();
    assert.doesNotMatch(html, /"token"/, 'production hands out no token');
    const { context, page } = await openPage({ token: aliceToken });
    try {
      await page.goto(`${prod.url}/app/u/alice`);
      await page.getByTestId('profile').waitFor();
      assert.ok((await texts(page, '[data-testid=board-name]')).includes('Tea time'));
      await page.locator('[data-testid=pin-card]').first().waitFor();
    } finally {
      await context.close();
    }
    const outside = await prod.gql('{ user(username: "alice") { username } }', {}, { token: aliceToken });
    assert.deepEqual(codes(outside), ['PERSISTED_QUERY_NOT_ALLOWED']);
    const [id, text] = Object.entries(manifest).find(([, t]) => t.startsWith('query AppViewerQuery'))!;
    const byId = await prod.gql('', {}, { token: aliceToken, body: { documentId: id } });
    assert.equal(byId.body.data.viewer.username, 'alice');
    assert.ok(text.length > 0);
  });
});

describe('The web app signing in with an identity provider (production)', () => {
  let provider: JwksServer;
  let gateway: TestGateway;
  before(async () => {
    provider = new JwksServer();
    provider.published = [await providerKey('web-rsa-1', 'RS256')];
    const jwksUrl = await provider.start();
    gateway = await startTestGateway(env, 'web-oidc', {
      env: 'production',
      webApp: webDir,
      trustedDocuments: join(webDir, 'persisted-documents.json'),
      identityProvider: { jwksUrl, issuer: PROVIDER_ISSUER, audience: PROVIDER_AUDIENCE },
      webSignIn: { name: 'Example ID', clientId: provider.clientId, authorizationUrl: provider.authorizationUrl, tokenUrl: provider.tokenUrl, scope: 'openid', audience: PROVIDER_AUDIENCE },
    });
    provider.appOrigin = new URL(gateway.url).origin;
  });
  after(async () => {
    await gateway?.stop();
    await provider?.stop();
  });

  /** A code the provider issues for `challenge`, as a browser sent to /authorize would get it. */
  async function codeFor(challenge: string, redirectUri: string): Promise<string> {
    const url = new URL(provider.authorizationUrl);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: provider.clientId, redirect_uri: redirectUri, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.status, 302);
    const code = new URL(res.headers.get('location')!).searchParams.get('code');
    assert.ok(code, res.headers.get('location')!);
    return code;
  }
  const exchange = (code: string, verifier: string, redirectUri: string) =>
    fetch(provider.tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: provider.clientId, code_verifier: verifier }) });

  test('"Sign in with Example ID" lands back on the page signed in, its requests carrying the provider\'s token', async () => {
    provider.user = users.get('alice')!;
    const res = await fetch(`${gateway.url}/app/u/alice`);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, new RegExp(`connect-src 'self' ${new URL(provider.tokenUrl).origin};`), csp);
    const { context, page } = await openPage();
    try {
      await page.goto(`${gateway.url}/app/u/alice`);
      const button = page.getByTestId('provider-sign-in');
      assert.equal(await button.innerText(), 'Sign in with Example ID');
      const request = page.waitForRequest((r) => new URL(r.url()).pathname === '/graphql');
      await button.click();
      await page.getByTestId('profile').waitFor();
      assert.equal(new URL(page.url()).pathname, '/app/u/alice', 'back where sign-in started');
      await page.locator('nav .me').filter({ hasText: 'alice' }).waitFor();
      const authorization = (await (await request).allHeaders()).authorization ?? '';
      const [, payload] = authorization.replace(/^Bearer /, '').split('.');
      const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as { iss?: string; sub?: string };
      assert.deepEqual({ iss: claims.iss, sub: claims.sub }, { iss: PROVIDER_ISSUER, sub: users.get('alice') });
      assert.deepEqual(provider.tokenAnswers, [200]);
      // The authorization request named the API the token is for (SHARDQL_OIDC_AUDIENCE), with PKCE.
      const asked = provider.authorizeRequests.at(-1)!;
      assert.deepEqual(
        { audience: asked.get('audience'), scope: asked.get('scope'), method: asked.get('code_challenge_method') },
        { audience: PROVIDER_AUDIENCE, scope: 'openid', method: 'S256' },
      );
      const kept = await page.evaluate("({ session: sessionStorage.getItem('shardql.sessionToken'), local: localStorage.getItem('shardql.token'), pending: sessionStorage.getItem('shardql.signIn') })");
      assert.deepEqual(kept, { session: authorization.replace(/^Bearer /, ''), local: null, pending: null });
    } finally {
      await context.close();
    }
  });

  test("the provider's refusal shows on the sign-in page, which still offers a pasted token", async () => {
    provider.user = undefined;
    const { context, page } = await openPage();
    try {
      await page.goto(`${gateway.url}/app/`);
      await page.getByTestId('provider-sign-in').click();
      await page.getByRole('alert').filter({ hasText: 'Example ID refused the sign-in: The person declined' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/app/');
      assert.equal(await page.getByLabel('Token').count(), 1);
    } finally {
      await context.close();
    }
  });

  test('the token endpoint refuses a wrong verifier and a used code', async () => {
    provider.user = users.get('alice')!;
    const redirectUri = `${gateway.url}/app/signed-in`;
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const wrong = await exchange(await codeFor(challenge, redirectUri), 'w'.repeat(43), redirectUri);
    assert.equal(wrong.status, 400);
    assert.equal(((await wrong.json()) as { error: string }).error, 'invalid_grant');
    const code = await codeFor(challenge, redirectUri);
    const first = await exchange(code, verifier, redirectUri);
    assert.equal(first.status, 200);
    const token = ((await first.json()) as { access_token: string }).access_token;
    assert.equal((await gateway.gql('', {}, { token, body: { documentId: Object.entries(manifest).find(([, t]) => t.startsWith('query AppViewerQuery'))![0] } })).body.data.viewer.username, 'alice');
    const again = await exchange(code, verifier, redirectUri);
    assert.equal(again.status, 400);
    assert.equal(((await again.json()) as { error: string }).error, 'invalid_grant');
  });
});

describe('What every page did', () => {
  test('every GraphQL request carried a persisted ID of the manifest and no document', () => {
    assert.ok(graphqlBodies.length >= 20, `the pages sent ${graphqlBodies.length} operations`);
    for (const body of graphqlBodies) {
      assert.equal(body.query, undefined, `no document text: ${JSON.stringify(body).slice(0, 200)}`);
      assert.equal(typeof body.documentId, 'string');
      assert.ok(manifest[body.documentId as string] !== undefined, `${String(body.operationName)}'s ID is in the manifest`);
    }
  });

  test('no request left the machine and no page had an error', () => {
    assert.deepEqual(external, []);
    assert.deepEqual(pageErrors, []);
  });
});

describe('The build', () => {
  test('fails, naming the field, when an operation does not match the schema', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shardql-web-'));
    try {
      cpSync(join(ROOT, 'web'), join(dir, 'web'), { recursive: true, filter: (src) => !src.includes('__generated__') });
      writeFileSync(
        join(dir, 'web/src/Broken.tsx'),
        "import { graphql } from 'react-relay';\nexport const broken = graphql`\n  fragment Broken_user on User { username pinterestScore }\n`;\n",
      );
      await assert.rejects(compileDocuments(join(dir, 'web')), (err: Error) => err instanceof WebBuildError && /pinterestScore/.test(err.message));
      rmSync(join(dir, 'web/src/Broken.tsx'));
      const manifestPath = await compileDocuments(join(dir, 'web'));
      assert.deepEqual(Object.keys(JSON.parse(readFileSync(manifestPath, 'utf8'))).sort(), Object.keys(manifest).sort(), 'the same source compiles to the same manifest');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
