import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, parse, print } from 'graphql';
import { readModelFiles } from '../../../../src/core/model/modelFiles.ts';
import { parseModel } from '../../../../src/core/model/parseModel.ts';
import { withoutModel } from '../../../../src/core/model/withoutModel.ts';
import { shardTables } from '../../../../src/storage/ddl.ts';

/** examples/qa: a second model in the same vocabulary, read from its directory with the vocabulary added. */
const files = readModelFiles('examples/qa');
const qa = parseModel(files);

describe('examples/qa: a Q&A site declared in the model vocabulary', () => {
  test('its files: the vocabulary from schema/, then its own, named from the project root', () => {
    assert.deepEqual(files.map((f) => f.name), ['schema/model.graphql', 'examples/qa/schema.graphql']);
  });

  test('object types: their own numbers and tables; an answer placed on its question, a question on its author', () => {
    assert.equal(qa.viewer, 'user');
    assert.deepEqual(
      qa.objects.map((o) => [o.key, o.typeNumber, o.table, o.placeWith]),
      [
        ['user', 11, 'users', null],
        ['tag', 12, 'tags', null],
        ['question', 13, 'questions', 'author'],
        ['answer', 14, 'answers', 'question'],
      ],
    );
    for (const o of qa.objects) assert.match(o.declaredAt, /^examples\/qa\/schema\.graphql:\d+$/);
    const answer = qa.objects.find((o) => o.key === 'answer')!;
    assert.deepEqual(answer.refs.find((r) => r.field === 'question'), { field: 'question', key: 'question_id', to: 'question', owner: false, listedIn: 'question_has_answers', onDelete: 'DELETE' });
    assert.deepEqual(answer.refs.find((r) => r.owner)?.field, 'author');
  });

  test('relations: inverses paired, a saved list in its owner order with no inverse, who writes each', () => {
    assert.deepEqual(
      qa.relations.map((r) => [r.table, r.from, r.to, r.inverse, r.order, r.writer]),
      [
        ['user_asked_questions', 'user', 'question', null, 'TIME', 'REF'],
        ['user_wrote_answers', 'user', 'answer', null, 'TIME', 'REF'],
        ['user_saved_questions', 'user', 'question', null, 'OWNER', 'VIEWER'],
        ['user_upvoted_questions', 'user', 'question', 'question_upvoted_by_users', 'TIME', 'VIEWER'],
        ['user_upvoted_answers', 'user', 'answer', 'answer_upvoted_by_users', 'TIME', 'VIEWER'],
        ['user_followed_by_users', 'user', 'user', 'user_follows_users', 'TIME', 'INVERSE'],
        ['user_follows_users', 'user', 'user', 'user_followed_by_users', 'TIME', 'VIEWER'],
        ['user_follows_tags', 'user', 'tag', 'tag_followed_by_users', 'TIME', 'VIEWER'],
        ['tag_has_questions', 'tag', 'question', null, 'TIME', 'REF'],
        ['tag_followed_by_users', 'tag', 'user', 'user_follows_tags', 'TIME', 'INVERSE'],
        ['question_has_answers', 'question', 'answer', null, 'TIME', 'REF'],
        ['question_upvoted_by_users', 'question', 'user', 'user_upvoted_questions', 'TIME', 'INVERSE'],
        ['answer_upvoted_by_users', 'answer', 'user', 'user_upvoted_answers', 'TIME', 'INVERSE'],
      ],
    );
  });

  test('counts, viewer flags and uniqueness', () => {
    const question = qa.objects.find((o) => o.key === 'question')!;
    assert.deepEqual(question.counts, [
      { field: 'answerCount', relation: 'question_has_answers' },
      { field: 'voteCount', relation: 'question_upvoted_by_users' },
    ]);
    assert.deepEqual(question.viewerEdges, [
      { field: 'viewerUpvoted', relation: 'user_upvoted_questions' },
      { field: 'viewerSaved', relation: 'user_saved_questions' },
    ]);
    assert.deepEqual(
      qa.objects.flatMap((o) => o.stored.filter((s) => s.uniqueIn !== null).map((s) => [o.key, s.field, s.uniqueIn])),
      [
        ['user', 'handle', 'handle'],
        ['tag', 'name', 'tag'],
      ],
    );
  });

  test('mutations: create, update, delete, relate, unrelate and reorder, by the names the site gives them', () => {
    assert.deepEqual(
      qa.mutations.map((m) => [m.name, m.action, m.type ?? m.relation, m.argument]),
      [
        ['createUser', 'CREATE', 'user', null],
        ['updateUser', 'UPDATE', 'user', 'id'],
        ['createTag', 'CREATE', 'tag', null],
        ['createQuestion', 'CREATE', 'question', null],
        ['updateQuestion', 'UPDATE', 'question', 'id'],
        ['deleteQuestion', 'DELETE', 'question', 'id'],
        ['createAnswer', 'CREATE', 'answer', null],
        ['updateAnswer', 'UPDATE', 'answer', 'answerId'],
        ['deleteAnswer', 'DELETE', 'answer', 'answerId'],
        ['upvoteQuestion', 'RELATE', 'user_upvoted_questions', 'questionId'],
        ['withdrawQuestionVote', 'UNRELATE', 'user_upvoted_questions', 'questionId'],
        ['upvoteAnswer', 'RELATE', 'user_upvoted_answers', 'answerId'],
        ['withdrawAnswerVote', 'UNRELATE', 'user_upvoted_answers', 'answerId'],
        ['followUser', 'RELATE', 'user_follows_users', 'userId'],
        ['unfollowUser', 'UNRELATE', 'user_follows_users', 'userId'],
        ['followTag', 'RELATE', 'user_follows_tags', 'tagId'],
        ['unfollowTag', 'UNRELATE', 'user_follows_tags', 'tagId'],
        ['saveQuestion', 'RELATE', 'user_saved_questions', 'questionId'],
        ['unsaveQuestion', 'UNRELATE', 'user_saved_questions', 'questionId'],
        ['moveSavedQuestion', 'REORDER', 'user_saved_questions', 'questionId'],
      ],
    );
  });

  test("the DDL it derives: a table per type and per relation, the owner's order indexed, none of the product's tables", () => {
    const tables = shardTables(qa);
    const own = [...qa.objects.map((o) => o.table), ...qa.relations.map((r) => r.table)];
    assert.equal(own.length, 4 + 13);
    for (const t of own) assert.ok(tables.has(t), t);
    assert.deepEqual([...tables.keys()].filter((t) => !own.includes(t)), ['counts', 'intents', 'idempotency', 'events', 'import_ids']);
    assert.match(tables.get('user_saved_questions')!, /KEY by_position \(from_id, position, to_id\)/);
    assert.doesNotMatch(tables.get('user_follows_tags')!, /by_position/);
    assert.match(tables.get('answers')!, /^CREATE TABLE IF NOT EXISTS answers \(\n {2}local_id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,\n {2}data JSON NOT NULL,/);
  });

  test('its API, without the vocabulary, is a valid GraphQL schema', () => {
    const api = print(withoutModel(parse(files.map((f) => f.body).join('\n'))));
    const schema = buildSchema(api);
    assert.deepEqual(Object.keys(schema.getMutationType()!.getFields()), qa.mutations.map((m) => m.name));
    for (const word of ['@object', '@relation', 'directive ']) assert.ok(!api.includes(word), word);
  });
});
