/**
 * The Pinterest home feed (core/feedSpec.ts): pins of the users and boards the viewer follows. A
 * pin reaches the followers of its pinner and of its board; the model gives the rest (each
 * source's pins by its reference's `listedIn`, its followers as the follow list's inverse).
 */
import type { FeedSpec } from '../../core/feedSpec.ts';

export const pinterestFeed: FeedSpec = {
  field: 'homeFeed',
  item: 'pin',
  sources: [
    { ref: 'pinner', follows: 'user_follows_users' },
    { ref: 'board', follows: 'user_follows_boards' },
  ],
};
