/**
 * The baselines' resolvers: the same schema and the same answers as the gateway (same IDs, same
 * orders, same cursors), over a `Source` of data instead of shards. The in-memory floor's source
 * answers synchronously (plain values, no promise); the flat database's answers with promises.
 * `then`/`all` take either, so one set of resolvers serves both.
 */
import { GraphQLError, buildSchema, isInterfaceType, isObjectType, isUnionType, type GraphQLSchema } from 'graphql';
import { decodeCursor, encodeCursor } from '../../src/core/cursor.ts';
import { formatId, parseId } from '../../src/core/ids.ts';
import type { MappingTable } from '../../src/core/mappings.ts';
import type { ObjectType } from '../../src/core/objectTypes.ts';
import { storedKindsOf } from '../../src/core/events.ts';
import { GROUP_ACTORS, kindsArg, type ShownGroup } from '../../src/graphql/activity.ts';
import { PINTEREST_EVENTS } from '../../src/product/pinterest/events.ts';
import { pinterestResolvers } from '../../src/product/pinterest/resolvers.ts';
import type { NotificationPage, NotificationPageRequest } from '../../src/storage/eventStore.ts';
import { checkPageSize, checkTime, checkUsername } from '../../src/core/validate.ts';
import { loadTypeDefs } from '../../src/graphql/schema.ts';
import { FEED_MAX_SOURCES } from '../../src/loaders/feed.ts';
import type { ListOrder, Page, PageRequest } from '../../src/storage/mappingStore.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';

export type M<T> = T | Promise<T>;

export function then<T, R>(v: M<T>, f: (t: T) => M<R>): M<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}

export function all<T>(vs: M<T>[]): M<T[]> {
  return vs.some((v) => v instanceof Promise) ? Promise.all(vs) : (vs as T[]);
}

/** An object, optionally with its counts inline (the flat database keeps them as columns). */
export type Obj = StoredObject & { readonly counts?: Partial<Record<MappingTable, number>> };

export interface FeedPage {
  readonly edges: { cursor: string; node: Obj }[];
  readonly hasNextPage: boolean;
  readonly endCursor: string | null;
}

export interface Source {
  /** Active objects only; null when missing or deleted. */
  object(id: bigint): M<Obj | null>;
  page(req: PageRequest): M<Page>;
  count(o: Obj, kind: MappingTable): M<number>;
  edge(table: MappingTable, from: bigint, to: bigint): M<boolean>;
  username(key: string): M<bigint | null>;
  /** The home feed in one go, if the source has a better way than merging lists. */
  feed?(viewer: bigint, first: number, after: string | null): M<FeedPage>;
  /** A page of the user's notification groups, the same as `EventStore.notifications` answers. */
  notifications(req: NotificationPageRequest): M<NotificationPage>;
  /** Adds or removes a like (both directions and both counts); false when nothing changed. */
  like(viewer: bigint, pin: bigint, add: boolean): M<boolean>;
}

export interface SourceContext {
  readonly src: Source;
  readonly viewerId: bigint | undefined;
  /** SQL statements this request ran (the flat baseline counts them; the floor runs none). */
  sqlRoundTrips: number;
}

/** The gateway's list tag inside cursors (src/storage/mappingStore.ts): cursors are interchangeable. */
export function listTag(req: { table: MappingTable; from: bigint; order?: ListOrder | undefined }): string {
  return `${req.table}:${req.from}:${req.order === 'owner' ? 'o' : 't'}`;
}
export { decodeCursor, encodeCursor };

function bad(code: string, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

type Args = Record<string, unknown>;
const GRAPHQL_TYPE: Record<ObjectType, string> = { user: 'User', board: 'Board', pin: 'Pin', comment: 'Comment' };

function id(value: unknown, expect?: ObjectType): bigint {
  return parseId(value, expect ? { expect } : {});
}
function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
function ref(o: Obj, field: string): bigint | null {
  const v = o.data[field];
  return typeof v === 'string' && /^[0-9]{1,20}$/.test(v) ? BigInt(v) : null;
}
function load(ctx: SourceContext, objectId: bigint | null, type: ObjectType): M<Obj | null> {
  if (objectId === null) return null;
  return then(ctx.src.object(objectId), (o) => (o && o.type === type ? o : null));
}
function viewerRequired(ctx: SourceContext): bigint {
  if (ctx.viewerId === undefined) throw bad('UNAUTHENTICATED', 'This field needs a viewer: send Authorization: Bearer <token>');
  return ctx.viewerId;
}

/** A list read forward (the benchmark asks no backward page: `last`/`before` are refused). */
function connection(ctx: SourceContext, table: MappingTable, from: bigint, nodeType: ObjectType, args: Args, order: ListOrder = 'time') {
  if (args.last != null || args.before != null) throw bad('INVALID_ARGUMENT', 'The baselines page forward only: expected first/after, got last/before');
  const first = checkPageSize(args.first as number | null | undefined);
  const since = checkTime(args.since as string | null | undefined, 'since');
  const until = checkTime(args.until as string | null | undefined, 'until');
  return then(ctx.src.page({ table, from, first, after: (args.after as string | null | undefined) ?? null, order, since, until }), (page) =>
    then(all(page.edges.map((e) => ctx.src.object(e.to))), (nodes) => ({
      edges: page.edges.flatMap((e, i) => {
        const node = nodes[i];
        return node && node.type === nodeType ? [{ cursor: e.cursor, node }] : [];
      }),
      pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: false, startCursor: page.edges[0]?.cursor ?? null, endCursor: page.endCursor },
    })),
  );
}

/** The gateway's home feed (src/loaders/feed.ts) over a source: same sources, merge and cursors. */
export function mergedFeed(src: Source, viewer: bigint, first: number, after: string | null): M<FeedPage> {
  const list = `feed:${viewer}`;
  const start = after ? decodeCursor(after, list) : undefined;
  const startAfter = start ? { startAfter: { key: start.key, id: start.id } } : {};
  return then(
    all([
      src.page({ table: 'user_follows_users', from: viewer, first: FEED_MAX_SOURCES }),
      src.page({ table: 'user_follows_boards', from: viewer, first: FEED_MAX_SOURCES }),
    ]),
    ([users, boards]) =>
      then(
        all([
          ...users!.edges.map((e) => src.page({ table: 'user_has_pins', from: e.to, first: first + 1, ...startAfter })),
          ...boards!.edges.map((e) => src.page({ table: 'board_has_pins', from: e.to, first: first + 1, ...startAfter })),
        ]),
        (pages) => {
          const merged = new Map<bigint, number>();
          for (const page of pages) for (const e of page.edges) merged.set(e.to, e.sequence);
          const ordered = [...merged.entries()].sort(([ia, sa], [ib, sb]) => sb - sa || (ib > ia ? 1 : ib < ia ? -1 : 0)).slice(0, first + 1);
          const window = ordered.slice(0, first);
          return then(all(window.map(([pid]) => src.object(pid))), (objects) => {
            const edges: FeedPage['edges'] = [];
            window.forEach(([pid, sequence], i) => {
              const node = objects[i];
              if (node) edges.push({ cursor: encodeCursor({ list, key: BigInt(sequence), id: pid }), node });
            });
            const last = window.at(-1);
            return { edges, hasNextPage: ordered.length > first, endCursor: last ? encodeCursor({ list, key: BigInt(last[1]), id: last[0] }) : null };
          });
        },
      ),
  );
}

/** The gateway's `notifications` (src/graphql/activity.ts) over a source: a group shows while its target and one of its latest actors exist. */
function notificationConnection(ctx: SourceContext, user: bigint, a: Args) {
  const first = checkPageSize(a.first as number | null | undefined);
  const req: NotificationPageRequest = {
    user,
    kinds: storedKindsOf(PINTEREST_EVENTS, 'notifications', kindsArg(PINTEREST_EVENTS, a.kinds)),
    first,
    after: str(a.after),
    actors: GROUP_ACTORS,
    since: checkTime(a.since as string | null | undefined, 'since'),
    until: checkTime(a.until as string | null | undefined, 'until'),
  };
  return then(ctx.src.notifications(req), (page) => {
    const ids = [...new Set(page.groups.flatMap((g) => [g.object, ...g.actors]))];
    return then(all(ids.map((i) => ctx.src.object(i))), (objects) => {
      const byId = new Map<bigint, Obj>();
      objects.forEach((o, i) => {
        if (o) byId.set(ids[i]!, o);
      });
      const edges = page.groups.flatMap((group) => {
        const target = byId.get(group.object);
        const actors = group.actors.flatMap((i) => byId.get(i) ?? []);
        return target && actors.length > 0 ? [{ cursor: group.cursor, node: { group, target, actors } satisfies ShownGroup }] : [];
      });
      return { edges, pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: false, startCursor: page.groups[0]?.cursor ?? null, endCursor: page.endCursor } };
    });
  });
}

const count = (kind: MappingTable) => (o: Obj, _a: Args, ctx: SourceContext) => ctx.src.count(o, kind);
const common = { id: (o: Obj) => formatId(o.id), createdAt: (o: Obj) => new Date(o.createdAt).toISOString() };

function relate(ctx: SourceContext, pinArg: unknown, add: boolean) {
  const me = viewerRequired(ctx);
  const pinId = id(pinArg, 'pin');
  return then(all([ctx.src.object(me), ctx.src.object(pinId)]), ([viewer, pin]) => {
    if (!viewer) throw bad('UNAUTHENTICATED', 'The token belongs to a user who no longer exists');
    if (!pin || pin.type !== 'pin') throw bad('NOT_FOUND', `No pin with ID ${pinId}`);
    return then(ctx.src.like(me, pinId, add), () => pin);
  });
}

const notInBaseline = () => {
  throw bad('NOT_IMPLEMENTED', 'The baselines implement the reads and the like/unlike mutations the benchmark sends');
};

export const sourceResolvers = {
  Query: {
    viewer: (_: unknown, _a: Args, ctx: SourceContext) => (ctx.viewerId === undefined ? null : load(ctx, ctx.viewerId, 'user')),
    node: (_: unknown, a: Args, ctx: SourceContext) => ctx.src.object(id(a.id)),
    user: (_: unknown, a: Args, ctx: SourceContext) => {
      const hasId = a.id !== undefined && a.id !== null;
      const hasName = a.username !== undefined && a.username !== null;
      if (hasId === hasName) throw bad('INVALID_ARGUMENT', 'Expected exactly one of id or username');
      if (hasId) return load(ctx, id(a.id, 'user'), 'user');
      return then(ctx.src.username(checkUsername(String(a.username)).toLowerCase()), (uid) => load(ctx, uid, 'user'));
    },
    board: (_: unknown, a: Args, ctx: SourceContext) => load(ctx, id(a.id, 'board'), 'board'),
    pin: (_: unknown, a: Args, ctx: SourceContext) => load(ctx, id(a.id, 'pin'), 'pin'),
    homeFeed: (_: unknown, a: Args, ctx: SourceContext) => {
      const viewer = viewerRequired(ctx);
      const first = checkPageSize(a.first as number | null | undefined);
      const after = str(a.after);
      const page = ctx.src.feed ? ctx.src.feed(viewer, first, after) : mergedFeed(ctx.src, viewer, first, after);
      return then(page, (p) => ({ edges: p.edges, pageInfo: { hasNextPage: p.hasNextPage, hasPreviousPage: false, startCursor: p.edges[0]?.cursor ?? null, endCursor: p.endCursor } }));
    },
  },
  Mutation: {
    likePin: (_: unknown, a: Args, ctx: SourceContext) => relate(ctx, a.pinId, true),
    unlikePin: (_: unknown, a: Args, ctx: SourceContext) => relate(ctx, a.pinId, false),
  } as Record<string, unknown>,
  Node: { __resolveType: (o: Obj) => GRAPHQL_TYPE[o.type] },
  User: {
    ...common,
    username: (o: Obj) => str(o.data.username) ?? '',
    displayName: (o: Obj) => str(o.data.displayName),
    about: (o: Obj) => str(o.data.about),
    boardCount: count('user_has_boards'),
    pinCount: count('user_has_pins'),
    likeCount: count('user_likes_pins'),
    followerCount: count('user_followed_by_users'),
    followingCount: count('user_follows_users'),
    followedBoardCount: count('user_follows_boards'),
    viewerFollows: (o: Obj, _a: Args, ctx: SourceContext) => (ctx.viewerId === undefined ? false : ctx.src.edge('user_follows_users', ctx.viewerId, o.id)),
    boards: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'user_has_boards', o.id, 'board', a),
    pins: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'user_has_pins', o.id, 'pin', a),
    likedPins: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'user_likes_pins', o.id, 'pin', a),
    followers: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'user_followed_by_users', o.id, 'user', a),
    following: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'user_follows_users', o.id, 'user', a),
    followedBoards: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'user_follows_boards', o.id, 'board', a),
    notifications: (o: Obj, a: Args, ctx: SourceContext) => {
      if (ctx.viewerId === undefined) throw bad('UNAUTHENTICATED', 'Notifications need a viewer: send Authorization: Bearer <token>');
      if (ctx.viewerId !== o.id) throw bad('FORBIDDEN', "Expected the viewer's own notifications, got another user's");
      return notificationConnection(ctx, o.id, a);
    },
  },
  Notification: pinterestResolvers.Notification,
  Board: {
    ...common,
    name: (o: Obj) => str(o.data.name) ?? '',
    description: (o: Obj) => str(o.data.description),
    owner: (o: Obj, _a: Args, ctx: SourceContext) => load(ctx, ref(o, 'owner_id'), 'user'),
    pinCount: count('board_has_pins'),
    followerCount: count('board_followed_by_users'),
    viewerFollows: (o: Obj, _a: Args, ctx: SourceContext) => (ctx.viewerId === undefined ? false : ctx.src.edge('user_follows_boards', ctx.viewerId, o.id)),
    pins: (o: Obj, a: Args, ctx: SourceContext) => {
      const owner = a.order === 'OWNER';
      if (owner && (a.since != null || a.until != null)) throw bad('INVALID_ARGUMENT', 'Expected since/until only with order NEWEST, got order OWNER');
      return connection(ctx, 'board_has_pins', o.id, 'pin', a, owner ? 'owner' : 'time');
    },
    followers: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'board_followed_by_users', o.id, 'user', a),
  },
  Pin: {
    ...common,
    title: (o: Obj) => str(o.data.title),
    description: (o: Obj) => str(o.data.description),
    link: (o: Obj) => str(o.data.link),
    imageUrl: (o: Obj) => str(o.data.imageUrl),
    board: (o: Obj, _a: Args, ctx: SourceContext) => load(ctx, ref(o, 'board_id'), 'board'),
    pinner: (o: Obj, _a: Args, ctx: SourceContext) => load(ctx, ref(o, 'pinner_id'), 'user'),
    via: (o: Obj, _a: Args, ctx: SourceContext) => load(ctx, ref(o, 'via_pin_id'), 'pin'),
    likeCount: count('pin_liked_by_users'),
    repinCount: count('pin_repinned_as_pins'),
    commentCount: count('pin_has_comments'),
    viewerHasLiked: (o: Obj, _a: Args, ctx: SourceContext) => (ctx.viewerId === undefined ? false : ctx.src.edge('user_likes_pins', ctx.viewerId, o.id)),
    likers: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'pin_liked_by_users', o.id, 'user', a),
    comments: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'pin_has_comments', o.id, 'comment', a),
    repins: (o: Obj, a: Args, ctx: SourceContext) => connection(ctx, 'pin_repinned_as_pins', o.id, 'pin', a),
  },
  Comment: {
    ...common,
    text: (o: Obj) => str(o.data.text) ?? '',
    author: (o: Obj, _a: Args, ctx: SourceContext) => load(ctx, ref(o, 'author_id'), 'user'),
    pin: (o: Obj, _a: Args, ctx: SourceContext) => load(ctx, ref(o, 'pin_id'), 'pin'),
  },
};

/**
 * The gateway's SDL (schema/*.graphql) with these resolvers attached by hand: plain graphql-js,
 * no Apollo, no graphql-tools. Mutations the baselines do not implement answer NOT_IMPLEMENTED.
 */
export function baselineSchema(): GraphQLSchema {
  const schema = buildSchema(loadTypeDefs());
  const table = sourceResolvers as unknown as Record<string, Record<string, unknown>>;
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    const own = table[type.name];
    if (isObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        const r = own?.[field.name];
        if (typeof r === 'function') field.resolve = r as never;
        else if (type.name === 'Mutation') field.resolve = notInBaseline;
      }
    } else if ((isInterfaceType(type) || isUnionType(type)) && typeof own?.__resolveType === 'function') {
      type.resolveType = own.__resolveType as never;
    }
  }
  return schema;
}
