/**
 * The floor's data: the objects, list entries, counts and edges the scenarios touch, in Maps.
 * Filled by running every scenario request once through the same resolvers over a recording
 * source backed by the real shards (through the gateway's own loaders); then served from memory,
 * synchronously — no promise, no I/O.
 *
 * A list keeps every entry any recorded page saw (each recorded page fetched one entry more than
 * it showed, so `hasNextPage` is known), sorted in the list's order; a page after a cursor is a
 * binary search. Entries between recorded pages are absent, which no recorded request can see.
 * A user whose notifications are read has their whole event sequence recorded, each event with
 * whether its relation stands (read from the shards as the store checks it), and is grouped per
 * request (./notifications.ts).
 */
import { DEFAULT_NOTIFICATION_WINDOW_MS, defaultEventRetention, storedKindSpec, type EventRetention, type SequenceEvent } from '../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../src/product/pinterest/events.ts';
import { groupBy } from '../../src/core/groupBy.ts';
import type { MappingTable } from '../../src/core/mappings.ts';
import { createLoaders, type Loaders } from '../../src/loaders/loaders.ts';
import type { Storage } from '../../src/storage/index.ts';
import type { NotificationPage, NotificationPageRequest } from '../../src/storage/eventStore.ts';
import type { Page, PageRequest } from '../../src/storage/mappingStore.ts';
import { EventSequence, type FloorEvent } from './notifications.ts';
import { decodeCursor, encodeCursor, listTag, then, type M, type Obj, type Source } from './source.ts';

interface Entry {
  readonly to: bigint;
  readonly sequence: number;
  /** The order key: the sequence (time order) or the position (owner order). */
  readonly k: bigint;
}

function owner(tag: string): boolean {
  return tag.endsWith(':o');
}

/** Position of entry a relative to b in the list's order (newest first in time order). */
function cmp(tag: string, a: { k: bigint; to: bigint }, b: { k: bigint; to: bigint }): number {
  const c = a.k === b.k ? (a.to < b.to ? -1 : a.to > b.to ? 1 : 0) : a.k < b.k ? -1 : 1;
  return owner(tag) ? c : -c;
}

export class MemoryData {
  readonly objects = new Map<bigint, Obj>();
  readonly lists = new Map<string, Entry[]>();
  readonly counts = new Map<string, number>();
  readonly edges = new Set<string>();
  readonly usernames = new Map<string, bigint>();
  /** Whole event sequences of the users whose notifications were read. */
  readonly events = new Map<bigint, EventSequence>();

  addEntries(tag: string, entries: Entry[]): void {
    const list = this.lists.get(tag) ?? [];
    const have = new Set(list.map((e) => e.to));
    for (const e of entries) if (!have.has(e.to)) list.push(e);
    list.sort((a, b) => cmp(tag, a, b));
    this.lists.set(tag, list);
  }

  insertEntry(tag: string, e: Entry): void {
    const list = this.lists.get(tag) ?? [];
    list.splice(this.#lowerBound(tag, list, e), 0, e);
    this.lists.set(tag, list);
  }

  removeEntry(tag: string, to: bigint): void {
    const list = this.lists.get(tag);
    if (!list) return;
    const i = list.findIndex((e) => e.to === to);
    if (i >= 0) list.splice(i, 1);
  }

  /** First index whose entry comes after `key` in the list's order. */
  #lowerBound(tag: string, list: Entry[], key: { k: bigint; to: bigint }): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(tag, list[mid]!, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  page(req: PageRequest): Page {
    const tag = listTag(req);
    let list = this.lists.get(tag) ?? [];
    if (req.order !== 'owner' && (req.since != null || req.until != null)) {
      list = list.filter((e) => (req.since == null || e.sequence >= req.since) && (req.until == null || e.sequence < req.until));
    }
    const c = req.after != null ? decodeCursor(req.after, tag) : req.startAfter;
    const start = c ? this.#lowerBound(tag, list, { k: c.key, to: c.id }) : 0;
    const slice = list.slice(start, start + req.first);
    const edges = slice.map((e) => ({ to: e.to, sequence: e.sequence, cursor: encodeCursor({ list: tag, key: e.k, id: e.to }) }));
    return { edges, hasNextPage: list.length > start + req.first, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null };
  }

  stats(): Record<string, number> {
    let entries = 0;
    for (const l of this.lists.values()) entries += l.length;
    let events = 0;
    for (const e of this.events.values()) events += e.events.length;
    return { objects: this.objects.size, lists: this.lists.size, listEntries: entries, counts: this.counts.size, edges: this.edges.size, events };
  }
}

const countKey = (id: bigint, kind: string): string => `${id}:${kind}`;
const edgeKey = (table: string, from: bigint, to: bigint): string => `${table}:${from}:${to}`;

/** What the gateway's event store is configured with (the floor must group as it does). */
export interface EventSettings {
  readonly retention?: EventRetention;
  readonly windowMs?: number;
}

/** Serves the floor: everything from the Maps, synchronously. */
export class MemorySource implements Source {
  readonly #d: MemoryData;
  readonly #now: () => number;
  readonly #events: { retention: EventRetention; windowMs: number };
  constructor(data: MemoryData, events: EventSettings = {}, now: () => number = Date.now) {
    this.#d = data;
    this.#now = now;
    this.#events = { retention: events.retention ?? defaultEventRetention(PINTEREST_EVENTS), windowMs: events.windowMs ?? DEFAULT_NOTIFICATION_WINDOW_MS };
  }
  notifications(req: NotificationPageRequest): NotificationPage {
    const seq = this.#d.events.get(req.user) ?? new EventSequence([]);
    return seq.page(req, { now: this.#now(), ...this.#events });
  }
  object(id: bigint): Obj | null {
    return this.#d.objects.get(id) ?? null;
  }
  page(req: PageRequest): Page {
    return this.#d.page(req);
  }
  count(o: Obj, kind: MappingTable): number {
    return this.#d.counts.get(countKey(o.id, kind)) ?? 0;
  }
  edge(table: MappingTable, from: bigint, to: bigint): boolean {
    return this.#d.edges.has(edgeKey(table, from, to));
  }
  username(key: string): bigint | null {
    return this.#d.usernames.get(key) ?? null;
  }
  like(viewer: bigint, pin: bigint, add: boolean): boolean {
    const d = this.#d;
    const key = edgeKey('user_likes_pins', viewer, pin);
    if (d.edges.has(key) === add) return false;
    const mine = listTag({ table: 'user_likes_pins', from: viewer });
    const theirs = listTag({ table: 'pin_liked_by_users', from: pin });
    if (add) {
      const sequence = this.#now();
      d.edges.add(key);
      d.insertEntry(mine, { to: pin, sequence, k: BigInt(sequence) });
      d.insertEntry(theirs, { to: viewer, sequence, k: BigInt(sequence) });
    } else {
      d.edges.delete(key);
      d.removeEntry(mine, pin);
      d.removeEntry(theirs, viewer);
    }
    const delta = add ? 1 : -1;
    for (const k of [countKey(viewer, 'user_likes_pins'), countKey(pin, 'pin_liked_by_users')]) d.counts.set(k, (d.counts.get(k) ?? 0) + delta);
    return true;
  }
}

/**
 * Reads through the gateway's loaders (one set per request, so a request batches like the gateway)
 * and keeps a copy of everything it returns in `data`.
 */
export class RecordingSource implements Source {
  readonly #d: MemoryData;
  readonly #l: Loaders;
  readonly #s: Storage;
  constructor(data: MemoryData, storage: Storage) {
    this.#d = data;
    this.#s = storage;
    this.#l = createLoaders(storage, {});
  }
  /** The store's own page; the user's whole sequence recorded once, with whether each event's relation stands. */
  async notifications(req: NotificationPageRequest): Promise<NotificationPage> {
    if (!this.#d.events.has(req.user)) this.#d.events.set(req.user, new EventSequence(await recordSequence(this.#s, req.user)));
    return this.#l.events.notifications(req);
  }
  object(id: bigint): M<Obj | null> {
    return this.#l.objects.load(id).then((o) => {
      if (o) this.#d.objects.set(o.id, o);
      return o;
    });
  }
  page(req: PageRequest): M<Page> {
    const tag = listTag(req);
    return this.#l.pages.load({ ...req, first: req.first + 1 }).then((page) => {
      this.#d.addEntries(tag, page.edges.map((e) => ({ to: e.to, sequence: e.sequence, k: decodeCursor(e.cursor, tag).key })));
      const edges = page.edges.slice(0, req.first);
      return { edges, hasNextPage: page.edges.length > req.first || page.hasNextPage, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null };
    });
  }
  count(o: Obj, kind: MappingTable): M<number> {
    return this.#l.counts.load({ id: o.id, kind }).then((n) => {
      this.#d.counts.set(countKey(o.id, kind), n);
      return n;
    });
  }
  edge(table: MappingTable, from: bigint, to: bigint): M<boolean> {
    return this.#l.edges.load({ table, from, to }).then((yes) => {
      if (yes) this.#d.edges.add(edgeKey(table, from, to));
      return yes;
    });
  }
  username(key: string): M<bigint | null> {
    return then(this.#l.lookups.load({ namespace: 'username', key }), (uid) => {
      if (uid !== null) this.#d.usernames.set(key, uid);
      return uid;
    });
  }
  like(): never {
    throw new Error('recording runs reads only');
  }
}

/**
 * Every stored event of a user and whether its relation stands: the edge of its kind
 * (Pinterest's spec's edge of the kind) exists with the event's time as its sequence — the store's rule, read
 * through the mapping store (one round trip per kind and host).
 */
async function recordSequence(storage: Storage, user: bigint): Promise<FloorEvent[]> {
  const stored = await storage.events.stored(user);
  const standing = new Set<SequenceEvent>();
  for (const [kind, events] of groupBy(stored, (e) => e.kind)) {
    const edge = storedKindSpec(PINTEREST_EVENTS, kind).edge;
    if (!edge) {
      for (const e of events) standing.add(e);
      continue;
    }
    const end = (e: SequenceEvent, side: 'user' | 'object' | 'actor' | 'detail'): bigint => (side === 'user' ? e.user : side === 'object' ? e.object : side === 'actor' ? e.actor : e.detail ?? 0n);
    const pairs = events.map((e) => ({ from: end(e, edge.from), to: end(e, edge.to) }));
    const sequences = await storage.mappings.sequences(edge.table as MappingTable, pairs);
    events.forEach((e, i) => {
      if (sequences.get(`${pairs[i]!.from}:${pairs[i]!.to}`) === e.ts) standing.add(e);
    });
  }
  return stored.map((e) => ({ kind: e.kind, ts: e.ts, id: e.id, actor: e.actor, object: e.object, standing: standing.has(e) }));
}
