import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { servedEvents } from '../../../src/product/served.ts';
import { PINTEREST_EVENTS } from '../../../src/product/pinterest/events.ts';
import { PROJECT_ROOT } from '../../../src/core/projectRoot.ts';

/** What a process serving `model` (SHARDQL_MODEL, chosen as src/cli.ts chooses it) attaches, and the events it wires. */
async function servedIn(model: string): Promise<{ attached: string[]; kinds: string[] | null }> {
  const script = [
    "import './src/cli/servedModel.ts';",
    "const { servedProducts, servedEvents } = await import('./src/product/served.ts');",
    'const events = servedEvents();',
    'console.log(JSON.stringify({ attached: servedProducts().attached.map((p) => p.name), kinds: events ? Object.keys(events.storedKinds) : null }));',
  ].join('\n');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, SHARDQL_MODEL: model },
  });
  return JSON.parse(stdout) as { attached: string[]; kinds: string[] | null };
}

describe('Served events: wired only when an attached product declares them', () => {
  test("schema/: Pinterest's spec", () => {
    assert.equal(servedEvents(), PINTEREST_EVENTS);
  });

  test('examples/qa: no product attaches, so no event spec (the gateway, the worker and the CLI build no event kinds, sweep none)', async () => {
    assert.deepEqual(await servedIn('examples/qa'), { attached: [], kinds: null });
  });

  test('schema/ chosen the same way: Pinterest and its ten stored kinds', async () => {
    assert.deepEqual(await servedIn('schema'), { attached: ['pinterest'], kinds: Object.keys(PINTEREST_EVENTS.storedKinds) });
  });
});
