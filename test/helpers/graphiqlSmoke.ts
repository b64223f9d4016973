/**
 * Drives the GraphiQL page in headless Chromium against any server that serves it at
 * `${baseUrl}/graphiql` with its GraphQL endpoint behind it (the test fixture today, the real
 * gateway later). Every request that does not go to the server under test (or another loopback
 * address) is blocked and recorded; the smoke fails if there was any, since the page must work with
 * no internet.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from './browser.ts';

export interface GraphiqlSmokeOptions {
  /** Query put in the editor and run. */
  readonly query: string;
  /** Text the response pane must show after running it, e.g. 'Hello shard'. */
  readonly expectText: string;
  /** Path of the page under baseUrl (default '/graphiql'). */
  readonly path?: string;
  /** Text the query editor must hold when the page opens (the page's default query). */
  readonly expectDefaultQuery?: string;
  /** Texts the headers editor must show, visibly, when the page opens (e.g. 'Authorization'); also checked after a reload. */
  readonly expectHeaderText?: readonly string[];
  /** Reuse this browser instead of launching one (it is then left open). */
  readonly browser?: Browser;
  /** Where to write the screenshot (default: a new file under os.tmpdir()). */
  readonly screenshotPath?: string;
  /** Milliseconds per wait (default 20000). */
  readonly timeoutMs?: number;
}

export interface GraphiqlSmokeResult {
  /** PNG of the page after the query ran. */
  readonly screenshot: string;
  /** Console errors and uncaught page errors (e.g. Content-Security-Policy violations); the caller decides. */
  readonly consoleErrors: readonly string[];
  /** Every URL the page requested, in order. */
  readonly requests: readonly string[];
}

const QUERY_EDITOR = '.graphiql-query-editor .CodeMirror';
/** The visible one of the two editors (variables, headers) in the editor-tools pane. */
const TOOL_EDITOR = '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function isLocal(url: string, allowedHost: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === 'data:' || parsed.protocol === 'blob:' || parsed.protocol === 'about:') return true;
  return parsed.host === allowedHost || LOOPBACK_HOSTS.has(parsed.hostname);
}

async function editorValue(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (el) => (el as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue());
}

/** Waits for GraphiQL to render (or for its start-up error, reported as such). */
async function waitForEditor(page: Page, timeout: number): Promise<void> {
  const first = await page.waitForSelector(`${QUERY_EDITOR}, .graphiql-start-error`, { timeout });
  const startError = await first.evaluate((el) => (el.classList.contains('graphiql-start-error') ? el.textContent : null));
  assert.equal(startError, null, `GraphiQL did not start: ${startError}`);
}

/** The headers editor must be the visible tool editor and show each text on screen. */
async function assertHeadersVisible(page: Page, texts: readonly string[], timeout: number): Promise<void> {
  const headersTab = page.getByRole('button', { name: 'Headers', exact: true });
  await headersTab.waitFor({ state: 'visible', timeout });
  const editor = page.locator(TOOL_EDITOR);
  await editor.waitFor({ state: 'visible', timeout });
  for (const text of texts) {
    await editor.locator('.CodeMirror-code').filter({ hasText: text }).waitFor({ state: 'visible', timeout });
  }
}

export async function runGraphiqlSmoke(baseUrl: string, opts: GraphiqlSmokeOptions): Promise<GraphiqlSmokeResult> {
  const timeout = opts.timeoutMs ?? 20_000;
  const pageUrl = new URL(opts.path ?? '/graphiql', baseUrl).href;
  const allowedHost = new URL(baseUrl).host;
  const external: string[] = [];
  const requests: string[] = [];
  const consoleErrors: string[] = [];

  const browser = opts.browser ?? (await launchBrowser());
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, serviceWorkers: 'block' });
    context.on('request', (req) => requests.push(req.url()));
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (isLocal(url, allowedHost)) return route.continue();
      external.push(url);
      return route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    page.setDefaultTimeout(timeout);
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(`uncaught: ${err.message}`));

    const response = await page.goto(pageUrl, { waitUntil: 'load', timeout });
    assert.equal(response?.status(), 200, `GET ${pageUrl}`);
    await waitForEditor(page, timeout);

    if (opts.expectDefaultQuery !== undefined) {
      const initial = await editorValue(page, QUERY_EDITOR);
      assert.ok(initial.includes(opts.expectDefaultQuery), `query editor opens with the default query; it holds: ${JSON.stringify(initial)}`);
    }
    if (opts.expectHeaderText !== undefined) await assertHeadersVisible(page, opts.expectHeaderText, timeout);

    // CodeMirror 5 hangs its instance on the wrapper element; setValue avoids auto-closed brackets from typing.
    await page.$eval(QUERY_EDITOR, (el, q) => (el as unknown as { CodeMirror: { setValue(v: string): void } }).CodeMirror.setValue(q), opts.query);
    assert.equal(await editorValue(page, QUERY_EDITOR), opts.query);
    await page.locator('.graphiql-execute-button').click();
    try {
      await page.locator('.graphiql-response').filter({ hasText: opts.expectText }).waitFor({ state: 'visible', timeout });
    } catch (err) {
      const failed = join(tmpdir(), `graphiql-smoke-failed-${process.pid}-${Date.now()}.png`);
      await page.screenshot({ path: failed });
      const shown = await page.locator('.graphiql-response').innerText().catch(() => '(no response pane)');
      throw new Error(`GraphiQL did not show ${JSON.stringify(opts.expectText)}; it shows ${JSON.stringify(shown.slice(0, 500))}; console errors: ${JSON.stringify(consoleErrors)}; screenshot ${failed}`, { cause: err });
    }

    const screenshot = opts.screenshotPath ?? join(tmpdir(), `graphiql-smoke-${process.pid}-${Date.now()}.png`);
    await page.screenshot({ path: screenshot });

    if (opts.expectHeaderText !== undefined) {
      // Headers are not persisted in localStorage; the defaults must come back after a reload.
      await page.reload({ waitUntil: 'load', timeout });
      await waitForEditor(page, timeout);
      await assertHeadersVisible(page, opts.expectHeaderText, timeout);
    }

    await context.close();
    assert.deepEqual(external, [], 'the GraphiQL page must not request anything outside the server under test');
    return { screenshot, consoleErrors, requests };
  } finally {
    if (opts.browser === undefined) await browser.close();
  }
}
