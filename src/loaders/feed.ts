import { decodeCursor, encodeCursor } from '../core/cursor.ts';
import type { Loaders } from './loaders.ts';
import type { StoredObject } from '../storage/objectStore.ts';

/** How many followed pinners and boards the feed merges: the newest follows of each kind. */
export const FEED_MAX_SOURCES = 1000;

export interface FeedPage {
  readonly edges: { cursor: string; node: StoredObject }[];
  readonly hasNextPage: boolean;
  readonly endCursor: string | null;
}

/**
 * The home feed: pins of followed pinners and boards, newest first, merged at read time.
 * Cost is three levels whatever the follow count — the viewer's follow lists (one host), the
 * first `first+1` pins of every source after the cursor (one round trip per host), the pin
 * objects (one per host) — and never a scan: each source list is read by keyset from the
 * cursor's (time, pin) position. A pin reachable through two sources appears once.
 */
export async function homeFeed(loaders: Loaders, viewer: bigint, first: number, after: string | null): Promise<FeedPage> {
  const list = `feed:${viewer}`;
  // An empty cursor is a bad cursor, as in every other list, not "from the start".
  const start = after !== null ? decodeCursor(after, list) : undefined;
  const [users, boards] = await Promise.all([
    loaders.pages.load({ table: 'user_follows_users', from: viewer, first: FEED_MAX_SOURCES }),
    loaders.pages.load({ table: 'user_follows_boards', from: viewer, first: FEED_MAX_SOURCES }),
  ]);
  const startAfter = start ? { startAfter: { key: start.key, id: start.id } } : {};
  const sourcePages = await Promise.all([
    ...users.edges.map((e) => loaders.pages.load({ table: 'user_has_pins', from: e.to, first: first + 1, ...startAfter })),
    ...boards.edges.map((e) => loaders.pages.load({ table: 'board_has_pins', from: e.to, first: first + 1, ...startAfter })),
  ]);
  const merged = new Map<bigint, number>();
  for (const page of sourcePages) for (const e of page.edges) merged.set(e.to, e.sequence);
  const ordered = [...merged.entries()]
    .sort(([ia, sa], [ib, sb]) => sb - sa || (ib > ia ? 1 : ib < ia ? -1 : 0))
    .slice(0, first + 1);
  const window = ordered.slice(0, first);
  const objects = await loaders.objects.loadMany(window.map(([id]) => id));
  const edges: FeedPage['edges'] = [];
  window.forEach(([id, sequence], i) => {
    const node = objects[i];
    if (node && !(node instanceof Error)) edges.push({ cursor: encodeCursor({ list, key: BigInt(sequence), id }), node });
  });
  const last = window.at(-1);
  return {
    edges,
    hasNextPage: ordered.length > first,
    endCursor: last ? encodeCursor({ list, key: BigInt(last[1]), id: last[0] }) : null,
  };
}
