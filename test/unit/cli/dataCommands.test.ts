import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../..');

/** `shardql token --help` with SHARDQL_MODEL set to `model` (unset: schema/). */
function tokenHelp(model?: string): string {
  const env = { ...process.env };
  delete env.SHARDQL_MODEL;
  const r = spawnSync(join(ROOT, 'bin/shardql'), ['token', '--help'], { encoding: 'utf8', env: model ? { ...env, SHARDQL_MODEL: model } : env });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

describe("shardql token: its help names the served model's viewer and unique fields", () => {
  const cases: { name: string; model?: string; usage: string; summary: string }[] = [
    { name: "schema/: a user, by ID or username", usage: 'Usage: shardql token <userId|username>', summary: 'for a user, by ID or username' },
    { name: 'examples/qa: a user, by ID or handle', model: 'examples/qa', usage: 'Usage: shardql token <userId|handle>', summary: 'for a user, by ID or handle' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const help = tokenHelp(c.model);
      assert.ok(help.startsWith(c.usage), help);
      assert.ok(help.includes(c.summary), help);
    });
  }
});
