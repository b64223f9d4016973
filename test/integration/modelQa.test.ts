/**
 * A second, different model served by the same build (issue 29): examples/qa, a Q&A site — users
 * with unique handles, tags with unique names, questions on their author's shard, answers on their
 * question's shard, votes and follows as relations with counts, a reading list in its owner's order
 * with no inverse. The gateway is started with `--model examples/qa`, the worker and the CLI with
 * SHARDQL_MODEL=examples/qa, on a topology listing its type numbers (11–14); the Pinterest product
 * does not attach (the model has no board or pin), and everything below comes from the model alone.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import { testFaultLine } from '../../src/services/testFaults.ts';
import { freshEnv, testStackDir, type TestEnv } from '../helpers/env.ts';
import { codes, type GqlResult } from '../helpers/gateway.ts';
import { killGatewayProcesses, startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess.ts';
import { runCli, startWorkerProcess, type WorkerProcess } from '../helpers/workers.ts';

const KEY = '/shardql-test/modelQa/topology';
const MODEL = resolve(import.meta.dirname, '../../examples/qa');
const QA_TYPES = { user: 11, tag: 12, question: 13, answer: 14 };
const VARS = { SHARDQL_MODEL: MODEL, SHARDQL_QUEUE_PREFIX: 'modelQa' };

let env: TestEnv;
let gateway: GatewayProcess;
let worker: WorkerProcess;

const cli = (...args: string[]) => runCli({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: KEY, ...VARS }, args);

before(async () => {
  env = await freshEnv({ shards: 16, modShards: 8 });
  // The map as `shardql topology publish` would keep it for this model: its type numbers only.
  await env.etcd.put(KEY).value(JSON.stringify({ ...env.doc, idLayout: { ...env.doc.idLayout, types: QA_TYPES } })).exec();
  const provisioned = await cli('provision');
  assert.equal(provisioned.code, 0, provisioned.stderr + provisioned.stdout);
  // The gateway is told by the command line (the worker and the CLI by SHARDQL_MODEL): both choose the model.
  gateway = await startGatewayProcess(env, { topologyKey: KEY, vars: { SHARDQL_QUEUE_PREFIX: VARS.SHARDQL_QUEUE_PREFIX }, args: ['--model', MODEL], timeoutMs: 60_000 });
  worker = await startWorkerProcess({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: KEY, ...VARS });
});
after(async () => {
  worker?.child.kill('SIGKILL');
  await worker?.exited;
  await killGatewayProcesses();
  await env?.close();
});

function ok(r: GqlResult): Record<string, any> {
  // An internal error's cause is only in the gateway's log: part of the failure message.
  const logged = () => gateway.stdout().split('\n').filter((l) => l.includes('internal_error')).slice(-2).join('\n');
  assert.equal(r.body.errors, undefined, r.body.errors ? `${r.text}\n${logged()}` : '');
  return r.body.data;
}
const ids = (conn: { edges: { node: { id: string } }[] }): string[] => conn.edges.map((e) => e.node.id);
const typeNumber = (id: string): number => Number((BigInt(id) >> 36n) & 0x3ffn);

interface Member {
  readonly id: string;
  readonly token: string;
  readonly shard: number;
}

const gql = (q: string, v: Record<string, unknown> = {}, who?: Member, gw = gateway) => gw.gql(q, v, who ? { token: who.token } : {});

async function signUp(handle: string): Promise<Member> {
  const made = ok(await gql('mutation($h: String!) { createUser(input: { handle: $h, name: "N" }) { user { id handle } token } }', { h: handle })).createUser;
  assert.equal(made.user.handle, handle);
  assert.equal(typeNumber(made.user.id), QA_TYPES.user);
  assert.equal(typeof made.token, 'string');
  return { id: made.user.id, token: made.token, shard: shardOf(BigInt(made.user.id)) };
}

/** Every page of a connection field of node `id`, forward (`first/after`) or backward (`last/before`). */
async function walk(id: string, frag: string, field: string, backward = false): Promise<{ ids: string[]; count: number; pages: number }> {
  const q = backward
    ? `query($id: ID!, $c: String) { node(id: $id) { ${frag} { COUNT ${field}(last: 2, before: $c) { edges { node { id } } pageInfo { hasPreviousPage startCursor } } } } }`
    : `query($id: ID!, $c: String) { node(id: $id) { ${frag} { COUNT ${field}(first: 2, after: $c) { edges { node { id } } pageInfo { hasNextPage endCursor } } } } }`;
  const out: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let count = -1;
  for (;;) {
    const node: any = ok(await gql(q.replace('COUNT', COUNTS[field] ?? ''), { id, c: cursor })).node;
    pages++;
    const conn = node[field];
    count = COUNTS[field] ? node[COUNTS[field]] : -1;
    // Backward pages come newest-last within a page; the whole list reads in the same order either way.
    if (backward) out.unshift(...ids(conn));
    else out.push(...ids(conn));
    const more = backward ? conn.pageInfo.hasPreviousPage : conn.pageInfo.hasNextPage;
    if (!more) return { ids: out, count, pages };
    cursor = backward ? conn.pageInfo.startCursor : conn.pageInfo.endCursor;
  }
}
/** The count field beside each list this test walks. */
const COUNTS: Record<string, string> = {
  followers: 'followerCount',
  following: 'followingCount',
  voters: 'voteCount',
  answers: 'answerCount',
  questions: 'questionCount',
  // No count: the model refuses one beside a list with no inverse (a deleted question would stay counted).
  saved: '',
  followedTags: '',
};

/** A list read both ways: the same items in the same order, and its count equal to its length. */
async function listBothWays(id: string, frag: string, field: string): Promise<string[]> {
  const fwd = await walk(id, frag, field);
  const bwd = await walk(id, frag, field, true);
  assert.deepEqual(bwd.ids, fwd.ids, `${frag} ${field}: backward pages read the list forward pages read`);
  const pages = Math.max(1, Math.ceil(fwd.ids.length / 2));
  assert.deepEqual([fwd.pages, bwd.pages], [pages, pages], `${frag} ${field}: pages of 2 each way`);
  if (COUNTS[field]) assert.deepEqual([fwd.count, bwd.count], [fwd.ids.length, fwd.ids.length], `${frag} ${field}: count equals list`);
  return fwd.ids;
}

describe('examples/qa served by the same gateway, worker and CLI', () => {
  const members: Member[] = [];
  const tags: string[] = [];
  const questions: { id: string; author: Member }[] = [];
  const answers: { id: string; question: string; author: Member }[] = [];

  test('the Pinterest product does not attach to this model, and says why at start; no feed is built', () => {
    const line = gateway.stdout().split('\n').find((l) => l.includes('"event":"products"'));
    assert.ok(line, gateway.stdout().slice(0, 2000));
    const logged = JSON.parse(line!);
    assert.deepEqual(logged.attached, []);
    assert.equal(logged.notAttached[0].product, 'pinterest');
    assert.ok(logged.notAttached[0].missing.includes('type board') && logged.notAttached[0].missing.includes('field Query.homeFeed'), line);
    // No attached product declares a home feed: the gateway and the worker build none.
    assert.equal(logged.feed, null, line);
    const started = worker.logs.find((l) => l.event === 'worker_started');
    assert.ok(started, JSON.stringify(worker.logs));
    assert.equal(started.feed, null, JSON.stringify(started));
  });

  test('`shardql topology publish --model examples/qa` on the local stack publishes and prints its type numbers', async () => {
    const key = `${KEY}-published`;
    const run = await runCli({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: key }, ['topology', 'publish', '--model', MODEL, '--shards', '16', '--mod-shards', '8', '--yes']);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /^Type numbers \(idLayout\.types\): user 11, tag 12, question 13, answer 14$/m);
    const published = JSON.parse((await env.etcd.get(key).string())!);
    assert.deepEqual(published.idLayout.types, QA_TYPES);
    await env.etcd.delete().key(key).exec();
  });

  test('sign-up answers a token; a handle is unique regardless of case (HANDLE_TAKEN); user(handle) finds it', async () => {
    for (const h of ['ann', 'ben', 'cat', 'dan', 'eve']) members.push(await signUp(h));
    assert.deepEqual(codes(await gql('mutation { createUser(input: { handle: "ANN" }) { token } }')), ['HANDLE_TAKEN']);
    const [ann] = members as [Member];
    const viewer = ok(await gql('{ viewer { id handle } }', {}, ann)).viewer;
    assert.deepEqual(viewer, { id: ann.id, handle: 'ann' });
    assert.deepEqual(ok(await gql('{ user(handle: "Ann") { id } }')).user, { id: ann.id });
    assert.deepEqual(codes(await gql('query($id: ID!) { user(id: $id, handle: "ann") { id } }', { id: ann.id })), ['INVALID_ARGUMENT']);
    assert.deepEqual(codes(await gql('{ user { id } }')), ['INVALID_ARGUMENT']);
    // Retried with its Idempotency-Key, a sign-up answers with the user it made, not HANDLE_TAKEN.
    const once = await gateway.gql('mutation { createUser(input: { handle: "fay" }) { user { id } } }', {}, { headers: { 'idempotency-key': 'qa-fay' } });
    const twice = await gateway.gql('mutation { createUser(input: { handle: "fay" }) { user { id } } }', {}, { headers: { 'idempotency-key': 'qa-fay' } });
    assert.equal(ok(twice).createUser.user.id, ok(once).createUser.user.id);
  });

  test('tags are unique by name (TAG_TAKEN); questions land on their author\'s shard, answers on their question\'s', async () => {
    const [ann, ben, cat] = members as [Member, Member, Member];
    for (const [who, name] of [[ann, 'sql'], [ben, 'graphql']] as const) {
      const tag = ok(await gql('mutation($n: String!) { createTag(name: $n) { id name } }', { n: name }, who)).createTag;
      assert.equal(tag.name, name);
      assert.equal(typeNumber(tag.id), QA_TYPES.tag);
      tags.push(tag.id);
    }
    assert.deepEqual(codes(await gql('mutation { createTag(name: "SQL") { id } }', {}, cat)), ['TAG_TAKEN']);
    assert.deepEqual(codes(await gql('mutation { createTag(name: "new") { id } }')), ['UNAUTHENTICATED']);
    assert.deepEqual(ok(await gql('{ tag(name: "graphql") { id } }')).tag, { id: tags[1] });

    for (const [who, title, tag] of [[ann, 'q1', tags[0]], [ann, 'q2', tags[0]], [ben, 'q3', tags[1]], [cat, 'q4', tags[0]]] as const) {
      const q = ok(await gql('mutation($t: String!, $tag: ID) { createQuestion(input: { title: $t, body: "why?", tagId: $tag }) { id title author { id } tag { id } } }', { t: title, tag }, who)).createQuestion;
      assert.deepEqual({ title: q.title, author: q.author.id, tag: q.tag.id }, { title, author: who.id, tag });
      assert.equal(shardOf(BigInt(q.id)), who.shard, "a question lives on its author's shard");
      questions.push({ id: q.id, author: who });
    }
    // Answers from several users to two questions; each on its question's shard, whoever wrote it.
    for (const [who, qi] of [[ben, 0], [cat, 0], [ann, 0], [ben, 2], [ann, 2]] as const) {
      const q = questions[qi]!;
      const a = ok(await gql('mutation($q: ID!) { createAnswer(questionId: $q, body: "because") { id question { id } author { id } } }', { q: q.id }, who)).createAnswer;
      assert.deepEqual({ question: a.question.id, author: a.author.id }, { question: q.id, author: who.id });
      assert.equal(shardOf(BigInt(a.id)), shardOf(BigInt(q.id)), "an answer lives on its question's shard");
      assert.equal(typeNumber(a.id), QA_TYPES.answer);
      answers.push({ id: a.id, question: q.id, author: who });
    }
    assert.deepEqual(await listBothWays(questions[0]!.id, '... on Question', 'answers'), answers.filter((a) => a.question === questions[0]!.id).map((a) => a.id).reverse());
    assert.deepEqual(await listBothWays(ann.id, '... on User', 'questions'), [questions[1]!.id, questions[0]!.id]);
    assert.deepEqual(await listBothWays(tags[0]!, '... on Tag', 'questions'), [questions[3]!.id, questions[1]!.id, questions[0]!.id]);
    assert.deepEqual(codes(await gql('mutation($q: ID!) { updateQuestion(id: $q, input: { title: "mine" }) { id } }', { q: questions[0]!.id }, ben)), ['FORBIDDEN']);
  });

  test('follows and votes from both sides, paged both ways, counts equal lists; adding twice is one edge', async () => {
    const [ann, ben, cat, dan, eve] = members as [Member, Member, Member, Member, Member];
    for (const who of [ben, cat, dan, eve]) ok(await gql('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: ann.id }, who));
    const again = ok(await gql('mutation($u: ID!) { followUser(userId: $u) { id followerCount viewerFollows } }', { u: ann.id }, eve)).followUser;
    assert.deepEqual(again, { id: ann.id, followerCount: 4, viewerFollows: true });
    assert.deepEqual(await listBothWays(ann.id, '... on User', 'followers'), [eve.id, dan.id, cat.id, ben.id]);
    for (const who of [ben, cat, dan, eve]) assert.deepEqual(await listBothWays(who.id, '... on User', 'following'), [ann.id]);

    for (const who of [ann, cat, dan]) ok(await gql('mutation($t: ID!) { followTag(tagId: $t) { id } }', { t: tags[0] }, who));
    const tag = ok(await gql('query($t: ID!) { tag(id: $t) { followerCount followers(first: 10) { edges { node { id } } } } }', { t: tags[0] })).tag;
    assert.deepEqual({ n: tag.followerCount, ids: ids(tag.followers) }, { n: 3, ids: [dan.id, cat.id, ann.id] });
    assert.deepEqual(await listBothWays(cat.id, '... on User', 'followedTags'), [tags[0]]);

    const q0 = questions[0]!.id;
    for (const who of [ben, cat, dan, eve]) ok(await gql('mutation($q: ID!) { upvoteQuestion(questionId: $q) { id } }', { q: q0 }, who));
    const voted = ok(await gql('mutation($q: ID!) { upvoteQuestion(questionId: $q) { voteCount viewerUpvoted } }', { q: q0 }, ben)).upvoteQuestion;
    assert.deepEqual(voted, { voteCount: 4, viewerUpvoted: true });
    assert.deepEqual(await listBothWays(q0, '... on Question', 'voters'), [eve.id, dan.id, cat.id, ben.id]);
    ok(await gql('mutation($q: ID!) { withdrawQuestionVote(questionId: $q) { id } }', { q: q0 }, dan));
    assert.deepEqual(await listBothWays(q0, '... on Question', 'voters'), [eve.id, cat.id, ben.id]);
    const upvoted = ok(await gql('query($u: ID!) { user(id: $u) { upvotedQuestions(first: 5) { edges { node { id } } } } }', { u: cat.id })).user;
    assert.deepEqual(ids(upvoted.upvotedQuestions), [q0]);

    const a0 = answers[0]!.id;
    for (const who of [ann, cat]) ok(await gql('mutation($a: ID!) { upvoteAnswer(answerId: $a) { id } }', { a: a0 }, who));
    assert.deepEqual(await listBothWays(a0, '... on Answer', 'voters'), [cat.id, ann.id]);
    const mine = ok(await gql('query($u: ID!) { user(id: $u) { upvotedAnswers(first: 5) { edges { node { id } } } } }', { u: ann.id })).user;
    assert.deepEqual(ids(mine.upvotedAnswers), [a0]);
  });

  test("the reading list: the owner's order, moved with moveSavedQuestion; no inverse", async () => {
    const [, ben] = members as [Member, Member];
    const [q0, q1, q2, q3] = questions.map((q) => q.id) as [string, string, string, string];
    for (const q of [q0, q1, q2, q3]) ok(await gql('mutation($q: ID!) { saveQuestion(questionId: $q) { viewerSaved } }', { q }, ben));
    const before = await listBothWays(ben.id, '... on User', 'saved');
    assert.deepEqual(before, [q3, q2, q1, q0], 'each question saved lands first in the owner\'s order');
    // q0 first, then q3 right after q1.
    ok(await gql('mutation($q: ID!) { moveSavedQuestion(questionId: $q, afterQuestionId: null) { id } }', { q: q0 }, ben));
    ok(await gql('mutation($q: ID!, $after: ID) { moveSavedQuestion(questionId: $q, afterQuestionId: $after) { id } }', { q: q3, after: q1 }, ben));
    const moved = await listBothWays(ben.id, '... on User', 'saved');
    assert.equal(moved[0], q0);
    assert.equal(moved[moved.indexOf(q1) + 1], q3);
    assert.equal(moved.length, 4);
    assert.deepEqual(codes(await gql('mutation($q: ID!) { moveSavedQuestion(questionId: $q) { id } }', { q: q0 })), ['UNAUTHENTICATED']);
  });

  test('the cost limit refuses an over-wide query before any SQL', async () => {
    const wide = await gql('query($u: ID!) { user(id: $u) { following(first: 100) { edges { node { followers(first: 100) { edges { node { saved(first: 100) { edges { node { title } } } } } } } } } } }', { u: members[1]!.id });
    assert.deepEqual(codes(wide), ['QUERY_TOO_COMPLEX']);
    assert.ok((wide.body.errors![0]!.extensions!.cost as number) > (wide.body.errors![0]!.extensions!.budget as number), wide.text);
  });

  test('shardql reconcile puts back a vote edge deleted by SQL', async () => {
    const [, , cat] = members as [Member, Member, Member];
    const q0 = questions[0]!.id;
    const s = shardOf(BigInt(q0));
    const host = env.storage.router.writableHostOfShard(s);
    const db = shardDatabase(s);
    await env.storage.router.query(host, [s], `DELETE FROM ${db}.question_upvoted_by_users WHERE from_id = ? AND to_id = ?`, [q0, cat.id]);
    await env.storage.router.query(host, [s], `UPDATE ${db}.counts SET n = n - 1 WHERE id = ? AND kind = 'question_upvoted_by_users'`, [q0]);
    const fixed = await cli('reconcile');
    assert.equal(fixed.code, 0, fixed.stderr + fixed.stdout);
    assert.match(fixed.stdout, new RegExp(`added question_upvoted_by_users\\(${q0} → ${cat.id}\\) mirroring user_upvoted_questions`));
    assert.match(fixed.stdout, /16 shards checked, 1 fixes: /);
    assert.ok((await listBothWays(q0, '... on Question', 'voters')).includes(cat.id));
    assert.match((await cli('reconcile')).stdout, /16 shards checked, 0 fixes/);
  });

  test('deleting a question takes its answers, votes and list entries with it; counts equal lists', async () => {
    const [ann, ben, cat] = members as [Member, Member, Member];
    const q0 = questions[0]!.id;
    const gone = answers.filter((a) => a.question === q0);
    assert.deepEqual(codes(await gql('mutation($q: ID!) { deleteQuestion(id: $q) { deleted } }', { q: q0 }, ben)), ['FORBIDDEN']);
    assert.deepEqual(ok(await gql('mutation($q: ID!) { deleteQuestion(id: $q) { deletedId deleted } }', { q: q0 }, ann)).deleteQuestion, { deletedId: q0, deleted: true });
    assert.equal(ok(await gql('query($q: ID!) { node(id: $q) { id } }', { q: q0 })).node, null);
    for (const a of gone) assert.equal(ok(await gql('query($a: ID!) { node(id: $a) { id } }', { a: a.id })).node, null, `answer ${a.id} went with its question`);
    assert.deepEqual(await listBothWays(ann.id, '... on User', 'questions'), [questions[1]!.id]);
    assert.deepEqual(await listBothWays(tags[0]!, '... on Tag', 'questions'), [questions[3]!.id, questions[1]!.id]);
    for (const who of [ben, cat]) {
      assert.ok(!(await listBothWays(who.id, '... on User', 'answers')).some((id) => gone.some((a) => a.id === id)), 'their answers to it are gone');
      const upvoted = ok(await gql('query($u: ID!) { user(id: $u) { upvotedQuestions(first: 10) { edges { node { id } } } } }', { u: who.id })).user;
      assert.deepEqual(ids(upvoted.upvotedQuestions), [], 'their votes for it are gone');
    }
    const annVotes = ok(await gql('query($u: ID!) { user(id: $u) { upvotedAnswers(first: 10) { edges { node { id } } } } }', { u: ann.id })).user;
    assert.deepEqual(ids(annVotes.upvotedAnswers), [], 'votes for its answers are gone');
    // The reading list has no inverse: nothing on the question's shard names who saved it, so the
    // list hides it at once and reconcile removes the edge later (the list has no count to go wrong).
    const hidden = ok(await gql('query($u: ID!) { user(id: $u) { saved(first: 10) { edges { node { id } } } } }', { u: ben.id })).user;
    assert.deepEqual(ids(hidden.saved).length, 3);
    assert.ok(!ids(hidden.saved).includes(q0), "it is gone from ben's reading list");
    const fixed = await cli('reconcile');
    assert.equal(fixed.code, 0, fixed.stderr + fixed.stdout);
    assert.match(fixed.stdout, new RegExp(`removed user_saved_questions\\(${ben.id} → ${q0}\\): the object is deleted`));
    assert.match(fixed.stdout, /16 shards checked, 1 fixes: /);
    const saved = await listBothWays(ben.id, '... on User', 'saved');
    assert.equal(saved.length, 3);
    assert.ok(!saved.includes(q0));
  });

  test('a gateway SIGKILLed in the middle of an upvote (after its first commit); the repair pass completes it', async () => {
    const q = questions[2]!;
    // On another host: on one host both sides commit in one transaction, and there is no "after the first commit" to crash in.
    const { router } = env.storage;
    const voter = members.find((m) => router.hostOfShard(m.shard) !== router.hostOfShard(shardOf(BigInt(q.id))) && m.id !== q.author.id);
    assert.ok(voter, 'a voter on another host than the question');
    // Both lists read (and so cached) before the write: the crash leaves them to the repair to drop.
    const mineFirst = ok(await gql('query($u: ID!) { user(id: $u) { upvotedQuestions(first: 10) { edges { node { id } } } } }', { u: voter!.id })).user;
    assert.ok(!ids(mineFirst.upvotedQuestions).includes(q.id));
    assert.deepEqual(await listBothWays(q.id, '... on Question', 'voters'), []);
    const doomed = await startGatewayProcess(env, {
      topologyKey: KEY,
      vars: { ...VARS, SHARDQL_ALLOW_TEST_FAULTS: '1', SHARDQL_TEST_FAULT: 'add:user_upvoted_questions@after-first-commit' },
      timeoutMs: 60_000,
    });
    let cut = false;
    try {
      await gql('mutation($q: ID!) { upvoteQuestion(questionId: $q) { id } }', { q: q.id }, voter, doomed);
    } catch {
      cut = true;
    }
    assert.ok(cut, 'the request got no answer');
    assert.deepEqual(await doomed.exited, { code: null, signal: 'SIGKILL' });
    assert.ok(doomed.stderr().includes(testFaultLine({ kind: 'add:user_upvoted_questions', point: 'after-first-commit', nth: 1 }, undefined)), doomed.stderr());
    // In the rows (the caches may hold either side as read before): the viewer's side committed
    // with its intent, the question's side waits for the repair.
    const rows = async (shard: number, sql: string, args: string[]) =>
      (await env.storage.router.query(env.storage.router.writableHostOfShard(shard), [shard], sql.replaceAll('DB', shardDatabase(shard)), args)).map((r) => String(Object.values(r)[0]));
    const vs = voter!.shard;
    const qs = shardOf(BigInt(q.id));
    assert.deepEqual(await rows(vs, 'SELECT to_id FROM DB.user_upvoted_questions WHERE from_id = ?', [voter!.id]), [q.id]);
    assert.deepEqual(await rows(vs, "SELECT kind FROM DB.intents WHERE kind = 'add:user_upvoted_questions'", []), ['add:user_upvoted_questions']);
    assert.deepEqual(await rows(qs, 'SELECT to_id FROM DB.question_upvoted_by_users WHERE from_id = ?', [q.id]), []);

    const repaired = await cli('repair', '--min-age', '0');
    assert.equal(repaired.code, 0, repaired.stderr + repaired.stdout);
    assert.match(repaired.stdout, /^1 intents completed, 0 failed$/m);
    assert.deepEqual(await rows(qs, 'SELECT to_id FROM DB.question_upvoted_by_users WHERE from_id = ?', [q.id]), [voter!.id]);
    // Through the gateway, both sides and the count, as the repair left them.
    assert.deepEqual(await listBothWays(q.id, '... on Question', 'voters'), [voter!.id], 'count equals list after the repair');
    const mine = ok(await gql('query($u: ID!) { user(id: $u) { upvotedQuestions(first: 10) { edges { node { id } } } } }', { u: voter!.id })).user;
    assert.deepEqual(ids(mine.upvotedQuestions), [q.id]);
  });
});
