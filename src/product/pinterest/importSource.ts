/**
 * What `shardql import` needs of Pinterest's legacy database beyond the model (core/importSpec.ts
 * derives the rest): the benchmark's flat database's names for the viewer's relations and the
 * config's names for them, the sign-up email (a credential the mod shard holds, no stored field),
 * the repins pass, the rule that a pin lives with its board's owner, and the account delete a
 * deletes pass uses. docs/operations.md "Importing an unsharded database" documents the result.
 */
import type { ImportNames } from '../../core/importSpec.ts';

export const pinterestImport: ImportNames = {
  relations: {
    user_likes_pins: { alias: 'likes', table: 'likes', from: 'user_id', to: 'pin_id' },
    user_follows_users: { alias: 'follows', table: 'follows', from: 'follower_id', to: 'followee_id' },
    user_follows_boards: { alias: 'boardFollows', table: 'board_follows', from: 'user_id', to: 'board_id' },
  },
  credentials: { user: [{ role: 'email', column: 'email', namespace: 'email' }] },
  selfRefs: {
    'pin.via': {
      pass: 'repins',
      notImported: (pin, original) => `repin ${pin}: its original ${original} was not imported, so it is a plain pin (via: null)`,
      deleted: (pin, original) => `repin ${pin}: its original ${original} is deleted in the shards, so it is not among the original's repins (via: null)`,
    },
  },
  sameOwner: { pin: (pin, pinner, board) => `pin ${pin}: pinned by ${pinner} on board ${board} of another user (a pin lives with its board's owner)` },
  noSelfEdges: { user_follows_users: (user) => `follows ${user} → itself: a user cannot follow themselves` },
  deleteKinds: { user: 'deleteViewer' },
};
