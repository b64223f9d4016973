import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeOf, namesIn, productNames } from '../../../scripts/productNames.ts';
import { DECLARED } from '../../../src/core/model/declared.ts';

const PINTEREST = productNames(DECLARED);

test("a literal that is a type's name, key or table, and a mapping table anywhere in code, are product names", () => {
  assert.deepEqual(namesIn(`const t = 'pin'; f("Board", \`users\`); if (x === 'comments') g(user_has_pins);`, PINTEREST), ["'pin'", '"Board"', '`users`', "'comments'", 'user_has_pins']);
  assert.deepEqual(namesIn('sql(`SELECT 1 FROM ${db}.pin_liked_by_users`)', PINTEREST), ['pin_liked_by_users']);
});

test('prose, other words and comments are not', () => {
  const code = codeOf(`// the pin's board: user_has_pins\n/** 'pin' */\nthrow new Error('No shard is open for new users'); const pinned = 'pins_total'; x.user_id;`);
  assert.deepEqual(namesIn(code, PINTEREST), []);
  // A URL in a string is not a comment.
  assert.equal(codeOf("const u = 'http://x/pin';"), "const u = 'http://x/pin';");
});
