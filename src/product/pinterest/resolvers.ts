/**
 * The Pinterest product's own resolvers, beside the ones derived from the model: the home feed,
 * its @custom mutations (sign-up with an optional email, the viewer's own account, repin), a
 * user's activity and notifications. Attached only when the served model has what they name
 * (index.ts `needs`).
 */
import type { GraphQLResolveInfo } from 'graphql';
import { ShardqlError } from '../../core/errors.ts';
import { checkPageSize } from '../../core/validate.ts';
import type { StoredObject } from '../../storage/objectStore.ts';
import { activityColumns, activityConnection, activityEventResolvers, activityKindOf, notificationConnection, notificationResolvers, type ShownEvent, type ShownGroup } from '../../graphql/activity.ts';
import { pageInfoOf } from '../../graphql/connections.ts';
import type { GatewayContext } from '../../graphql/context.ts';
import { deletePayload, idArg as id, idempotency } from '../../graphql/mutationResolvers.ts';
import { PINTEREST_EVENTS as EVENTS } from './events.ts';
import { ProductWrites } from './writes.ts';

type Args = Record<string, unknown>;

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

/** The served writes, which are this product's when it is attached (server.ts builds them from index.ts `writes`). */
function writes(ctx: GatewayContext): ProductWrites {
  if (!(ctx.writes instanceof ProductWrites)) throw new Error('the Pinterest product is attached but the served writes are not its ProductWrites');
  return ctx.writes;
}

export const pinterestResolvers = {
  Query: {
    homeFeed: async (_: unknown, args: Args, ctx: GatewayContext) => {
      if (!ctx.feed) throw new Error('the Pinterest product is attached but the gateway built no home feed');
      const page = await ctx.feed.page(ctx.loaders, ctx.op, viewerRequired(ctx), checkPageSize(args.first as number | null), str(args.after));
      return { edges: page.edges, pageInfo: pageInfoOf(page) };
    },
  },

  Mutation: {
    createUser: async (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const i = input(args);
      const user = await writes(ctx).createUser(
        { username: String(i.username), email: i.email ?? null, displayName: i.displayName ?? null, about: i.about ?? null },
        ctx.op,
        idempotency(ctx, info),
      );
      return { user, token: await ctx.mintToken(user.id) };
    },
    updateViewer: (_: unknown, args: Args, ctx: GatewayContext) => writes(ctx).updateViewer(ctx.viewerId, input(args), ctx.op),
    deleteViewer: async (_: unknown, _args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => {
      const me = viewerRequired(ctx);
      return deletePayload(me)(await writes(ctx).deleteViewer(me, ctx.op, idempotency(ctx, info)));
    },
    repin: (_: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) =>
      writes(ctx).repin(ctx.viewerId, id(ctx, args.pinId, 'pin'), id(ctx, args.boardId, 'board'), ctx.op, idempotency(ctx, info)),
  },

  User: {
    activity: (o: StoredObject, a: Args, ctx: GatewayContext) => activityConnection(ctx, EVENTS, o.id, a),
    latestActivity: (o: StoredObject, a: Args, ctx: GatewayContext) => activityColumns(ctx, EVENTS, o.id, a),
    notifications: (o: StoredObject, a: Args, ctx: GatewayContext) => {
      // Only the user themself: anyone else (or no one) is refused, and the field is null.
      if (ctx.viewerId === undefined) throw new ShardqlError('UNAUTHENTICATED', 'Notifications need a viewer: send Authorization: Bearer <token>');
      if (ctx.viewerId !== o.id) throw new ShardqlError('FORBIDDEN', "Expected the viewer's own notifications, got another user's");
      return notificationConnection(ctx, EVENTS, o.id, a);
    },
  },

  ActivityEvent: {
    ...activityEventResolvers(EVENTS),
    // What the event is about: a pin (a like, a repin's original, a comment's pin), a board or a user followed.
    pin: (s: ShownEvent) => (s.object.type === 'pin' ? s.object : null),
    repin: (s: ShownEvent) => (activityKindOf(EVENTS, s.event) === 'REPIN' ? s.detail : null),
    comment: (s: ShownEvent) => (activityKindOf(EVENTS, s.event) === 'COMMENT' ? s.detail : null),
    board: (s: ShownEvent) => (s.object.type === 'board' ? s.object : null),
    user: (s: ShownEvent) => (activityKindOf(EVENTS, s.event) === 'FOLLOW_USER' ? s.object : null),
  },
  Notification: {
    ...notificationResolvers(EVENTS),
    pin: (s: ShownGroup) => (s.target.type === 'pin' ? s.target : null),
    board: (s: ShownGroup) => (s.target.type === 'board' ? s.target : null),
  },
};
