/**
 * Read your writes on every live gateway while another one is dead. Three gateway processes share
 * one stack: gateway 0 is killed (SIGKILL, SHARDQL_TEST_FAULT) right after a relation write of a
 * pair committed and before it dropped the pair's cached lists; gateway 1 then acknowledges the same
 * write again (a new request, a new Idempotency-Key), which finds the edge already as it asks; and
 * gateway 2, whose L1 and Redis hold both lists from before, must show both as acknowledged.
 *
 * The interleaving is driven, not waited for: the lists are read (and cached) before the kill, the
 * kill happens at its step, and no repair pass runs on the survivors
 * (SHARDQL_INTENT_REPAIR_EVERY_MS=0), so nothing but the acknowledged write itself can drop the
 * stale copies before the reads that follow its answer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { killGatewayProcesses, startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess.ts';
import { placedUsers, sideStates, type Hosts, type Side } from '../helpers/relationSides.ts';
import { mintToken } from '../../src/auth/tokens.ts';
import { formatId } from '../../src/core/ids.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { testFaultLine } from '../../src/services/testFaults.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';

const TOPOLOGY_KEY = '/shardql-test/gateway-crash-reads/topology';

let env: TestEnv;
let writes: ProductWrites;
/** Gateways 1 (acknowledges the write again) and 2 (reads); neither runs a repair pass. */
let survivors: GatewayProcess[];
/** A fresh user; with `near`, on another shard of its host ('one host') or on the other host. */
let user: (near?: bigint, hosts?: Hosts) => Promise<StoredObject>;

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
  user = placedUsers(writes, env.storage.router, 'crashread');
  await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
  survivors = await Promise.all([1, 2].map(() => startGatewayProcess(env, { topologyKey: TOPOLOGY_KEY, vars: { SHARDQL_INTENT_REPAIR_EVERY_MS: '0' } })));
});
after(async () => {
  await killGatewayProcesses();
  await env?.close();
});

interface Case {
  readonly name: string;
  /** The write's kind as the executor names it (the fault's kind). */
  readonly kind: string;
  readonly op: 'add' | 'remove';
  readonly target: 'user' | 'board';
  readonly hosts: Hosts;
}

const CASES: readonly Case[] = [
  { name: 'unfollowUser, both sides on one host', kind: 'remove:user_follows_users', op: 'remove', target: 'user', hosts: 'one host' },
  { name: 'unfollowUser, the sides on two hosts', kind: 'remove:user_follows_users', op: 'remove', target: 'user', hosts: 'two hosts' },
  { name: 'unfollowBoard, both sides on one host', kind: 'remove:user_follows_boards', op: 'remove', target: 'board', hosts: 'one host' },
  { name: 'followUser, both sides on one host', kind: 'add:user_follows_users', op: 'add', target: 'user', hosts: 'one host' },
];

interface Pair {
  readonly viewer: bigint;
  readonly mutation: string;
  readonly variables: Record<string, string>;
  /** The follower's list, then the target's. */
  readonly sides: readonly [Side, Side];
}

/** A viewer and a target placed as the case says; for a remove, the viewer already follows it. */
async function pairOf(c: Case): Promise<Pair> {
  const me = await user();
  const owner = await user(me.id, c.hosts);
  const target = c.target === 'user' ? owner : await writes.createBoard(owner.id, { name: 'followed' });
  if (c.op === 'remove') await (c.target === 'user' ? writes.followUser(me.id, target.id) : writes.followBoard(me.id, target.id));
  const verb = `${c.op === 'add' ? 'follow' : 'unfollow'}${c.target === 'user' ? 'User(userId' : 'Board(boardId'}: $t)`;
  return {
    viewer: me.id,
    mutation: `mutation($t: ID!) { w: ${verb} { id } }`,
    variables: { t: formatId(target.id) },
    sides: [
      c.target === 'user'
        ? { id: me.id, field: 'following', countField: 'followingCount', member: target.id }
        : { id: me.id, field: 'followedBoards', countField: 'followedBoardCount', member: target.id },
      { id: target.id, field: 'followers', countField: 'followerCount', member: me.id },
    ],
  };
}

const FOLLOWING = '1/1/1';
const NOT_FOLLOWING = '0/0/0';

describe('Read your writes: a gateway killed (SIGKILL) between a relation write\'s commit and its cache invalidation', () => {
  test(`the same write acknowledged again by gateway 1 shows in both lists through gateway 2 (${CASES.length} cases)`, async () => {
    const pairs = await Promise.all(CASES.map(pairOf));
    // One doomed gateway per case: it kills itself at its case's first write, after the commit.
    const doomed = await Promise.all(
      CASES.map((c) =>
        startGatewayProcess(env, {
          topologyKey: TOPOLOGY_KEY,
          vars: { SHARDQL_ALLOW_TEST_FAULTS: '1', SHARDQL_TEST_FAULT: `${c.kind}@after-first-commit`, SHARDQL_INTENT_REPAIR_EVERY_MS: '0' },
        }),
      ),
    );
    const [acknowledging, reading] = survivors as [GatewayProcess, GatewayProcess];
    // What each case's lists show after the acknowledgement, through each survivor: compared whole at the end.
    const seen: Record<string, { gateway2: string[]; gateway1: string[] }> = {};
    const expected: typeof seen = {};
    for (const [i, c] of CASES.entries()) {
      const pair = pairs[i]!;
      const before = c.op === 'remove' ? FOLLOWING : NOT_FOLLOWING;
      const after = c.op === 'remove' ? NOT_FOLLOWING : FOLLOWING;
      // Both lists read through every gateway: each survivor's L1 and Redis hold them.
      for (const gw of [acknowledging, reading, doomed[i]!]) assert.deepEqual(await sideStates(gw, pair.sides), [before, before], `${c.name}: before the write`);

      const token = await mintToken(TEST_JWT_SECRET, pair.viewer, 600);
      const doomedKey = `${c.kind}.doomed.${i}`;
      await assert.rejects(
        doomed[i]!.gql(pair.mutation, pair.variables, { token, headers: { 'idempotency-key': doomedKey } }),
        `${c.name}: gateway 0 died in the write, so it got no answer`,
      );
      assert.deepEqual(await doomed[i]!.exited, { code: null, signal: 'SIGKILL' }, `${c.name}: gateway 0 was killed by SIGKILL`);
      assert.ok(doomed[i]!.stderr().includes(testFaultLine({ kind: c.kind, point: 'after-first-commit', nth: 1 }, doomedKey)), `${c.name}: it died after the commit: ${doomed[i]!.stderr()}`);

      // The same write again, one attempt with a key of its own, through gateway 1.
      const ack = await acknowledging.gql(pair.mutation, pair.variables, { token, headers: { 'idempotency-key': `${c.kind}.again.${i}` } });
      assert.equal(ack.body.errors, undefined, `${c.name}: gateway 1 acknowledges: ${ack.text}`);
      assert.deepEqual(ack.body.data, { w: { id: pair.variables.t } });

      // Gateway 2 first, right after the answer; then gateway 1.
      seen[c.name] = { gateway2: await sideStates(reading, pair.sides), gateway1: await sideStates(acknowledging, pair.sides) };
      expected[c.name] = { gateway2: [after, after], gateway1: [after, after] };
    }
    assert.deepEqual(seen, expected, 'both lists of each pair, as acknowledged, through gateway 2 and gateway 1');
  });
});
