/**
 * `shardql import` of a model with no product (issue 29): examples/qa's source schema, phases and
 * placement all derived from its model (core/importSpec.ts). A small Q&A database in the derived
 * default shape (users, tags, questions, answers, votes, follows, a reading list) is imported by a
 * worker and a CLI started with SHARDQL_MODEL=examples/qa, then read back through a qa gateway.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import mysql from 'mysql2/promise';
import { shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import { freshEnv, testStackDir, type TestEnv } from '../helpers/env.ts';
import { killGatewayProcesses, startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess.ts';
import { runCli, startWorkerProcess, type WorkerProcess } from '../helpers/workers.ts';

const KEY = '/shardql-test/importQa/topology';
const MODEL = resolve(import.meta.dirname, '../../examples/qa');
const QA_TYPES = { user: 11, tag: 12, question: 13, answer: 14 };
const SOURCE_DB = 'import_qa_src';
const SOURCE_USER = 'import_qa_reader';
const SOURCE_PASSWORD = 'import-qa-reader-test-password';
const VARS = { SHARDQL_MODEL: MODEL, SHARDQL_QUEUE_PREFIX: 'importQa', SHARDQL_IMPORT_PASSWORD: SOURCE_PASSWORD };

let env: TestEnv;
let worker: WorkerProcess;
let gateway: GatewayProcess | undefined;
let url: string;

const cliEnv = { SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: KEY, ...VARS };
const cli = (...args: string[]) => runCli(cliEnv, args);

/** The derived defaults (docs/operations.md "Importing an unsharded database"): tags without data or updated_at, a question's tag optional. */
const SOURCE_DDL = [
  'CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, handle VARCHAR(64) NOT NULL, data JSON NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)',
  'CREATE TABLE tags (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL, created_at BIGINT NOT NULL)',
  'CREATE TABLE questions (id BIGINT NOT NULL PRIMARY KEY, author_id BIGINT NOT NULL, tag_id BIGINT NULL, data JSON NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)',
  'CREATE TABLE answers (id BIGINT NOT NULL PRIMARY KEY, question_id BIGINT NOT NULL, author_id BIGINT NOT NULL, data JSON NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)',
  ...['user_upvoted_questions', 'user_upvoted_answers', 'user_follows_users', 'user_follows_tags', 'user_saved_questions'].map(
    (t) => `CREATE TABLE ${t} (from_id BIGINT NOT NULL, to_id BIGINT NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (from_id, to_id))`,
  ),
];

const T0 = Date.UTC(2025, 0, 1);
const ROWS: [string, unknown[][]][] = [
  ['users', [[1, 'alice', '{"name":"Alice"}', T0 + 1, T0 + 1], [2, 'bob', '{"name":"Bob"}', T0 + 2, T0 + 2], [3, 'carol', '{}', T0 + 3, T0 + 3]]],
  ['tags', [[10, 'databases', T0 + 10], [11, 'graphql', T0 + 11]]],
  [
    'questions',
    [
      [100, 1, 10, '{"title":"Sharding?","body":"How?"}', T0 + 100, T0 + 100],
      [101, 2, null, '{"title":"Untagged","body":"b"}', T0 + 101, T0 + 101],
      [102, 3, 99, '{"title":"Lost tag","body":"b"}', T0 + 102, T0 + 102],
      [103, 9, 10, '{"title":"No author","body":"b"}', T0 + 103, T0 + 103],
    ],
  ],
  [
    'answers',
    [
      [200, 100, 2, '{"body":"By key"}', T0 + 200, T0 + 200],
      [201, 100, 3, '{"body":"By range"}', T0 + 201, T0 + 201],
      [202, 101, 1, '{"body":"Tag it"}', T0 + 202, T0 + 202],
      [203, 103, 1, '{"body":"Orphan"}', T0 + 203, T0 + 203],
    ],
  ],
  ['user_upvoted_questions', [[1, 101, T0 + 300], [2, 100, T0 + 301], [3, 100, T0 + 302]]],
  ['user_upvoted_answers', [[1, 200, T0 + 310]]],
  ['user_follows_users', [[1, 2, T0 + 320], [2, 1, T0 + 321], [3, 1, T0 + 322]]],
  ['user_follows_tags', [[1, 10, T0 + 330], [2, 10, T0 + 331]]],
  ['user_saved_questions', [[1, 100, T0 + 340], [1, 101, T0 + 341]]],
];
const SOURCE_ROWS = ROWS.reduce((n, [, rows]) => n + rows.length, 0);

before(async () => {
  env = await freshEnv({ shards: 16, modShards: 8 });
  await env.etcd.put(KEY).value(JSON.stringify({ ...env.doc, idLayout: { ...env.doc.idLayout, types: QA_TYPES } })).exec();
  const provisioned = await cli('provision');
  assert.equal(provisioned.code, 0, provisioned.stderr + provisioned.stdout);
  const h = env.stack.mysql.hosts[0]!;
  const owner = env.stack.mysql.admin!;
  const admin = await mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: owner.user, password: owner.password });
  await admin.query(`DROP DATABASE IF EXISTS ${SOURCE_DB}`);
  await admin.query(`CREATE DATABASE ${SOURCE_DB}`);
  await admin.query(`CREATE USER IF NOT EXISTS '${SOURCE_USER}'@'%' IDENTIFIED BY '${SOURCE_PASSWORD}'`);
  await admin.query(`GRANT SELECT ON ${SOURCE_DB}.* TO '${SOURCE_USER}'@'%'`);
  await admin.changeUser({ database: SOURCE_DB });
  for (const ddl of SOURCE_DDL) await admin.query(ddl);
  for (const [table, rows] of ROWS) await admin.query(`INSERT INTO ${table} VALUES ${rows.map((r) => `(${r.map((v) => mysql.escape(v as string | number | null)).join(',')})`).join(',')}`);
  await admin.end();
  url = `mysql://${SOURCE_USER}@${h.primary.host}:${h.primary.port}/${SOURCE_DB}`;
  worker = await startWorkerProcess({ ...cliEnv, SHARDQL_WORKER_QUEUES: 'import' });
});

after(async () => {
  worker?.child.kill('SIGKILL');
  await worker?.exited;
  await killGatewayProcesses();
  await env?.close();
});

const find = async (ref: string): Promise<string> => {
  const r = await cli('import', '--from', url, '--find', ref);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
};

describe('Import: examples/qa, with no product, from its derived source schema', () => {
  test('every row placed as the qa gateway places it; the rows it cannot take noted by old IDs', async () => {
    const r = await cli('import', '--from', url, '--json');
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { read: number; rejected: number; notes: string[]; tables: { table: string }[] };
    assert.equal(result.read, SOURCE_ROWS);
    assert.equal(result.rejected, 2);
    assert.deepEqual(result.notes.sort(), [
      'imported: question 102: its tag 99 was not imported, so it is imported without it (tag: null)',
      'rejected: answer 203: its question 103 was not imported',
      'rejected: question 103: its author 9 was not imported',
    ]);
    assert.deepEqual(
      result.tables.map((t) => t.table),
      ['users', 'tags', 'questions', 'answers', 'user_saved_questions', 'user_upvoted_questions', 'user_upvoted_answers', 'user_follows_users', 'user_follows_tags'],
      'phases in the order the model’s references give',
    );
    const [alice, q100, a200] = [await find('user:1'), await find('question:100'), await find('answer:200')];
    assert.equal(shardOf(BigInt(q100)), shardOf(BigInt(alice)), 'a question on its author’s shard');
    assert.equal(shardOf(BigInt(a200)), shardOf(BigInt(q100)), 'an answer on its question’s shard');
    const missing = await cli('import', '--from', url, '--find', 'question:103');
    assert.notEqual(missing.code, 0, 'a rejected row is not found');
  });

  test('--verify reports exactly the rejected rows and the counts they leave short; a second pass writes nothing', async () => {
    const v = await cli('import', '--from', url, '--verify', '--json');
    assert.equal(v.code, 1, v.stdout + v.stderr);
    const verified = JSON.parse(v.stdout.trim().split('\n').at(-1)!) as { checked: number; list: { table: string; oldId: string; text: string }[] };
    assert.equal(verified.checked, 3 + 2 + 4 + 4, 'every user, tag, question and answer (each type owns a list)');
    assert.deepEqual(
      verified.list.map((d) => `${d.table} ${d.oldId}: ${d.text.replace(/ \([0-9]+\)/, '')}`).sort(),
      [
        'answers 203: answer 203 is not in the shards (rejected by the import)',
        'questions 103: question 103 is not in the shards (rejected by the import)',
        'tags 10: tag 10: tag_has_questions count 1 in the shards, 2 rows in the source',
        'users 1: user 1: user_wrote_answers count 1 in the shards, 2 rows in the source',
      ],
    );
    const again = await cli('import', '--from', url, '--json');
    assert.equal(again.code, 0, again.stderr);
    const r = JSON.parse(again.stdout.trim().split('\n').at(-1)!) as { written: number; rejected: number };
    assert.deepEqual([r.written, r.rejected], [0, 2]);
  });

  test('the qa gateway serves what the source says: counts, lists both ways, the reading list in its order', async () => {
    gateway = await startGatewayProcess(env, { topologyKey: KEY, vars: VARS, timeoutMs: 60_000 });
    const r = await gateway.gql(`{
      user(handle: "alice") { handle name questionCount answerCount followerCount followingCount
        saved { edges { node { title } } } upvotedQuestions { edges { node { title } } } followedTags { edges { node { name } } } }
      databases: tag(name: "databases") { questionCount followerCount questions { edges { node { title } } } }
    }`);
    assert.equal(r.body.errors, undefined, r.text);
    const q100 = await find('question:100');
    const q = await gateway.gql(`query($id: ID!) { question(id: $id) { title body author { handle } tag { name } answerCount voteCount
      answers { edges { node { body author { handle } voteCount } } } voters { edges { node { handle } } } } }`, { id: q100 });
    assert.equal(q.body.errors, undefined, q.text);
    const edges = (c: { edges: { node: Record<string, unknown> }[] }) => c.edges.map((e) => e.node);
    const data = r.body.data as Record<string, any>;
    assert.deepEqual(
      { ...data.user, saved: edges(data.user.saved), upvotedQuestions: edges(data.user.upvotedQuestions), followedTags: edges(data.user.followedTags) },
      {
        handle: 'alice',
        name: 'Alice',
        questionCount: 1,
        answerCount: 1,
        followerCount: 2,
        followingCount: 1,
        saved: [{ title: 'Untagged' }, { title: 'Sharding?' }],
        upvotedQuestions: [{ title: 'Untagged' }],
        followedTags: [{ name: 'databases' }],
      },
    );
    assert.deepEqual({ ...data.databases, questions: edges(data.databases.questions) }, { questionCount: 1, followerCount: 2, questions: [{ title: 'Sharding?' }] });
    const question = (q.body.data as Record<string, any>).question;
    assert.deepEqual(
      { ...question, answers: edges(question.answers), voters: edges(question.voters) },
      {
        title: 'Sharding?',
        body: 'How?',
        author: { handle: 'alice' },
        tag: { name: 'databases' },
        answerCount: 2,
        voteCount: 2,
        answers: [
          { body: 'By range', author: { handle: 'carol' }, voteCount: 0 },
          { body: 'By key', author: { handle: 'bob' }, voteCount: 1 },
        ],
        voters: [{ handle: 'carol' }, { handle: 'bob' }],
      },
    );
  });

  test('--deletes: a user deleted in the source goes with what she wrote (a type with no @delete), an answer and a vote by their own deletes', async () => {
    const h = env.stack.mysql.hosts[0]!;
    const owner = env.stack.mysql.admin!;
    const src = await mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: owner.user, password: owner.password, database: SOURCE_DB });
    // As the source's foreign keys would: carol with her question, answer, vote and follow; answer 200 with its vote; bob's vote.
    for (const sql of [
      'DELETE FROM users WHERE id = 3',
      'DELETE FROM questions WHERE author_id = 3',
      'DELETE FROM answers WHERE author_id = 3 OR id = 200',
      'DELETE FROM user_upvoted_questions WHERE from_id IN (2, 3)',
      'DELETE FROM user_upvoted_answers WHERE to_id = 200',
      'DELETE FROM user_follows_users WHERE from_id = 3',
    ])
      await src.query(sql);
    await src.end();
    const r = await cli('import', '--from', url, '--deletes', '--json');
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { deleted: number; repaired: number };
    assert.deepEqual([result.deleted, result.repaired], [3, 0], 'carol, answer 200 and bob’s vote; the rest went with them');
    const q100 = await find('question:100');
    const after = await gateway!.gql(`query($id: ID!) {
      alice: user(handle: "alice") { followerCount answerCount upvotedAnswers { edges { node { id } } } }
      carol: user(handle: "carol") { id }
      question(id: $id) { answerCount voteCount answers { edges { node { body } } } voters { edges { node { handle } } } }
    }`, { id: q100 });
    assert.equal(after.body.errors, undefined, after.text);
    assert.deepEqual(after.body.data, {
      alice: { followerCount: 1, answerCount: 1, upvotedAnswers: { edges: [] } },
      carol: null,
      question: { answerCount: 0, voteCount: 0, answers: { edges: [] }, voters: { edges: [] } },
    });
    const again = await cli('import', '--from', url, '--deletes', '--json');
    assert.equal(again.code, 0, again.stderr);
    const second = JSON.parse(again.stdout.trim().split('\n').at(-1)!) as { deleted: number; written: number };
    assert.deepEqual([second.deleted, second.written], [0, 0], 'a second deletes pass deletes and writes nothing');
  });

  test('a question naming a tag deleted in the shards is imported, not listed under the tag, and noted', async () => {
    const h = env.stack.mysql.hosts[0]!;
    const owner = env.stack.mysql.admin!;
    const src = await mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: owner.user, password: owner.password, database: SOURCE_DB });
    try {
      // Tag 11 leaves the source, and --deletes takes it from the shards (a type with no @delete).
      await src.query('DELETE FROM tags WHERE id = 11');
      const deletes = await cli('import', '--from', url, '--deletes', '--json');
      assert.equal(deletes.code, 0, deletes.stderr);
      assert.equal((JSON.parse(deletes.stdout.trim().split('\n').at(-1)!) as { deleted: number }).deleted, 1, 'the tag');
      // The source, not knowing, gains a question under it: the question's reference only links it
      // (`tag` is no owner), so the question is imported as one asked through the gateway would stay.
      const later = Date.now() + 1000;
      await src.query('INSERT INTO questions VALUES (104, 1, 11, ?, ?, ?)', ['{"title":"Still tagged?","body":"b"}', later, later]);
    } finally {
      await src.end();
    }
    const before = await gateway!.gql('{ alice: user(handle: "alice") { questionCount } }');
    assert.equal(before.body.errors, undefined, before.text);
    const r = await cli('import', '--from', url, '--since', 'last', '--json');
    assert.equal(r.code, 0, r.stderr);
    const pass = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { rejected: number; notes: string[] };
    assert.ok(pass.notes.includes('imported: question 104: its tag is deleted in the shards, so it is not listed under it'), pass.notes.join('; '));
    assert.equal(pass.rejected, 0, pass.notes.join('; '));
    const q104 = await find('question:104');
    const tagged = await gateway!.gql(`query($id: ID!) { question(id: $id) { title tag { id } } alice: user(handle: "alice") { questionCount questions { edges { node { id } } } } }`, { id: q104 });
    assert.equal(tagged.body.errors, undefined, tagged.text);
    const data = tagged.body.data as { question: { title: string; tag: unknown }; alice: { questionCount: number; questions: { edges: { node: { id: string } }[] } } };
    assert.deepEqual(data.question, { title: 'Still tagged?', tag: null });
    assert.equal(data.alice.questionCount, (before.body.data as { alice: { questionCount: number } }).alice.questionCount + 1);
    assert.ok(data.alice.questions.edges.some((e) => e.node.id === q104), 'listed under its author');
    // Nothing under the deleted tag on its shard: the list the delete emptied stays empty.
    const tag = BigInt(await find('tag:11'));
    const rows = await env.storage.router.query(env.topology.hostOfShard(shardOf(tag))!, [shardOf(tag)], `SELECT COUNT(*) AS n FROM ${shardDatabase(shardOf(tag))}.tag_has_questions WHERE from_id = ?`, [tag]);
    assert.equal(Number(rows[0]!.n), 0);
  });
});
