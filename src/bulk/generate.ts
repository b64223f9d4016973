/**
 * A synthetic Pinterest-like graph, generated deterministically from a seed: users with several
 * boards, boards with many pins, repins, and power-law likes and follows (a few users and pins
 * collect most of them). Everything is kept in typed arrays indexed by a global object number, so
 * a million pins and millions of edges fit in a few hundred MB and nothing needs a round trip:
 * local IDs are assigned here, per shard, in generation order.
 *
 * Besides the natural population the generator adds a few users the benchmark needs, each made
 * deterministically: showcase profiles (12 boards × 40 pins), owners of big boards (thousands of
 * pins, for deep pagination), home-feed readers following exactly 10 and 1,000 pinners, and users
 * who only like and unlike (the mutation mix), with no likes of their own to disturb, and users
 * with thousands of notifications (likes, repins, follows of them and of their boards by natural
 * users, most in the data set's last 30 days: the notifications scenario; src/bulk/events.ts
 * derives their event sequences from these edges).
 */
import { encodeId } from '../core/ids.ts';
import { typeNumberOf } from '../core/objectTypes.ts';
import { heavyTail, permutation, randInt, rngFor, ZipfSampler, type Rng } from './random.ts';

/** Bumped whenever the same parameters would produce different rows (graph or table layout): old markers then mismatch. */
export const GENERATOR_VERSION = 4;

export interface DatasetParams {
  readonly version: number;
  readonly seed: number;
  /** Natural users (the specials below come on top). */
  readonly users: number;
  /** Every username starts with `${prefix}_`, so data sets of different slots never share a lookup key. */
  readonly prefix: string;
  /** Means of the heavy-tailed per-user activity. */
  readonly pinsPerUser: number;
  readonly likesPerUser: number;
  readonly followsPerUser: number;
  readonly boardFollowsPerUser: number;
  /** Share of natural pins that are repins of an earlier pin. */
  readonly repinShare: number;
  readonly profileUsers: number;
  readonly bigBoards: number;
  readonly bigBoardPins: number;
  /** Readers following 10 pinners, and as many following 1,000. */
  readonly feedUsers: number;
  readonly mutationUsers: number;
  /** Users whose things natural users like, repin and follow by the thousand (the notifications scenario). */
  readonly notifiedUsers: number;
  /** Per notified user: natural users who like two of their pins, who follow them, who follow one of their boards; natural pins repinning theirs. */
  readonly notifiedLikers: number;
  readonly notifiedFollowers: number;
  readonly notifiedBoardFollowers: number;
  readonly notifiedRepins: number;
  /** Creation times fall in [start, end) (epoch ms; fixed, so the data does not depend on today). */
  readonly start: number;
  readonly end: number;
}

export function defaultParams(users: number, prefix: string, seed = 20240607): DatasetParams {
  return {
    version: GENERATOR_VERSION,
    seed,
    users,
    prefix,
    pinsPerUser: 10,
    likesPerUser: 20,
    followsPerUser: 10,
    boardFollowsPerUser: 3,
    repinShare: 0.25,
    profileUsers: 16,
    bigBoards: 16,
    bigBoardPins: 2100,
    feedUsers: 16,
    mutationUsers: 16,
    notifiedUsers: 8,
    notifiedLikers: 1500,
    notifiedFollowers: 1500,
    notifiedBoardFollowers: 600,
    notifiedRepins: 300,
    start: Date.UTC(2023, 0, 1),
    end: Date.UTC(2025, 0, 1),
  };
}

/** Compressed sparse rows: the targets of source i are to[off[i]..off[i+1]), with their times. */
export interface Csr {
  readonly off: Int32Array;
  readonly to: Int32Array;
  readonly ts: Float64Array;
}

export const UserKind = { Natural: 0, Profile: 1, BigBoard: 2, Feed10: 3, Feed1k: 4, Mutation: 5, Notified: 6 } as const;
export type UserKind = (typeof UserKind)[keyof typeof UserKind];

export interface Specials {
  readonly profileUsers: number[];
  readonly bigBoards: number[];
  readonly feed10Users: number[];
  readonly feed1kUsers: number[];
  readonly mutationUsers: number[];
  /** Users with thousands of notifications. */
  readonly notifiedUsers: number[];
  /** Pins for the pin-detail scenario: the most liked, then random ones. */
  readonly detailPins: number[];
  /** Pins the mutation users like and unlike: none of them is on a page the read scenarios show. */
  readonly mutationPins: number[];
}

export interface Dataset {
  readonly params: DatasetParams;
  /** Shards users are placed on (the open shards of the slot's topology). */
  readonly shards: readonly number[];

  readonly userCount: number;
  readonly userShard: Int32Array;
  readonly userLocal: Int32Array;
  readonly userCreated: Float64Array;
  readonly userKind: Uint8Array;
  /** Boards of user u: boardStart[u] .. boardStart[u+1]-1 (contiguous: made in user order). */
  readonly userBoardStart: Int32Array;
  /** Pins of user u: pinStart[u] .. pinStart[u+1]-1. */
  readonly userPinStart: Int32Array;

  readonly boardCount: number;
  readonly boardUser: Int32Array;
  readonly boardLocal: Int32Array;
  readonly boardCreated: Float64Array;

  readonly pinCount: number;
  readonly pinUser: Int32Array;
  readonly pinBoard: Int32Array;
  readonly pinLocal: Int32Array;
  readonly pinCreated: Float64Array;
  /** The pin this one repins, or -1. */
  readonly pinVia: Int32Array;
  /** The first pin of the repin chain: whose title, link and image every repin copies. */
  readonly pinRoot: Int32Array;

  readonly likes: Csr; // user → pin
  readonly follows: Csr; // user → user
  readonly boardFollows: Csr; // user → board

  readonly specials: Specials;
}

// ---------------------------------------------------------------------------------------------
// IDs and text

export function userId(ds: Dataset, u: number): bigint {
  return encodeId({ shard: ds.userShard[u]!, type: typeNumberOf('user'), local: BigInt(ds.userLocal[u]!) });
}
export function boardId(ds: Dataset, b: number): bigint {
  return encodeId({ shard: ds.userShard[ds.boardUser[b]!]!, type: typeNumberOf('board'), local: BigInt(ds.boardLocal[b]!) });
}
export function pinId(ds: Dataset, p: number): bigint {
  return encodeId({ shard: ds.userShard[ds.pinUser[p]!]!, type: typeNumberOf('pin'), local: BigInt(ds.pinLocal[p]!) });
}
export function boardShard(ds: Dataset, b: number): number {
  return ds.userShard[ds.boardUser[b]!]!;
}
export function pinShard(ds: Dataset, p: number): number {
  return ds.userShard[ds.pinUser[p]!]!;
}

const WORDS = (
  'maple cedar river stone amber coral ember frost meadow harbor willow canyon velvet copper ' +
  'saffron indigo lunar solar prairie orchard lantern compass atlas garden cottage summit ' +
  'breeze pebble thistle juniper marigold sparrow falcon heron otter badger fox lark wren ' +
  'clover fern moss sage basil mint ginger honey cocoa olive plum peach cherry lemon'
).split(' ');
const NOUNS = (
  'kitchen ideas recipes travel outfits decor gardens crafts quotes tattoos weddings hairstyles ' +
  'cakes cocktails cabins bathrooms patios nails sketches posters lamps chairs rugs shelves ' +
  'murals ceramics quilts sneakers jackets bikes tents boats maps clocks plants'
).split(' ');
const SURNAMES = 'Smith Jones Garcia Miller Davis Lopez Wilson Moore Taylor Lee Walker Hall Young King Wright Scott Green Baker Adams Nelson'.split(' ');

const cap = (w: string): string => w[0]!.toUpperCase() + w.slice(1);
const pick = <T>(rng: Rng, list: readonly T[]): T => list[randInt(rng, list.length)]!;

/** Text of an object, from its own stream: computed when its row is written, never stored. */
export function userText(ds: Dataset, u: number): { username: string; displayName: string; about?: string } {
  const kind = ds.userKind[u]! as UserKind;
  const rng = rngFor(ds.params.seed, 101, u);
  const first = cap(pick(rng, WORDS));
  const displayName = `${first} ${pick(rng, SURNAMES)}`;
  const p = ds.params.prefix;
  const natural = ds.params.users;
  const username =
    kind === UserKind.Natural ? `${p}_${rng() < 0.3 ? first : first.toLowerCase()}${u}`
    : kind === UserKind.Profile ? `${p}_profile_${u - natural}`
    : kind === UserKind.BigBoard ? `${p}_bigboard_${u - natural}`
    : kind === UserKind.Feed10 ? `${p}_feed10_${u - natural}`
    : kind === UserKind.Feed1k ? `${p}_feed1k_${u - natural}`
    : kind === UserKind.Mutation ? `${p}_mutator_${u - natural}`
    : `${p}_notified_${u - natural}`;
  const about = rng() < 0.5 ? `Pinning ${pick(rng, NOUNS)} and ${pick(rng, NOUNS)} since ${new Date(ds.userCreated[u]!).getUTCFullYear()}.` : undefined;
  return about === undefined ? { username, displayName } : { username, displayName, about };
}

export function boardText(ds: Dataset, b: number): { name: string; description?: string } {
  const rng = rngFor(ds.params.seed, 102, b);
  const name = `${cap(pick(rng, WORDS))} ${pick(rng, NOUNS)}`;
  return rng() < 0.6 ? { name, description: `A board of ${pick(rng, NOUNS)} with a ${pick(rng, WORDS)} mood.` } : { name };
}

/** Title, description, link, image of an original pin (repins copy their root's). */
export function pinText(ds: Dataset, p: number): { title: string; description?: string; link: string; imageUrl: string } {
  const root = ds.pinRoot[p]!;
  const rng = rngFor(ds.params.seed, 103, root);
  const title = `${cap(pick(rng, WORDS))} ${pick(rng, WORDS)} ${pick(rng, NOUNS)}`;
  const link = `https://example.com/${pick(rng, NOUNS)}/${root}`;
  const imageUrl = `https://i.example.com/${(rngFor(ds.params.seed, 104, root)() * 2 ** 32 >>> 0).toString(16).padStart(8, '0')}/${root}.jpg`;
  return rng() < 0.7 ? { title, description: `${cap(pick(rng, WORDS))} ${pick(rng, NOUNS)}, ${pick(rng, WORDS)} and ${pick(rng, WORDS)}.`, link, imageUrl } : { title, link, imageUrl };
}

// ---------------------------------------------------------------------------------------------
// The graph

/** A time in [from, end): later in the span with the remaining room. */
function after(rng: Rng, from: number, end: number, share = 1): number {
  return Math.floor(from + rng() * Math.max(1, end - from) * share);
}

class CsrBuilder {
  off: Int32Array;
  to: Int32Array;
  ts: Float64Array;
  n = 0;
  #src = 0;
  constructor(sources: number, capacity: number) {
    this.off = new Int32Array(sources + 1);
    this.to = new Int32Array(capacity);
    this.ts = new Float64Array(capacity);
  }
  /** Sources must be visited in increasing order. */
  startSource(src: number): void {
    while (this.#src < src) this.off[++this.#src] = this.n;
  }
  push(to: number, ts: number): void {
    if (this.n === this.to.length) {
      const grow = Math.max(1024, this.to.length * 2);
      const t = new Int32Array(grow);
      t.set(this.to);
      this.to = t;
      const s = new Float64Array(grow);
      s.set(this.ts);
      this.ts = s;
    }
    this.to[this.n] = to;
    this.ts[this.n++] = ts;
  }
  finish(): Csr {
    const sources = this.off.length - 1;
    while (this.#src < sources) this.off[++this.#src] = this.n;
    return { off: this.off, to: this.to.subarray(0, this.n), ts: this.ts.subarray(0, this.n) };
  }
}

/** The reverse of a CSR (target → sources), sources in increasing order within each target. */
export function reverseCsr(csr: Csr, targets: number): Csr {
  const off = new Int32Array(targets + 1);
  for (let i = 0; i < csr.to.length; i++) off[csr.to[i]! + 1]!++;
  for (let t = 0; t < targets; t++) off[t + 1]! += off[t]!;
  const fill = off.slice(0, targets);
  const to = new Int32Array(csr.to.length);
  const ts = new Float64Array(csr.to.length);
  const sources = csr.off.length - 1;
  for (let s = 0; s < sources; s++) {
    for (let i = csr.off[s]!; i < csr.off[s + 1]!; i++) {
      const t = csr.to[i]!;
      const at = fill[t]!++;
      to[at] = s;
      ts[at] = csr.ts[i]!;
    }
  }
  return { off, to, ts };
}

/** Groups items 0..n-1 by a key in 0..keys-1, keeping their order: a CSR without times. */
export function groupBy(n: number, keys: number, keyOf: (i: number) => number): { off: Int32Array; items: Int32Array } {
  const off = new Int32Array(keys + 1);
  for (let i = 0; i < n; i++) {
    const k = keyOf(i);
    if (k >= 0) off[k + 1]!++;
  }
  for (let k = 0; k < keys; k++) off[k + 1]! += off[k]!;
  const fill = off.slice(0, keys);
  const items = new Int32Array(off[keys]!);
  for (let i = 0; i < n; i++) {
    const k = keyOf(i);
    if (k >= 0) items[fill[k]!++] = i;
  }
  return { off, items };
}

export function generate(params: DatasetParams, shards: readonly number[]): Dataset {
  const { seed, start, end } = params;
  const span = end - start;
  const natural = params.users;
  const specialCounts: [UserKind, number][] = [
    [UserKind.Profile, params.profileUsers],
    [UserKind.BigBoard, params.bigBoards],
    [UserKind.Feed10, params.feedUsers],
    [UserKind.Feed1k, params.feedUsers],
    [UserKind.Mutation, params.mutationUsers],
    [UserKind.Notified, params.notifiedUsers],
  ];
  const userCount = natural + specialCounts.reduce((n, [, c]) => n + c, 0);
  const userKind = new Uint8Array(userCount);
  {
    let u = natural;
    for (const [kind, count] of specialCounts) for (let i = 0; i < count; i++) userKind[u++] = kind;
  }

  // Users: a random open shard each; local IDs per shard in generation order.
  const maxShard = Math.max(...shards) + 1;
  const userCounter = new Int32Array(maxShard);
  const boardCounter = new Int32Array(maxShard);
  const pinCounter = new Int32Array(maxShard);
  const userShard = new Int32Array(userCount);
  const userLocal = new Int32Array(userCount);
  const userCreated = new Float64Array(userCount);
  {
    const rng = rngFor(seed, 1);
    for (let u = 0; u < userCount; u++) {
      const s = shards[randInt(rng, shards.length)]!;
      userShard[u] = s;
      userLocal[u] = ++userCounter[s]!;
      userCreated[u] = userKind[u] === UserKind.Natural ? after(rng, start, end, 0.7) : after(rng, start, end, 0.1);
    }
  }

  // How many boards and pins each user has.
  const pinsOf = new Int32Array(userCount);
  const boardsOf = new Int32Array(userCount);
  {
    const rng = rngFor(seed, 2);
    for (let u = 0; u < userCount; u++) {
      switch (userKind[u] as UserKind) {
        case UserKind.Natural: {
          const pins = heavyTail(rng, params.pinsPerUser, 1.6, 3000);
          pinsOf[u] = pins;
          boardsOf[u] = Math.min(60, 1 + Math.floor(pins / 30) + heavyTail(rng, 1.2, 2, 20));
          break;
        }
        case UserKind.Profile:
          boardsOf[u] = 12;
          pinsOf[u] = 12 * 40;
          break;
        case UserKind.BigBoard:
          boardsOf[u] = 1;
          pinsOf[u] = params.bigBoardPins;
          break;
        case UserKind.Notified:
          boardsOf[u] = 2;
          pinsOf[u] = 20;
          break;
        default:
          boardsOf[u] = 1;
          pinsOf[u] = 0;
      }
    }
  }

  // Boards, user by user (so a user's boards are contiguous).
  const userBoardStart = new Int32Array(userCount + 1);
  for (let u = 0; u < userCount; u++) userBoardStart[u + 1] = userBoardStart[u]! + boardsOf[u]!;
  const boardCount = userBoardStart[userCount]!;
  const boardUser = new Int32Array(boardCount);
  const boardLocal = new Int32Array(boardCount);
  const boardCreated = new Float64Array(boardCount);
  {
    const rng = rngFor(seed, 3);
    for (let u = 0; u < userCount; u++) {
      const s = userShard[u]!;
      for (let b = userBoardStart[u]!; b < userBoardStart[u + 1]!; b++) {
        boardUser[b] = u;
        boardLocal[b] = ++boardCounter[s]!;
        boardCreated[b] = after(rng, userCreated[u]!, end, 0.3);
      }
    }
  }

  // Pins, user by user, each on one of the user's boards, after the board was made.
  const userPinStart = new Int32Array(userCount + 1);
  for (let u = 0; u < userCount; u++) userPinStart[u + 1] = userPinStart[u]! + pinsOf[u]!;
  const pinCount = userPinStart[userCount]!;
  const pinUser = new Int32Array(pinCount);
  const pinBoard = new Int32Array(pinCount);
  const pinLocal = new Int32Array(pinCount);
  const pinCreated = new Float64Array(pinCount);
  {
    const rng = rngFor(seed, 4);
    for (let u = 0; u < userCount; u++) {
      const s = userShard[u]!;
      const b0 = userBoardStart[u]!;
      const nb = boardsOf[u]!;
      const kind = userKind[u] as UserKind;
      for (let i = 0, p = userPinStart[u]!; p < userPinStart[u + 1]!; i++, p++) {
        // Natural users fill their first boards most; showcase users exactly 40 per board.
        const b = kind === UserKind.Profile ? b0 + Math.floor(i / 40) : b0 + Math.min(nb - 1, Math.floor(nb * Math.pow(rng(), 2)));
        pinUser[p] = u;
        pinBoard[p] = b;
        pinLocal[p] = ++pinCounter[s]!;
        // A notified user's pins are old: what happens to them comes later.
        pinCreated[p] = after(rng, boardCreated[b]!, end, kind === UserKind.Notified ? 0.2 : 1);
      }
    }
  }

  // Popularity: a random ranking of pins (showcase pins among the top tenth) and of users
  // (showcase and big-board owners among the top hundredth).
  const pinOrder = permutation(rngFor(seed, 5), pinCount);
  {
    const rng = rngFor(seed, 6);
    const top = Math.max(1, Math.floor(pinCount / 10));
    const rankOf = new Int32Array(pinCount);
    for (let r = 0; r < pinCount; r++) rankOf[pinOrder[r]!] = r;
    for (let u = natural; u < userCount; u++) {
      if (userKind[u] !== UserKind.Profile) continue;
      for (let p = userPinStart[u]!; p < userPinStart[u + 1]!; p++) {
        const r = rankOf[p]!;
        if (r < top) continue;
        const r2 = randInt(rng, top);
        const q = pinOrder[r2]!;
        pinOrder[r2] = p;
        pinOrder[r] = q;
        rankOf[p] = r2;
        rankOf[q] = r;
      }
    }
  }
  const pinZipf = new ZipfSampler(pinOrder, 0.7);
  const popularUsers = (() => {
    // Only users who pin are worth following: natural, showcase and big-board users.
    const candidates: number[] = [];
    for (let u = 0; u < userCount; u++) if (userKind[u]! <= UserKind.BigBoard) candidates.push(u);
    const perm = permutation(rngFor(seed, 7), candidates.length);
    const order = new Int32Array(candidates.length);
    for (let r = 0; r < candidates.length; r++) order[r] = candidates[perm[r]!]!;
    const rng = rngFor(seed, 8);
    const top = Math.max(1, Math.floor(order.length / 100));
    for (let r = 0; r < order.length; r++) {
      const u = order[r]!;
      if (r >= top && userKind[u] !== UserKind.Natural) {
        const r2 = randInt(rng, top);
        order[r] = order[r2]!;
        order[r2] = u;
      }
    }
    return new ZipfSampler(order, 0.8);
  })();
  const boardZipf = new ZipfSampler(permutation(rngFor(seed, 9), boardCount), 0.8);

  // Repins: a share of natural and showcase pins repin an earlier, popular pin of someone else.
  const pinVia = new Int32Array(pinCount).fill(-1);
  {
    const rng = rngFor(seed, 10);
    for (let p = 0; p < pinCount; p++) {
      const kind = userKind[pinUser[p]!] as UserKind;
      if ((kind !== UserKind.Natural && kind !== UserKind.Profile) || rng() >= params.repinShare) continue;
      for (let tries = 0; tries < 8; tries++) {
        const o = pinZipf.sample(rng);
        if (pinUser[o] !== pinUser[p] && pinCreated[o]! < pinCreated[p]!) {
          pinVia[p] = o;
          break;
        }
      }
    }
  }
  // Notified users: natural pins repin theirs too, spread over time (a repin is younger than its original).
  const notified: number[] = [];
  for (let u = natural; u < userCount; u++) if (userKind[u] === UserKind.Notified) notified.push(u);
  {
    const rng = rngFor(seed, 18);
    const naturalPins: number[] = [];
    for (let p = 0; p < pinCount; p++) if (userKind[pinUser[p]!] === UserKind.Natural && pinVia[p] === -1) naturalPins.push(p);
    for (const n of notified) {
      const p0 = userPinStart[n]!;
      const np = userPinStart[n + 1]! - p0;
      let made = 0;
      for (let tries = 0; made < params.notifiedRepins && naturalPins.length > 0 && tries < params.notifiedRepins * 8; tries++) {
        const c = naturalPins[randInt(rng, naturalPins.length)]!;
        const o = p0 + randInt(rng, np);
        if (pinVia[c] !== -1 || pinCreated[o]! >= pinCreated[c]!) continue;
        pinVia[c] = o;
        made++;
      }
    }
  }
  const pinRoot = new Int32Array(pinCount);
  for (let p = 0; p < pinCount; p++) {
    let r = p;
    while (pinVia[r]! >= 0) r = pinVia[r]!; // strictly older each step: no cycle
    pinRoot[p] = r;
  }

  // Notified users: natural users like two of their pins each, follow them, follow one of their
  // boards — at times in the span's last 30 days, so that a day's window groups several. Chosen
  // from streams of their own, pushed in source order below: natural user → [target, time, …].
  const extraLikes = new Map<number, number[]>();
  const extraFollows = new Map<number, number[]>();
  const extraBoardFollows = new Map<number, number[]>();
  {
    const recent = Math.max(start, end - 30 * 86_400_000);
    const add = (m: Map<number, number[]>, u: number, to: number, ts: number): void => {
      const list = m.get(u);
      if (list) list.push(to, ts);
      else m.set(u, [to, ts]);
    };
    // `want` distinct natural users, uniformly (a partial Fisher–Yates).
    const naturals = (rng: Rng, want: number): Int32Array => {
      const pool = new Int32Array(natural);
      for (let i = 0; i < natural; i++) pool[i] = i;
      const k = Math.min(natural, want);
      for (let i = 0; i < k; i++) {
        const j = i + randInt(rng, natural - i);
        const v = pool[j]!;
        pool[j] = pool[i]!;
        pool[i] = v;
      }
      return pool.subarray(0, k);
    };
    notified.forEach((n, i) => {
      const p0 = userPinStart[n]!;
      const np = userPinStart[n + 1]! - p0;
      const b0 = userBoardStart[n]!;
      const nb = userBoardStart[n + 1]! - b0;
      let rng = rngFor(seed, 15, i);
      for (const v of naturals(rng, params.notifiedLikers)) {
        const a = p0 + randInt(rng, np);
        let b = p0 + randInt(rng, np - 1);
        if (b >= a) b++;
        for (const p of [a, b]) add(extraLikes, v, p, after(rng, Math.max(recent, userCreated[v]!, pinCreated[p]!), end));
      }
      rng = rngFor(seed, 16, i);
      for (const v of naturals(rng, params.notifiedFollowers)) add(extraFollows, v, n, after(rng, Math.max(recent, userCreated[v]!, userCreated[n]!), end));
      rng = rngFor(seed, 17, i);
      for (const v of naturals(rng, params.notifiedBoardFollowers)) {
        const b = b0 + randInt(rng, nb);
        add(extraBoardFollows, v, b, after(rng, Math.max(recent, userCreated[v]!, boardCreated[b]!), end));
      }
    });
  }
  /** Pushes a source's planned edges first (so sampling skips them); returns how many. */
  const pushExtra = (b: CsrBuilder, extra: number[] | undefined, seen: Set<number>): number => {
    if (!extra) return 0;
    for (let i = 0; i < extra.length; i += 2) {
      seen.add(extra[i]!);
      b.push(extra[i]!, extra[i + 1]!);
    }
    return extra.length / 2;
  };

  // Likes: heavy-tailed per user, targets by pin popularity, after both exist; never one's own pin.
  const likes = new CsrBuilder(userCount, Math.ceil(userCount * params.likesPerUser * 1.1));
  {
    const rng = rngFor(seed, 11);
    const seen = new Set<number>();
    for (let u = 0; u < userCount; u++) {
      likes.startSource(u);
      if ((userKind[u] as UserKind) > UserKind.BigBoard) continue;
      const want = Math.min(Math.floor(pinCount / 4), heavyTail(rng, params.likesPerUser, 1.5, 2000));
      seen.clear();
      const planned = pushExtra(likes, extraLikes.get(u), seen);
      for (let tries = 0; seen.size < want + planned && tries < want * 4 + 10; tries++) {
        const p = pinZipf.sample(rng);
        if (pinUser[p] === u || seen.has(p)) continue;
        seen.add(p);
        likes.push(p, after(rng, Math.max(userCreated[u]!, pinCreated[p]!), end));
      }
    }
  }

  // Follows: heavy-tailed per user, targets by user popularity. Feed readers follow exactly 10 or
  // 1,000 distinct pinners (fewer only if the data set has fewer).
  const withPins: number[] = [];
  for (let u = 0; u < userCount; u++) if (pinsOf[u]! > 0) withPins.push(u);
  const follows = new CsrBuilder(userCount, Math.ceil(userCount * params.followsPerUser * 1.1) + params.feedUsers * 1010);
  {
    const rng = rngFor(seed, 12);
    const seen = new Set<number>();
    for (let u = 0; u < userCount; u++) {
      follows.startSource(u);
      const kind = userKind[u] as UserKind;
      seen.clear();
      if (kind === UserKind.Feed10 || kind === UserKind.Feed1k) {
        const want = Math.min(withPins.length, kind === UserKind.Feed10 ? 10 : 1000);
        // A partial Fisher–Yates over the pinners: distinct, uniform, deterministic.
        const pool = withPins.slice();
        for (let i = 0; i < want; i++) {
          const j = i + randInt(rng, pool.length - i);
          const v = pool[j]!;
          pool[j] = pool[i]!;
          pool[i] = v;
          follows.push(v, after(rng, Math.max(userCreated[u]!, userCreated[v]!), end));
        }
        continue;
      }
      if (kind === UserKind.Mutation || kind === UserKind.Notified) continue;
      const want = Math.min(popularUsers.size - 1, heavyTail(rng, params.followsPerUser, 1.5, 1000));
      const planned = pushExtra(follows, extraFollows.get(u), seen);
      for (let tries = 0; seen.size < want + planned && tries < want * 4 + 10; tries++) {
        const v = popularUsers.sample(rng);
        if (v === u || seen.has(v)) continue;
        seen.add(v);
        follows.push(v, after(rng, Math.max(userCreated[u]!, userCreated[v]!), end));
      }
    }
  }

  // Board follows: natural users follow popular boards of others.
  const boardFollows = new CsrBuilder(userCount, Math.ceil(userCount * params.boardFollowsPerUser * 1.2));
  {
    const rng = rngFor(seed, 13);
    const seen = new Set<number>();
    for (let u = 0; u < userCount; u++) {
      boardFollows.startSource(u);
      if (userKind[u] !== UserKind.Natural) continue;
      const want = Math.min(boardCount - 1, heavyTail(rng, params.boardFollowsPerUser, 1.5, 500));
      seen.clear();
      const planned = pushExtra(boardFollows, extraBoardFollows.get(u), seen);
      for (let tries = 0; seen.size < want + planned && tries < want * 4 + 10; tries++) {
        const b = boardZipf.sample(rng);
        if (boardUser[b] === u || seen.has(b)) continue;
        seen.add(b);
        boardFollows.push(b, after(rng, Math.max(userCreated[u]!, boardCreated[b]!), end));
      }
    }
  }

  const likesCsr = likes.finish();
  const usersOf = (kind: UserKind): number[] => {
    const out: number[] = [];
    for (let u = natural; u < userCount; u++) if (userKind[u] === kind) out.push(u);
    return out;
  };

  // Scenario inputs: the most liked pins and some random ones for pin details; for the mutation
  // mix, random natural pins that no read scenario shows (not on a showcase profile or big board).
  const likeCount = new Int32Array(pinCount);
  for (let i = 0; i < likesCsr.to.length; i++) likeCount[likesCsr.to[i]!]!++;
  const naturalPins: number[] = [];
  for (let p = 0; p < pinCount; p++) if (userKind[pinUser[p]!] === UserKind.Natural) naturalPins.push(p);
  const byLikes = naturalPins.slice().sort((a, b) => likeCount[b]! - likeCount[a]! || a - b);
  const detail = new Set(byLikes.slice(0, 30));
  const rng = rngFor(seed, 14);
  for (let tries = 0; detail.size < Math.min(60, naturalPins.length) && tries < 10_000; tries++) detail.add(naturalPins[randInt(rng, naturalPins.length)]!);
  const mutation = new Set<number>();
  for (let tries = 0; mutation.size < Math.min(64, naturalPins.length - detail.size) && tries < 10_000; tries++) {
    const p = naturalPins[randInt(rng, naturalPins.length)]!;
    if (!detail.has(p)) mutation.add(p);
  }

  return {
    params,
    shards,
    userCount,
    userShard,
    userLocal,
    userCreated,
    userKind,
    userBoardStart,
    userPinStart,
    boardCount,
    boardUser,
    boardLocal,
    boardCreated,
    pinCount,
    pinUser,
    pinBoard,
    pinLocal,
    pinCreated,
    pinVia,
    pinRoot,
    likes: likesCsr,
    follows: follows.finish(),
    boardFollows: boardFollows.finish(),
    specials: {
      profileUsers: usersOf(UserKind.Profile),
      bigBoards: usersOf(UserKind.BigBoard).map((u) => userBoardStart[u]!),
      feed10Users: usersOf(UserKind.Feed10),
      feed1kUsers: usersOf(UserKind.Feed1k),
      mutationUsers: usersOf(UserKind.Mutation),
      notifiedUsers: notified,
      detailPins: [...detail],
      mutationPins: [...mutation],
    },
  };
}

/** Row counts of every table the data set fills, for reports. */
export function datasetSummary(ds: Dataset): Record<string, number> {
  let repins = 0;
  for (let p = 0; p < ds.pinCount; p++) if (ds.pinVia[p]! >= 0) repins++;
  return {
    users: ds.userCount,
    boards: ds.boardCount,
    pins: ds.pinCount,
    repins,
    likes: ds.likes.to.length,
    follows: ds.follows.to.length,
    boardFollows: ds.boardFollows.to.length,
  };
}
