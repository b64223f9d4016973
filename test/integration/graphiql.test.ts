/**
 * GraphiQL served from npm package assets (src/http/graphiql.ts): the page, the asset allow-list,
 * and a headless-Chromium run with every non-local request blocked, against a real Apollo Server 5.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { graphiqlAsset, graphiqlPage } from '../../src/http/graphiql.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { startGraphiqlFixture } from '../helpers/graphiqlFixture.ts';
import type { GraphiqlFixture } from '../helpers/graphiqlFixture.ts';
import { runGraphiqlSmoke } from '../helpers/graphiqlSmoke.ts';

const DEV_TOKEN = 'Bearer dev-token-123';

describe('graphiqlAsset', () => {
  test('serves the allow-listed assets with content types and stable ETags', () => {
    for (const [name, type] of [
      ['react.production.min.js', 'text/javascript'],
      ['react-dom.production.min.js', 'text/javascript'],
      ['graphiql.min.js', 'text/javascript'],
      ['graphiql.min.css', 'text/css'],
      ['graphiql-init.js', 'text/javascript'],
      ['index.umd.js.map', 'application/json'],
    ] as const) {
      const asset = graphiqlAsset(name);
      assert.ok(asset, name);
      assert.ok(asset.body.length > 0, name);
      assert.ok(asset.contentType.startsWith(type), `${name}: ${asset.contentType}`);
      assert.match(asset.etag, /^"[A-Za-z0-9_-]+"$/);
      assert.equal(graphiqlAsset(name), asset, 'cached: the same object on the second call');
    }
  });

  test('returns undefined for anything not on the allow-list', () => {
    for (const name of [
      '../package.json',
      '../../package.json',
      'package.json',
      'graphiql.js',
      '/etc/passwd',
      '..%2Fpackage.json',
      'umd/react.production.min.js',
      './graphiql.min.js',
      'graphiql.min.js/',
      'GRAPHIQL.MIN.JS',
      '',
      '__proto__',
      'constructor',
      'toString',
    ]) {
      assert.equal(graphiqlAsset(name), undefined, JSON.stringify(name));
    }
  });
});

describe('graphiqlPage', () => {
  test('loads only the served assets, no external URL, no inline script', () => {
    const html = graphiqlPage({ endpoint: '/graphql', assetPrefix: '/graphiql/assets' });
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /https?:\/\//, 'no absolute URL anywhere');
    const srcs = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"/g)].map((m) => m[1] ?? '');
    assert.deepEqual(srcs.sort(), [
      '/graphiql/assets/graphiql-init.js',
      '/graphiql/assets/graphiql.min.css',
      '/graphiql/assets/graphiql.min.js',
      '/graphiql/assets/react-dom.production.min.js',
      '/graphiql/assets/react.production.min.js',
      'data:,',
    ].sort());
    for (const src of srcs) if (src.startsWith('/')) assert.ok(graphiqlAsset(src.slice('/graphiql/assets/'.length)), src);
    // Every <script> either has a src or is a JSON data block.
    for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      const attrs = m[1] ?? '';
      assert.ok(/\bsrc="/.test(attrs) || /type="application\/json"/.test(attrs), `inline script: ${m[0].slice(0, 80)}`);
    }
  });

  test('escapes what it interpolates', () => {
    const evil = '</script><script>alert(1)</script><!-- \u2028 & "quotes" \'single\'';
    const html = graphiqlPage({
      endpoint: '/graphql',
      assetPrefix: '/a"b<c',
      defaultQuery: `{ hello(name: "${evil}") }`,
      defaultHeaders: { Authorization: evil, [evil]: 'x' },
      title: evil,
    });
    assert.equal(html.match(/<\/script>/g)?.length, 5, 'only the page\'s own five </script> tags');
    assert.equal(html.match(/<script\b/g)?.length, 5);
    assert.doesNotMatch(html, /<!--/);
    const title = /<title>([^<]*)<\/title>/.exec(html)?.[1];
    assert.equal(title, evil.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'));
    assert.ok(html.includes('href="/a&quot;b&lt;c/graphiql.min.css"'));
    // The JSON data block parses back to exactly what was given.
    const json = /<script type="application\/json" id="graphiql-config">([^<]*)<\/script>/.exec(html)?.[1];
    assert.ok(json !== undefined);
    assert.doesNotMatch(json, /[<>&\u2028\u2029]/, 'nothing raw in the script-context JSON');
    const config = JSON.parse(json) as { endpoint: string; defaultQuery: string; headers: string };
    assert.equal(config.endpoint, '/graphql');
    assert.equal(config.defaultQuery, `{ hello(name: "${evil}") }`);
    assert.deepEqual(JSON.parse(config.headers), { Authorization: evil, [evil]: 'x' });
  });
});

describe('GraphiQL in headless Chromium, offline', () => {
  let browser: Browser;
  let fixture: GraphiqlFixture;
  before(async () => {
    browser = await launchBrowser();
    fixture = await startGraphiqlFixture({
      defaultQuery: '# shardql explorer\n{ hello }\n',
      defaultHeaders: { Authorization: DEV_TOKEN },
      title: 'shardql GraphiQL',
    });
  });
  after(async () => {
    await fixture?.close();
    await browser?.close();
  });

  test('opens with the defaults, runs a query through Apollo Server, touches nothing external', async () => {
    const query = '{ hello(name: "shard") }';
    const { screenshot, consoleErrors, requests } = await runGraphiqlSmoke(fixture.baseUrl, {
      query,
      expectText: 'Hello shard',
      expectDefaultQuery: '{ hello }',
      expectHeaderText: ['Authorization', DEV_TOKEN],
      browser,
    });
    console.log(`screenshot: ${screenshot}`);
    assert.ok(existsSync(screenshot) && statSync(screenshot).size > 10_000, 'screenshot written');
    assert.deepEqual(consoleErrors, [], 'no console errors (a CSP violation would show here)');
    assert.ok(requests.some((u) => u.endsWith('/graphiql/assets/graphiql.min.js')));
    assert.ok(requests.every((u) => u.startsWith(fixture.baseUrl) || u.startsWith('data:')), requests.join('\n'));
    // The query went through Apollo with the pre-filled Authorization header.
    const run = fixture.graphqlRequests.find((r) => JSON.stringify(r.body).includes('shard'));
    assert.ok(run, 'the query reached /graphql');
    assert.equal(run.method, 'POST');
    assert.equal(run.authorization, DEV_TOKEN);
    assert.ok(
      fixture.graphqlRequests.some((r) => JSON.stringify(r.body).includes('__schema')),
      'GraphiQL introspected the schema',
    );
  });

  test('without default headers or a CSP header: still works, still nothing external', async () => {
    // No CSP here, so a stray external reference would reach the request blocker (with the CSP the
    // browser refuses it first, which shows up as a console error instead).
    const plain = await startGraphiqlFixture({ csp: false });
    try {
      const { consoleErrors } = await runGraphiqlSmoke(plain.baseUrl, { query: '{ hello }', expectText: 'Hello world', browser });
      assert.deepEqual(consoleErrors, []);
      assert.ok(plain.graphqlRequests.every((r) => r.authorization === undefined));
    } finally {
      await plain.close();
    }
  });
});
