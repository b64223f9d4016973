import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelFlag, ModelFlagError } from '../../../src/cli/modelFlag.ts';

test('--model is taken out of the command line, before or after the command, in both spellings', () => {
  assert.deepEqual(modelFlag(['serve', '--model', 'examples/qa']), { dir: 'examples/qa', rest: ['serve'] });
  assert.deepEqual(modelFlag(['--model=examples/qa', 'topology', 'show', '--json']), { dir: 'examples/qa', rest: ['topology', 'show', '--json'] });
  assert.deepEqual(modelFlag(['provision']), { dir: undefined, rest: ['provision'] });
  // After `--`, everything is the command's.
  assert.deepEqual(modelFlag(['import', '--', '--model', 'x']), { dir: undefined, rest: ['import', '--', '--model', 'x'] });
  // The same directory twice is one choice.
  assert.deepEqual(modelFlag(['--model', 'm', 'serve', '--model=m']), { dir: 'm', rest: ['serve'] });
});

test('--model without a directory, or with two, is a usage mistake', () => {
  for (const argv of [['serve', '--model'], ['serve', '--model', '--port'], ['--model=', 'serve'], ['--model', 'a', '--model', 'b']]) {
    assert.throws(() => modelFlag(argv), (e: unknown) => e instanceof ModelFlagError && /--model/.test(e.message), argv.join(' '));
  }
});
