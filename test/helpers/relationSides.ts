/**
 * The two sides of a relation as tests of crashed writes see them: users placed on one host or two
 * (a relation write's one-host and two-host paths), and a write's lists read through GraphQL.
 */
import assert from 'node:assert/strict';
import { formatId, shardOf, typeOf } from '../../src/core/ids.ts';
import type { ProductWrites } from '../../src/product/pinterest/writes.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';
import type { ShardRouter } from '../../src/storage/shardRouter.ts';
import type { TestGateway } from './gateway.ts';

/** Where a relation's two sides live. */
export type Hosts = 'two hosts' | 'one host';

/**
 * Makes fresh users named `<prefix><n>`: with `near`, one on the other host than `near`'s ('two
 * hosts': the write spans hosts, not only shards) or on another shard of its host ('one host': one
 * transaction across two databases).
 */
export function placedUsers(writes: ProductWrites, router: ShardRouter, prefix: string): (near?: bigint, hosts?: Hosts) => Promise<StoredObject> {
  let serial = 0;
  return async (near, hosts = 'two hosts') => {
    for (;;) {
      const u = await writes.createUser({ username: `${prefix}${serial++}` });
      if (near === undefined) return u;
      const sameHost = router.hostOfId(u.id) === router.hostOfId(near);
      if (hosts === 'two hosts' ? !sameHost : sameHost && shardOf(u.id) !== shardOf(near)) return u;
    }
  };
}

/**
 * One list a write changes, seen through GraphQL: `field` of object `id` (with its count
 * `countField`) and whether `member` is in it. Each write's objects are its own, so a list holds the
 * member or nothing.
 */
export interface Side {
  readonly id: bigint;
  readonly field: string;
  readonly countField: string;
  readonly member: bigint;
}

/** What each side shows through `gw`, in one request: `<member in list>/<list length>/<count>`; 0n as member: any. */
export async function sideStates(gw: { gql: TestGateway['gql'] }, sides: readonly Side[]): Promise<string[]> {
  const fields = sides.map((s, i) => {
    const type = typeOf(s.id);
    return `s${i}: ${type}(id: "${formatId(s.id)}") { n: ${s.countField} l: ${s.field}(first: 10) { edges { node { id } } } }`;
  });
  const r = await gw.gql(`{ ${fields.join(' ')} }`);
  assert.equal(r.body.errors, undefined, r.text);
  return sides.map((s, i) => {
    const o = r.body.data[`s${i}`] as { n: number; l: { edges: { node: { id: string } }[] } };
    const ids = o.l.edges.map((e) => e.node.id);
    const hits = s.member === 0n ? ids.length : ids.filter((id) => id === formatId(s.member)).length;
    return `${hits}/${ids.length}/${o.n}`;
  });
}
