/**
 * The rows a data set puts into the shards — exactly what the product's writes would have written
 * (src/services/writes.ts, src/storage/*): object rows with a JSON blob (`active: true`, IDs inside
 * as decimal strings), both directions of every two-sided relation, the one-sided lists, a count
 * row beside every non-empty list, and the username lookups in the mod shards.
 */
import { shardOf } from '../core/ids.ts';
import { type MappingTable, mappingSpec } from '../core/mappings.ts';
import { modShardOf, normalizeLookupKey } from '../core/modShard.ts';
import { modShardDatabase, shardDatabase, type Topology } from '../core/topology.ts';
import { POSITION_GAP } from '../storage/mappingStore.ts';
import { boardId, boardText, groupBy, pinId, pinText, reverseCsr, userId, userText, type Csr, type Dataset } from './generate.ts';
import type { SequenceEvent } from '../core/events.ts';
import type { DatasetIndex, Group } from './datasetIndex.ts';
import { EVENT_ROW_COLUMNS, eventRow, notificationEvents } from './events.ts';
import { sqlString, type Part } from '../storage/bulkSql.ts';

export function indexDataset(ds: Dataset): DatasetIndex {
  const shardSlots = Math.max(...ds.shards) + 1;
  const userIds = Array.from({ length: ds.userCount }, (_, u) => userId(ds, u).toString());
  const boardIds = Array.from({ length: ds.boardCount }, (_, b) => boardId(ds, b).toString());
  const pinIds = Array.from({ length: ds.pinCount }, (_, p) => pinId(ds, p).toString());
  const ix = {
    ds,
    userIds,
    boardIds,
    pinIds,
    usernames: Array.from({ length: ds.userCount }, (_, u) => userText(ds, u).username),
    usersByShard: groupBy(ds.userCount, shardSlots, (u) => ds.userShard[u]!),
    boardsByShard: groupBy(ds.boardCount, shardSlots, (b) => ds.userShard[ds.boardUser[b]!]!),
    pinsByShard: groupBy(ds.pinCount, shardSlots, (p) => ds.userShard[ds.pinUser[p]!]!),
    boardPins: groupBy(ds.pinCount, ds.boardCount, (p) => ds.pinBoard[p]!),
    repins: groupBy(ds.pinCount, ds.pinCount, (p) => ds.pinVia[p]!),
    likers: reverseCsr(ds.likes, ds.pinCount),
    followers: reverseCsr(ds.follows, ds.userCount),
    boardFollowers: reverseCsr(ds.boardFollows, ds.boardCount),
  };
  return { ...ix, events: notificationEvents(ix) };
}

export function members(g: Group, key: number): Int32Array {
  return key + 1 < g.off.length ? g.items.subarray(g.off[key]!, g.off[key + 1]!) : new Int32Array(0);
}

/** JSON blobs as the product stores them. */
export function userJson(ix: DatasetIndex, u: number): string {
  const t = userText(ix.ds, u);
  return JSON.stringify({ displayName: t.displayName, ...(t.about ? { about: t.about } : {}), username: t.username, active: true });
}
export function boardJson(ix: DatasetIndex, b: number): string {
  const t = boardText(ix.ds, b);
  return JSON.stringify({ owner_id: ix.userIds[ix.ds.boardUser[b]!], name: t.name, ...(t.description ? { description: t.description } : {}), active: true });
}
export function pinJson(ix: DatasetIndex, p: number): string {
  const ds = ix.ds;
  const t = pinText(ds, p);
  const via = ds.pinVia[p]!;
  return JSON.stringify({
    title: t.title,
    ...(t.description ? { description: t.description } : {}),
    link: t.link,
    imageUrl: t.imageUrl,
    ...(via >= 0 ? { via_pin_id: ix.pinIds[via] } : {}),
    board_id: ix.boardIds[ds.pinBoard[p]!],
    pinner_id: ix.userIds[ds.pinUser[p]!],
    active: true,
  });
}

/** One mapping list per source object: its targets with their sequences. */
interface ListSource {
  /** Source objects on the shard, in local-ID order. */
  readonly from: ArrayLike<number>;
  readonly fromIds: string[];
  readonly toIds: string[];
  degree(src: number): number;
  each(src: number, emit: (to: number, seq: number) => void): void;
}

function csrList(from: ArrayLike<number>, fromIds: string[], toIds: string[], csr: Csr): ListSource {
  return {
    from,
    fromIds,
    toIds,
    degree: (s) => csr.off[s + 1]! - csr.off[s]!,
    each(s, emit) {
      for (let i = csr.off[s]!; i < csr.off[s + 1]!; i++) emit(csr.to[i]!, csr.ts[i]!);
    },
  };
}

function groupList(from: ArrayLike<number>, fromIds: string[], toIds: string[], g: Group, seqOf: (to: number) => number): ListSource {
  return {
    from,
    fromIds,
    toIds,
    degree: (s) => g.off[s + 1]! - g.off[s]!,
    each(s, emit) {
      for (let i = g.off[s]!; i < g.off[s + 1]!; i++) emit(g.items[i]!, seqOf(g.items[i]!));
    },
  };
}

function rangeList(from: ArrayLike<number>, fromIds: string[], toIds: string[], start: Int32Array, seqOf: (to: number) => number): ListSource {
  return {
    from,
    fromIds,
    toIds,
    degree: (s) => start[s + 1]! - start[s]!,
    each(s, emit) {
      for (let i = start[s]!; i < start[s + 1]!; i++) emit(i, seqOf(i));
    },
  };
}

const MAPPING_COLUMNS = ['from_id', 'to_id', 'sequence', 'position'] as const;

function mappingPart(db: string, table: MappingTable, list: ListSource): Part {
  let rows = 0;
  for (let i = 0; i < list.from.length; i++) rows += list.degree(list.from[i]!);
  const ordered = 'ordered' in mappingSpec(table);
  return {
    table: `${db}.${table}`,
    columns: MAPPING_COLUMNS,
    rows,
    *values() {
      const out: string[] = [];
      for (let i = 0; i < list.from.length; i++) {
        const src = list.from[i]!;
        const fromId = list.fromIds[src]!;
        out.length = 0;
        list.each(src, (to, seq) => {
          out.push(`(${fromId},${list.toIds[to]},${seq},${ordered ? -seq * POSITION_GAP : 'NULL'})`);
        });
        yield* out;
      }
    },
  };
}

/** Every list of one shard, by mapping table. */
function shardLists(ix: DatasetIndex, shard: number): [MappingTable, ListSource][] {
  const ds = ix.ds;
  const users = members(ix.usersByShard, shard);
  const boards = members(ix.boardsByShard, shard);
  const pins = members(ix.pinsByShard, shard);
  const pinSeq = (p: number): number => ds.pinCreated[p]!;
  return [
    ['user_has_boards', rangeList(users, ix.userIds, ix.boardIds, ds.userBoardStart, (b) => ds.boardCreated[b]!)],
    ['user_has_pins', rangeList(users, ix.userIds, ix.pinIds, ds.userPinStart, pinSeq)],
    ['board_has_pins', groupList(boards, ix.boardIds, ix.pinIds, ix.boardPins, pinSeq)],
    ['user_likes_pins', csrList(users, ix.userIds, ix.pinIds, ds.likes)],
    ['pin_liked_by_users', csrList(pins, ix.pinIds, ix.userIds, ix.likers)],
    ['user_follows_users', csrList(users, ix.userIds, ix.userIds, ds.follows)],
    ['user_followed_by_users', csrList(users, ix.userIds, ix.userIds, ix.followers)],
    ['user_follows_boards', csrList(users, ix.userIds, ix.boardIds, ds.boardFollows)],
    ['board_followed_by_users', csrList(boards, ix.boardIds, ix.userIds, ix.boardFollowers)],
    ['pin_repinned_as_pins', groupList(pins, ix.pinIds, ix.pinIds, ix.repins, pinSeq)],
  ];
}

function objectPart(table: string, objects: ArrayLike<number>, local: Int32Array, created: Float64Array, json: (i: number) => string): Part {
  return {
    table,
    columns: ['local_id', 'data', 'created_at', 'updated_at'],
    rows: objects.length,
    *values() {
      for (let i = 0; i < objects.length; i++) {
        const o = objects[i]!;
        const t = created[o]!;
        yield `(${local[o]},${sqlString(json(o))},${t},${t})`;
      }
    },
  };
}

/** The counts table of a shard: one row per (object, list) with at least one row, in key order. */
function countsPart(db: string, ix: DatasetIndex, lists: [MappingTable, ListSource][], shard: number): Part {
  const byFrom = new Map<string, [MappingTable, ListSource][]>();
  for (const [table, list] of lists) {
    const type = mappingSpec(table).from;
    const group = byFrom.get(type);
    if (group) group.push([table, list]);
    else byFrom.set(type, [[table, list]]);
  }
  // ID order: pins (type 1), boards (2), users (3); kinds alphabetically within one object.
  const groups: { objects: ArrayLike<number>; ids: string[]; lists: [MappingTable, ListSource][] }[] = [
    { objects: members(ix.pinsByShard, shard), ids: ix.pinIds, lists: byFrom.get('pin') ?? [] },
    { objects: members(ix.boardsByShard, shard), ids: ix.boardIds, lists: byFrom.get('board') ?? [] },
    { objects: members(ix.usersByShard, shard), ids: ix.userIds, lists: byFrom.get('user') ?? [] },
  ];
  for (const g of groups) g.lists.sort(([a], [b]) => (a < b ? -1 : 1));
  let rows = 0;
  for (const g of groups) {
    for (let i = 0; i < g.objects.length; i++) for (const [, list] of g.lists) if (list.degree(g.objects[i]!) > 0) rows++;
  }
  return {
    table: `${db}.counts`,
    columns: ['id', 'kind', 'n'],
    rows,
    *values() {
      for (const g of groups) {
        for (let i = 0; i < g.objects.length; i++) {
          const o = g.objects[i]!;
          for (const [table, list] of g.lists) {
            const n = list.degree(o);
            if (n > 0) yield `(${g.ids[o]},'${table}',${n})`;
          }
        }
      }
    },
  };
}

/** The events of the users on one shard, in primary key order (user, kind, time, ID). */
export function eventsPart(table: string, events: readonly SequenceEvent[]): Part {
  const rows = [...events].sort((a, b) =>
    a.user !== b.user ? (a.user < b.user ? -1 : 1) : a.kind !== b.kind ? (a.kind < b.kind ? -1 : 1) : a.ts !== b.ts ? a.ts - b.ts : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );
  return {
    table,
    columns: EVENT_ROW_COLUMNS,
    rows: rows.length,
    *values() {
      for (const e of rows) yield eventRow(e);
    },
  };
}

/** All rows of one shard database. */
export function shardParts(ix: DatasetIndex, shard: number): Part[] {
  const ds = ix.ds;
  const db = shardDatabase(shard);
  const lists = shardLists(ix, shard);
  return [
    objectPart(`${db}.users`, members(ix.usersByShard, shard), ds.userLocal, ds.userCreated, (u) => userJson(ix, u)),
    objectPart(`${db}.boards`, members(ix.boardsByShard, shard), ds.boardLocal, ds.boardCreated, (b) => boardJson(ix, b)),
    objectPart(`${db}.pins`, members(ix.pinsByShard, shard), ds.pinLocal, ds.pinCreated, (p) => pinJson(ix, p)),
    ...lists.map(([table, list]) => mappingPart(db, table, list)),
    countsPart(db, ix, lists, shard),
    eventsPart(`${db}.events`, ix.events.filter((e) => shardOf(e.user) === shard)),
  ];
}

/** Username lookups, by mod shard: namespace 'username', normalized (lowercase) key. */
export function lookupParts(ix: DatasetIndex, topology: Topology): Map<number, Part> {
  const count = topology.doc.modShard.count;
  const keys = ix.usernames.map((n) => normalizeLookupKey(n));
  const byMod = groupBy(ix.ds.userCount, count, (u) => modShardOf(keys[u]!, count));
  const out = new Map<number, Part>();
  for (let m = 0; m < count; m++) {
    const users = members(byMod, m);
    if (users.length === 0) continue;
    out.set(m, {
      table: `${modShardDatabase(m)}.lookups`,
      columns: ['namespace', 'lookup_key', 'id', 'created_at'],
      rows: users.length,
      *values() {
        for (const u of users) yield `('username',${sqlString(keys[u]!)},${ix.userIds[u]},${ix.ds.userCreated[u]})`;
      },
    });
  }
  return out;
}

/** Every part a host receives: its shards' databases, then its mod shards' lookups. */
export function hostParts(ix: DatasetIndex, topology: Topology): Map<string, Part[]> {
  const out = new Map<string, Part[]>();
  const open = new Set(ix.ds.shards);
  for (const [host, shards] of topology.shardsByHost()) {
    const parts: Part[] = [];
    for (const s of shards) if (open.has(s)) parts.push(...shardParts(ix, s));
    out.set(host, parts);
  }
  for (const [m, part] of lookupParts(ix, topology)) {
    const host = topology.hostOfModShard(m)!;
    const list = out.get(host);
    if (list) list.push(part);
    else out.set(host, [part]);
  }
  return out;
}
