import type { GraphQLResolveInfo } from 'graphql';
import { ShardqlError } from '../core/errors.ts';
import { checkPageSize, checkUsername } from '../core/validate.ts';
import type { StoredObject } from '../storage/objectStore.ts';
import { servedModel } from '../core/model/served.ts';
import { graphqlTypeNames, load, objectResolvers } from './modelResolvers.ts';
import { deletePayload, idArg as id, idempotency, mutationResolvers } from './mutationResolvers.ts';
import { pageInfoOf } from './connections.ts';
import { activityColumns, activityConnection, activityEventResolvers, notificationConnection, notificationResolvers } from './activity.ts';
import type { GatewayContext } from './context.ts';

type Args = Record<string, unknown>;
type Resolver = (parent: StoredObject, args: Args, ctx: GatewayContext) => unknown;

const MODELLED = objectResolvers(servedModel());
const GRAPHQL_TYPE = graphqlTypeNames(servedModel());
const DECLARED_MUTATIONS = mutationResolvers(servedModel());

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
    // Every declared mutation but the @custom ones below derives from the model.
    ...DECLARED_MUTATIONS,
    createUser: async (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const i = input(args);
      const user = await ctx.writes.createUser(
        { username: String(i.username), email: i.email ?? null, displayName: i.displayName ?? null, about: i.about ?? null },
        ctx.op,
        idempotency(ctx, info),
      );
      return { user, token: await ctx.mintToken(user.id) };
    },
    updateViewer: (_: unknown, args: Args, ctx: GatewayContext) => ctx.writes.updateViewer(ctx.viewerId, input(args), ctx.op),
    deleteViewer: async (_: unknown, _args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const me = viewerRequired(ctx);
      return deletePayload(me)(await ctx.writes.deleteViewer(me, ctx.op, idempotency(ctx, info)));
    },
    repin: (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) =>
      ctx.writes.repin(ctx.viewerId, id(ctx, args.pinId, 'pin'), id(ctx, args.boardId, 'board'), ctx.op, idempotency(ctx, info)),
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
