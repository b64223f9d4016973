/**
 * The Pinterest product (schema/): its home feed, activity and notifications, sign-up with an
 * optional email, the viewer's own account, repins, and its hooks on the declared mutations.
 */
import type { Product } from '../product.ts';
import { pinterestImport } from './importSource.ts';
import { pinterestFeed } from './feed.ts';
import { PINTEREST_EVENTS } from './events.ts';
import { pinterestResolvers } from './resolvers.ts';
import { ProductWrites } from './writes.ts';

export const pinterest: Product = {
  name: 'pinterest',
  needs: {
    // Named by its hooks and writes (hooks.ts, writes.ts); its feed's names are checked with the feed.
    types: ['user', 'board', 'pin', 'comment'],
    relations: ['user_likes_pins', 'user_follows_users', 'user_follows_boards', 'user_has_boards', 'board_has_pins', 'pin_repinned_as_pins'],
  },
  resolvers: pinterestResolvers,
  events: PINTEREST_EVENTS,
  writes: (deps) => new ProductWrites(deps),
  importSource: pinterestImport,
  feed: pinterestFeed,
};
