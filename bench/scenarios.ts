/**
 * What the benchmark asks: the product's pages as GraphQL operations, with the request mix each
 * connection replays. Every system answers the same documents with the same variables.
 */
import type { DatasetInfo } from '../src/bulk/dataset.ts';

export interface ScenarioRequest {
  readonly query: string;
  readonly variables: Record<string, unknown>;
  /** User ID acting as the viewer (sent as a bearer token). */
  readonly viewer?: string;
}

export interface Scenario {
  readonly key: string;
  readonly title: string;
  readonly mutation: boolean;
  /** Connection i replays streams[i % streams.length] in a loop. */
  readonly streams: ScenarioRequest[][];
  /** Distinct requests: sampled for cost and compared across systems (reads). */
  readonly samples: ScenarioRequest[];
  /** The cold first pass: every distinct request once; a chain's requests in order on one connection. */
  readonly pass: ScenarioRequest[][];
  /** Reads that touch what the mutations touch: recorded into the floor's memory. */
  readonly prerecord?: ScenarioRequest[];
  /** Undo what a run may have left (the last like of a stream): run after each system's run. */
  readonly cleanup?: ScenarioRequest[];
}

export const PROFILE = `query Profile($id: ID!) {
  user(id: $id) {
    id username displayName followerCount followingCount pinCount boardCount
    boards(first: 10) {
      edges { node {
        id name pinCount
        pins(first: 25) {
          edges { node {
            id title imageUrl likeCount
            likers(first: 3) { edges { node { id username } } }
          } }
        }
      } }
    }
  }
}`;

export const BOARD_PAGE = `query BoardPage($id: ID!, $after: String) {
  board(id: $id) {
    id name pinCount followerCount
    owner { id username }
    pins(first: 20, after: $after) {
      edges { cursor node { id title imageUrl likeCount repinCount pinner { id username } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** Walks a board's pages to find the cursor of page N (see `walkSizes`). */
export const BOARD_WALK = `query BoardWalk($id: ID!, $first: Int!, $after: String) {
  board(id: $id) { pins(first: $first, after: $after) { pageInfo { hasNextPage endCursor } } }
}`;

/**
 * The page sizes of a walk over `rows` rows, in pages of the largest size a client may ask (100): a
 * keyset cursor names its row, not its page, so the cursor after row 1,980 is page 100's of 20
 * whichever sizes led there: 20 requests where pages of 20 take 99.
 */
export function walkSizes(rows: number, largest = 100): number[] {
  const sizes: number[] = [];
  for (let left = rows; left > 0; left -= largest) sizes.push(Math.min(largest, left));
  return sizes;
}

export const PIN_DETAIL = `query PinDetail($id: ID!) {
  pin(id: $id) {
    id title description link imageUrl createdAt likeCount repinCount commentCount
    board { id name pinCount owner { id username } }
    pinner { id username displayName followerCount }
    via { id title pinner { id username } }
    likers(first: 10) { edges { node { id username } } pageInfo { hasNextPage endCursor } }
    repins(first: 5) { edges { node { id pinner { id username } board { id name } } } }
  }
}`;

export const HOME_FEED = `query HomeFeed {
  homeFeed(first: 20) {
    edges { cursor node { id title imageUrl createdAt likeCount pinner { id username } board { id name } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const NOTIFICATION_FIELDS = `kind count actorCount latestAt earliestAt
        actors { id username displayName }
        pin { id title imageUrl }
        board { id name }`;

/**
 * The viewer's notifications, first page: what a notifications menu shows. No cursors asked: a
 * first page's cursors carry the moment it was read (its snapshot), so they differ between systems
 * and between reads; the page itself must not.
 */
export const NOTIFICATIONS = `query Notifications {
  viewer {
    id
    notifications(first: 20) {
      edges { node {
        ${NOTIFICATION_FIELDS}
      } }
      pageInfo { hasNextPage }
    }
  }
}`;

/** The next page after a cursor of the first (one snapshot: every system answers the same, cursors included). */
export const NOTIFICATIONS_MORE = `query NotificationsMore($after: String!) {
  viewer {
    id
    notifications(first: 20, after: $after) {
      edges { cursor node {
        ${NOTIFICATION_FIELDS}
      } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** The first page's end cursor (read from ours before the scenarios, for page 2). */
export const NOTIFICATIONS_WALK = `query NotificationsWalk { viewer { notifications(first: 20) { edges { node { count } } pageInfo { hasNextPage endCursor } } } }`;

export const LIKE = `mutation Like($pin: ID!) { likePin(pinId: $pin) { id likeCount viewerHasLiked } }`;
export const UNLIKE = `mutation Unlike($pin: ID!) { unlikePin(pinId: $pin) { id likeCount viewerHasLiked } }`;
export const LIKE_STATE = `query LikeState($pin: ID!) { viewer { id } pin(id: $pin) { id likeCount viewerHasLiked } }`;

/** The requests rotated per connection, so 8 connections do not ask for the same thing in step. */
function rotations(requests: ScenarioRequest[], connections: number): ScenarioRequest[][] {
  if (requests.length <= 1) return [requests];
  const out: ScenarioRequest[][] = [];
  for (let c = 0; c < Math.min(connections, requests.length); c++) {
    const shift = Math.floor((c * requests.length) / Math.min(connections, requests.length));
    out.push([...requests.slice(shift), ...requests.slice(0, shift)]);
  }
  return out;
}

function read(key: string, title: string, requests: ScenarioRequest[], connections: number): Scenario {
  return { key, title, mutation: false, streams: rotations(requests, connections), samples: requests, pass: requests.map((r) => [r]) };
}

export interface ScenarioInputs {
  readonly info: DatasetInfo;
  /** Cursor after page 99 of each big board (so `after` gives page 100). */
  readonly page100: ReadonlyMap<string, string>;
  /** End cursor of each notified user's first page of notifications (so `after` gives page 2). */
  readonly notificationsPage2: ReadonlyMap<string, string>;
  readonly connections: number;
}

export function buildScenarios({ info, page100, notificationsPage2, connections }: ScenarioInputs): Scenario[] {
  const s = info.specials;
  const boards = s.bigBoards;

  // Like/unlike: connection c acts as its own mutator user and likes then unlikes pins in turn.
  const pairsPerStream = 8;
  const streams: ScenarioRequest[][] = [];
  const pairs: { viewer: string; pin: string }[] = [];
  const nStreams = Math.min(connections, s.mutationUsers.length);
  for (let c = 0; c < nStreams; c++) {
    const viewer = s.mutationUsers[c]!;
    const stream: ScenarioRequest[] = [];
    for (let j = 0; j < pairsPerStream; j++) {
      const pin = s.mutationPins[(c * pairsPerStream + j) % s.mutationPins.length]!;
      pairs.push({ viewer, pin });
      stream.push({ query: LIKE, variables: { pin }, viewer }, { query: UNLIKE, variables: { pin }, viewer });
    }
    streams.push(stream);
  }

  return [
    read('profile', 'profile: user → 10 boards → 25 pins → like counts, 3 likers', s.profileUsers.map((id) => ({ query: PROFILE, variables: { id } })), connections),
    read('board-page-1', 'board page 1 (20 pins)', boards.map((id) => ({ query: BOARD_PAGE, variables: { id, after: null } })), connections),
    read('board-page-100', 'board page 100 (keyset cursor)', boards.map((id) => ({ query: BOARD_PAGE, variables: { id, after: page100.get(id) ?? null } })), connections),
    read('pin-detail', 'pin detail (board, pinner, via, 10 likers, 5 repins)', s.detailPins.map((id) => ({ query: PIN_DETAIL, variables: { id } })), connections),
    read('feed-10', 'home feed, following 10 pinners', s.feed10Users.map((viewer) => ({ query: HOME_FEED, variables: {}, viewer })), connections),
    read('feed-1000', 'home feed, following 1,000 pinners', s.feed1kUsers.map((viewer) => ({ query: HOME_FEED, variables: {}, viewer })), connections),
    read('notifications', 'notifications, first page (20 groups; users with ~5,400 events)', s.notifiedUsers.map((viewer) => ({ query: NOTIFICATIONS, variables: {}, viewer })), connections),
    read(
      'notifications-page-2',
      'notifications, page 2 (group cursor)',
      s.notifiedUsers.map((viewer) => ({ query: NOTIFICATIONS_MORE, variables: { after: notificationsPage2.get(viewer) ?? null }, viewer })),
      connections,
    ),
    {
      key: 'like-unlike',
      title: 'like/unlike mutation mix (50/50)',
      mutation: true,
      streams,
      samples: streams[0]!.slice(0, 10),
      pass: streams,
      prerecord: pairs.map(({ viewer, pin }) => ({ query: LIKE_STATE, variables: { pin }, viewer })),
      cleanup: pairs.map(({ viewer, pin }) => ({ query: UNLIKE, variables: { pin }, viewer })),
    },
  ];
}
