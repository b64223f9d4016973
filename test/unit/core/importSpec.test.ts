import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultSchema, parseImportConfig, resolveSchema } from '../../../src/core/importSchema.ts';
import { deriveImportSpec, type ObjectSource } from '../../../src/core/importSpec.ts';
import { readModelFiles } from '../../../src/core/model/modelFiles.ts';
import { parseModel } from '../../../src/core/model/parseModel.ts';
import { servedModel } from '../../../src/core/model/served.ts';
import { pinterestImport } from '../../../src/product/pinterest/importSource.ts';

/** examples/qa with no product: everything the import reads is derived from its model. */
const qa = deriveImportSpec(parseModel(readModelFiles('examples/qa')));
const pinterest = deriveImportSpec(servedModel(), pinterestImport);

describe('Import spec: the source schema derived from a model', () => {
  test('examples/qa: a table per object type and per relation the viewer writes, in the order references allow', () => {
    assert.deepEqual(qa.phases, [
      ['users', 'tags'],
      ['questions'],
      ['answers'],
      ['user_saved_questions', 'user_upvoted_questions', 'user_upvoted_answers', 'user_follows_users', 'user_follows_tags'],
    ]);
    assert.deepEqual(qa.deletePhases, qa.phases, 'no reference to its own type: no last pass to leave out');
    assert.deepEqual([...qa.optionalTables], ['answers', 'user_saved_questions', 'user_upvoted_questions', 'user_upvoted_answers', 'user_follows_users', 'user_follows_tags']);
    assert.deepEqual(qa.verified, ['users', 'tags', 'questions', 'answers'], 'every qa type owns a list');
  });

  test('examples/qa: columns by role, named as the model names them; an UNLINK reference may be absent', () => {
    const schema = defaultSchema(qa);
    assert.deepEqual(schema.tables.questions, {
      table: 'questions',
      roles: { id: 'id', data: 'data', createdAt: 'created_at', updatedAt: 'updated_at', author: 'author_id', tag: 'tag_id' },
      fields: {},
    });
    assert.deepEqual(schema.tables.users?.roles.handle, 'handle', 'a unique stored field');
    assert.deepEqual(schema.tables.user_upvoted_answers, { table: 'user_upvoted_answers', roles: { from: 'from_id', to: 'to_id', createdAt: 'created_at' }, fields: {} });
    assert.deepEqual(qa.roles.get('answers')?.roles, ['table', 'id', 'question', 'author', 'data', 'fields', 'createdAt', 'updatedAt'], 'the placed-with reference first');
    const { schema: resolved, notes } = resolveSchema(parseImportConfig(undefined, qa), (t) =>
      t === 'users' ? new Set(['id', 'handle', 'created_at']) : t === 'tags' ? new Set(['id', 'name', 'created_at']) : t === 'questions' ? new Set(['id', 'author_id', 'created_at']) : undefined,
    );
    assert.equal(resolved.tables.questions?.roles.tag, null, 'a question without a tag column: untagged questions');
    assert.equal(resolved.tables.answers, null);
    assert.equal(notes.length, 6, notes.join('; '));
    const answers = qa.tables.find((t): t is ObjectSource => t.kind === 'object' && t.type === 'answer')!;
    assert.equal(answers.placeWith, 'question');
    assert.deepEqual(answers.unique, []);
    const users = qa.tables.find((t): t is ObjectSource => t.kind === 'object' && t.type === 'user')!;
    assert.deepEqual(users.unique, [{ role: 'handle', key: 'handle', namespace: 'handle', required: true }]);
    assert.deepEqual(users.credentials, [], 'no product: no credential');
  });

  test('Pinterest: today’s tables, phases and last pass, with the product’s names', () => {
    assert.deepEqual(pinterest.phases, [['users'], ['boards'], ['pins'], ['repins', 'comments', 'likes', 'follows', 'boardFollows']]);
    assert.deepEqual(pinterest.deletePhases, [['users'], ['boards'], ['pins'], ['comments', 'likes', 'follows', 'boardFollows']]);
    assert.deepEqual(pinterest.verified, ['users', 'boards', 'pins']);
    assert.deepEqual([...pinterest.optionalTables], ['comments', 'likes', 'follows', 'boardFollows']);
    const repins = pinterest.sources.find((s) => s.alias === 'repins');
    assert.ok(repins?.kind === 'selfRef' && repins.object === 'pins' && repins.field === 'via' && repins.listing === 'pin_repinned_as_pins');
    assert.deepEqual(pinterest.roles.get('users')?.roles, ['table', 'id', 'username', 'email', 'data', 'fields', 'createdAt', 'updatedAt']);
    assert.deepEqual([...(pinterest.roles.get('pins')?.optional ?? [])].sort(), ['data', 'updatedAt', 'via']);
    const objectOf = (spec: typeof qa, alias: string) => spec.tables.find((t): t is ObjectSource => t.kind === 'object' && t.alias === alias)!;
    assert.deepEqual([...objectOf(pinterest, 'users').reserved].sort(), ['active', 'author_id', 'board_id', 'email', 'owner_id', 'pin_id', 'pinner_id', 'username', 'via_pin_id']);
    assert.ok(!objectOf(pinterest, 'boards').reserved.has('username'), 'a unique field is reserved in its own type only');
    assert.ok(!objectOf(qa, 'users').reserved.has('name') && objectOf(qa, 'tags').reserved.has('name'), 'a tag’s unique name is not a user’s name');
  });

  test('without the product, Pinterest’s model still imports: relations under their own names, repins as pins_via', () => {
    const bare = deriveImportSpec(servedModel());
    assert.deepEqual(bare.phases.at(-1), ['pins_via', 'comments', 'user_likes_pins', 'user_follows_users', 'user_follows_boards']);
  });
});
