import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWebApp, type WebApp } from '../../../src/http/webApp.ts';

let dir: string;
let app: WebApp;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'shardql-webapp-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'assets', 'app.css'), 'body{}');
  writeFileSync(join(dir, 'assets', 'notes.txt'), 'not served');
  writeFileSync(join(dir, 'persisted-documents.json'), '{}');
  app = loadWebApp(dir);
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('loadWebApp', () => {
  test('serves the built assets by name, nothing else', () => {
    assert.equal(app.asset('app.js')?.body.toString(), 'console.log(1)');
    assert.match(app.asset('app.css')?.contentType ?? '', /^text\/css/);
    for (const name of ['notes.txt', '../persisted-documents.json', 'assets/app.js', '', '__proto__', 'APP.JS']) assert.equal(app.asset(name), undefined, JSON.stringify(name));
  });

  test('the page loads only its own assets, runs no inline script, and escapes its settings', () => {
    const html = app.page({ endpoint: '/graphql', token: '</script><script>alert(1)</script>' });
    assert.doesNotMatch(html, /https?:\/\//);
    assert.doesNotMatch(html, /<\/script><script>alert/);
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 2);
    for (const [, attrs = '', body = ''] of scripts) assert.ok(/\bsrc="\/app\/assets\/app\.js\?v=/.test(attrs) || (/type="application\/json"/.test(attrs) && JSON.parse(body).token.startsWith('</script>')));
    assert.doesNotMatch(app.page({ endpoint: '/graphql' }), /"token"/);
  });

  test('refuses to start without a build, saying how to make one', () => {
    assert.throws(() => loadWebApp(join(dir, 'missing')), /node scripts\/buildWeb\.mjs/);
  });
});
