import type { GraphQLResolveInfo } from 'graphql';
import { ShardqlError } from '../core/errors.ts';
import { formatId, parseId } from '../core/ids.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import { checkPageSize, checkUsername } from '../core/validate.ts';
import type { StoredObject } from '../storage/objectStore.ts';
import type { Learned } from '../services/writeExecutor.ts';
import type { WriteOpts } from '../services/writes.ts';
import { DECLARED } from '../core/model/declared.ts';
import { graphqlTypeNames, load, objectResolvers } from './modelResolvers.ts';
import { pageInfoOf } from './connections.ts';
import { activityColumns, activityConnection, activityEventResolvers, notificationConnection, notificationResolvers } from './activity.ts';
import type { GatewayContext } from './context.ts';

type Args = Record<string, unknown>;
type Resolver = (parent: StoredObject, args: Args, ctx: GatewayContext) => unknown;

const MODELLED = objectResolvers(DECLARED);
const GRAPHQL_TYPE = graphqlTypeNames(DECLARED);

/** An ID argument: parsed, of the expected type, on a shard this deployment has. */
function id(ctx: GatewayContext, value: unknown, expect?: ObjectType): bigint {
  return parseId(value, { ...(expect ? { expect } : {}), shardExists: (s) => ctx.topology.shardExists(s) });
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function viewerRequired(ctx: GatewayContext): bigint {
  if (ctx.viewerId === undefined) throw new ShardqlError('UNAUTHENTICATED', 'This field needs a viewer: send Authorization: Bearer <token>');
  return ctx.viewerId;
}

function input(args: Args): Record<string, string | null | undefined> {
  return (args.input ?? {}) as Record<string, string | null | undefined>;
}

/** The per-field idempotency key: the request's `Idempotency-Key` plus the field's response key. */
function idem(ctx: GatewayContext, info: GraphQLResolveInfo): { idempotencyKey?: string } {
  return ctx.idempotencyKey === undefined ? {} : { idempotencyKey: `${ctx.idempotencyKey}:${info.path.key}` };
}

/**
 * Options of a relating mutation: its idempotency key, and what the write learned about the state
 * it left, kept in the request's loaders so the selection set reads it from there (a like's
 * `likeCount` and `viewerHasLiked` cost no round trip). Replaces anything loaded before it.
 */
function relating(ctx: GatewayContext, info: GraphQLResolveInfo): WriteOpts {
  return {
    ...idem(ctx, info),
    learned: (fact: Learned) => {
      if (fact.kind === 'edge') {
        const key = { table: fact.table, from: fact.from, to: fact.to };
        ctx.loaders.edges.clear(key).prime(key, fact.present);
      } else {
        const key = { id: fact.id, kind: fact.table };
        ctx.loaders.counts.replace(key, fact.n);
      }
    },
  };
}

/** A two-sided relation mutation: the viewer and one object ID argument of the given type. */
const relation =
  (write: 'likePin' | 'unlikePin' | 'followUser' | 'unfollowUser' | 'followBoard' | 'unfollowBoard', argument: string, type: ObjectType) =>
  (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) =>
    ctx.writes[write](ctx.viewerId, id(ctx, args[argument], type), ctx.op, relating(ctx, info));

/** A delete's payload: the deleted object named by `deletedId`, never as the payload's own `id` (Relay keys its store by `id`). */
const deleted = (objectId: bigint) => (done: boolean) => ({ deletedId: formatId(objectId), deleted: done });

/**
 * Thin resolvers: arguments in, loaders or writes out. No SQL and no cache keys here; every
 * object field reads the JSON blob of the object its parent already loaded.
 */
export const resolvers = {
  ...MODELLED,
  Query: {
    viewer: (_: unknown, _args: Args, ctx: GatewayContext) => (ctx.viewerId === undefined ? null : load(ctx, ctx.viewerId, 'user')),
    node: async (_: unknown, args: Args, ctx: GatewayContext) => ctx.loaders.objects.load(id(ctx, args.id)),
    user: async (_: unknown, args: Args, ctx: GatewayContext) => {
      const hasId = args.id !== undefined && args.id !== null;
      const hasName = args.username !== undefined && args.username !== null;
      if (hasId === hasName) throw new ShardqlError('INVALID_ARGUMENT', 'Expected exactly one of id or username');
      if (hasId) return load(ctx, id(ctx, args.id, 'user'), 'user');
      const userId = await ctx.loaders.usernames.load(checkUsername(String(args.username)).toLowerCase());
      return load(ctx, userId, 'user');
    },
    board: (_: unknown, args: Args, ctx: GatewayContext) => load(ctx, id(ctx, args.id, 'board'), 'board'),
    pin: (_: unknown, args: Args, ctx: GatewayContext) => load(ctx, id(ctx, args.id, 'pin'), 'pin'),
    homeFeed: async (_: unknown, args: Args, ctx: GatewayContext) => {
      const page = await ctx.homeFeeds.page(ctx.loaders, ctx.op, viewerRequired(ctx), checkPageSize(args.first as number | null), str(args.after));
      return { edges: page.edges, pageInfo: pageInfoOf(page) };
    },
  },

  Mutation: {
    createUser: async (_: unknown, args: Args, ctx: GatewayContext) => {
      const i = input(args);
      const user = await ctx.writes.createUser(
        { username: String(i.username), email: i.email ?? null, displayName: i.displayName ?? null, about: i.about ?? null },
        ctx.op,
      );
      return { user, token: await ctx.mintToken(user.id) };
    },
    updateViewer: (_: unknown, args: Args, ctx: GatewayContext) => ctx.writes.updateViewer(ctx.viewerId, input(args), ctx.op),
    deleteViewer: async (_: unknown, _args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const me = viewerRequired(ctx);
      return deleted(me)(await ctx.writes.deleteViewer(me, ctx.op, idem(ctx, info)));
    },
    createBoard: (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const i = input(args);
      return ctx.writes.createBoard(ctx.viewerId, { name: String(i.name), description: i.description ?? null }, ctx.op, idem(ctx, info));
    },
    updateBoard: (_: unknown, args: Args, ctx: GatewayContext) => ctx.writes.updateBoard(ctx.viewerId, id(ctx, args.id, 'board'), input(args), ctx.op),
    deleteBoard: async (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const boardId = id(ctx, args.id, 'board');
      return deleted(boardId)(await ctx.writes.deleteBoard(ctx.viewerId, boardId, ctx.op, idem(ctx, info)));
    },
    createPin: (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const i = input(args);
      return ctx.writes.createPin(ctx.viewerId, id(ctx, i.boardId, 'board'), i, ctx.op, idem(ctx, info));
    },
    updatePin: (_: unknown, args: Args, ctx: GatewayContext) => ctx.writes.updatePin(ctx.viewerId, id(ctx, args.id, 'pin'), input(args), ctx.op),
    deletePin: async (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const pinId = id(ctx, args.id, 'pin');
      return deleted(pinId)(await ctx.writes.deletePin(ctx.viewerId, pinId, ctx.op, idem(ctx, info)));
    },
    repin: (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) =>
      ctx.writes.repin(ctx.viewerId, id(ctx, args.pinId, 'pin'), id(ctx, args.boardId, 'board'), ctx.op, idem(ctx, info)),
    movePin: (_: unknown, args: Args, ctx: GatewayContext) =>
      ctx.writes.movePin(
        ctx.viewerId,
        id(ctx, args.boardId, 'board'),
        id(ctx, args.pinId, 'pin'),
        args.afterPinId == null ? null : id(ctx, args.afterPinId, 'pin'),
        ctx.op,
      ),
    createComment: (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) =>
      ctx.writes.createComment(ctx.viewerId, id(ctx, args.pinId, 'pin'), String(args.text), ctx.op, idem(ctx, info)),
    deleteComment: async (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const commentId = id(ctx, args.id, 'comment');
      return deleted(commentId)(await ctx.writes.deleteComment(ctx.viewerId, commentId, ctx.op, idem(ctx, info)));
    },
    likePin: relation('likePin', 'pinId', 'pin'),
    unlikePin: relation('unlikePin', 'pinId', 'pin'),
    followUser: relation('followUser', 'userId', 'user'),
    unfollowUser: relation('unfollowUser', 'userId', 'user'),
    followBoard: relation('followBoard', 'boardId', 'board'),
    unfollowBoard: relation('unfollowBoard', 'boardId', 'board'),
  },

  Node: {
    __resolveType: (o: StoredObject) => GRAPHQL_TYPE.get(o.type),
  },

  User: {
    ...MODELLED.User,
    activity: (o: StoredObject, a: Args, ctx: GatewayContext) => activityConnection(ctx, o.id, a),
    latestActivity: (o: StoredObject, a: Args, ctx: GatewayContext) => activityColumns(ctx, o.id, a),
    notifications: (o: StoredObject, a: Args, ctx: GatewayContext) => {
      // Only the user themself: anyone else (or no one) is refused, and the field is null.
      if (ctx.viewerId === undefined) throw new ShardqlError('UNAUTHENTICATED', 'Notifications need a viewer: send Authorization: Bearer <token>');
      if (ctx.viewerId !== o.id) throw new ShardqlError('FORBIDDEN', "Expected the viewer's own notifications, got another user's");
      return notificationConnection(ctx, o.id, a);
    },
  },

  ActivityEvent: activityEventResolvers,
  Notification: notificationResolvers,

};
