/**
 * Pinterest's activity and notifications (core/events.ts `EventSpec`): five kinds of happening, each
 * stored in the actor's activity and, but for a comment's author, in the owner's notifications.
 * Every edge names a relation of schema/, checked when the product attaches.
 */
import type { EventSpec } from '../../core/events.ts';

export const PINTEREST_EVENTS = {
  activityKinds: ['LIKE', 'REPIN', 'COMMENT', 'FOLLOW_USER', 'FOLLOW_BOARD'],
  storedKinds: {
    // About the row user's things. The edge lives on the thing's shard, which is its owner's.
    pin_liked: { kind: 'LIKE', side: 'notifications', edge: { table: 'pin_liked_by_users', from: 'object', to: 'actor' } },
    pin_repinned: { kind: 'REPIN', side: 'notifications', edge: { table: 'pin_repinned_as_pins', from: 'object', to: 'detail' } },
    pin_commented: { kind: 'COMMENT', side: 'notifications', edge: { table: 'pin_has_comments', from: 'object', to: 'detail' } },
    user_followed: { kind: 'FOLLOW_USER', side: 'notifications', edge: { table: 'user_followed_by_users', from: 'user', to: 'actor' } },
    board_followed: { kind: 'FOLLOW_BOARD', side: 'notifications', edge: { table: 'board_followed_by_users', from: 'object', to: 'actor' } },
    // What the row user did. Their own edges live on their shard; a comment lives on its pin's.
    liked_pin: { kind: 'LIKE', side: 'activity', edge: { table: 'user_likes_pins', from: 'user', to: 'object' } },
    repinned_pin: { kind: 'REPIN', side: 'activity', edge: { table: 'user_has_pins', from: 'user', to: 'detail' } },
    commented_on_pin: { kind: 'COMMENT', side: 'activity', edge: null },
    followed_user: { kind: 'FOLLOW_USER', side: 'activity', edge: { table: 'user_follows_users', from: 'user', to: 'object' } },
    followed_board: { kind: 'FOLLOW_BOARD', side: 'activity', edge: { table: 'user_follows_boards', from: 'user', to: 'object' } },
  },
  fields: { latest: ['User.latestActivity'], grouped: ['User.notifications'], groupActors: ['Notification.actors'] },
} as const satisfies EventSpec;

/** Pinterest's kinds of happening (the API's `ActivityKind`). */
export type PinterestActivityKind = (typeof PINTEREST_EVENTS.activityKinds)[number];
