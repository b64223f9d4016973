/**
 * The same data set in ONE unsharded database, the way a monolith would keep it: one table per
 * object type with the same 64-bit IDs, foreign-key columns and the counts as columns on the rows;
 * one table per relation (likes, follows, board follows) indexed both ways; the notified users'
 * events in one table keyed like the shards' (a user's events per kind in time order, and across
 * kinds in time order). It is the baseline a single MySQL answering with JOINs would give
 * (bench/baselines/flat.ts).
 */
import type { Part } from '../storage/bulkSql.ts';
import { sqlString } from '../storage/bulkSql.ts';
import type { DatasetIndex } from './datasetIndex.ts';
import { boardJson, eventsPart, members, pinJson, userJson } from './sharded.ts';
import { POSITION_GAP } from '../storage/mappingStore.ts';
import { normalizeLookupKey } from '../core/modShard.ts';

export const FLAT_TABLES: readonly [string, string][] = [
  ['users', `CREATE TABLE users (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  -- the lookup key: normalized (lowercase); the username as typed is in data
  username VARCHAR(64) NOT NULL,
  data JSON NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  board_count INT NOT NULL DEFAULT 0,
  pin_count INT NOT NULL DEFAULT 0,
  like_count INT NOT NULL DEFAULT 0,
  follower_count INT NOT NULL DEFAULT 0,
  following_count INT NOT NULL DEFAULT 0,
  followed_board_count INT NOT NULL DEFAULT 0,
  UNIQUE KEY by_username (username)
) ENGINE=InnoDB`],
  ['boards', `CREATE TABLE boards (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  owner_id BIGINT UNSIGNED NOT NULL,
  data JSON NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  pin_count INT NOT NULL DEFAULT 0,
  follower_count INT NOT NULL DEFAULT 0,
  KEY by_owner (owner_id, created_at, id)
) ENGINE=InnoDB`],
  ['pins', `CREATE TABLE pins (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  board_id BIGINT UNSIGNED NOT NULL,
  pinner_id BIGINT UNSIGNED NOT NULL,
  via_pin_id BIGINT UNSIGNED NULL,
  position BIGINT NOT NULL,
  data JSON NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  like_count INT NOT NULL DEFAULT 0,
  repin_count INT NOT NULL DEFAULT 0,
  comment_count INT NOT NULL DEFAULT 0,
  KEY by_board (board_id, created_at, id),
  KEY by_board_position (board_id, position, id),
  KEY by_pinner (pinner_id, created_at, id),
  KEY by_via (via_pin_id, created_at, id)
) ENGINE=InnoDB`],
  ['likes', `CREATE TABLE likes (
  user_id BIGINT UNSIGNED NOT NULL,
  pin_id BIGINT UNSIGNED NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, pin_id),
  KEY by_user (user_id, created_at, pin_id),
  KEY by_pin (pin_id, created_at, user_id)
) ENGINE=InnoDB`],
  ['follows', `CREATE TABLE follows (
  follower_id BIGINT UNSIGNED NOT NULL,
  followee_id BIGINT UNSIGNED NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (follower_id, followee_id),
  KEY by_follower (follower_id, created_at, followee_id),
  KEY by_followee (followee_id, created_at, follower_id)
) ENGINE=InnoDB`],
  ['board_follows', `CREATE TABLE board_follows (
  user_id BIGINT UNSIGNED NOT NULL,
  board_id BIGINT UNSIGNED NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, board_id),
  KEY by_user (user_id, created_at, board_id),
  KEY by_board (board_id, created_at, user_id)
) ENGINE=InnoDB`],
  ['events', `CREATE TABLE events (
  user_id BIGINT UNSIGNED NOT NULL,
  kind VARCHAR(32) NOT NULL,
  ts BIGINT NOT NULL,
  event_id BIGINT UNSIGNED NOT NULL,
  actor_id BIGINT UNSIGNED NOT NULL,
  object_id BIGINT UNSIGNED NOT NULL,
  -- the repin or comment; 0 = none
  detail_id BIGINT UNSIGNED NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, kind, ts, event_id),
  KEY by_time (user_id, ts, event_id)
) ENGINE=InnoDB`],
];

/** Objects in ID order: shard by shard, local IDs ascending within a shard (type is fixed per table). */
function inIdOrder(ix: DatasetIndex, group: DatasetIndex['usersByShard']): number[] {
  const out: number[] = [];
  for (const s of [...ix.ds.shards].sort((a, b) => a - b)) out.push(...members(group, s));
  return out;
}

/** Rows of the flat database `db`. */
export function flatParts(ix: DatasetIndex, db: string): Part[] {
  const ds = ix.ds;
  const users = inIdOrder(ix, ix.usersByShard);
  const boards = inIdOrder(ix, ix.boardsByShard);
  const pins = inIdOrder(ix, ix.pinsByShard);
  const deg = (off: Int32Array, i: number): number => off[i + 1]! - off[i]!;
  const relation = (table: string, columns: string[], from: number[], fromIds: string[], toIds: string[], csr: DatasetIndex['likers']): Part => {
    let rows = 0;
    for (const f of from) rows += deg(csr.off, f);
    return {
      table: `${db}.${table}`,
      columns,
      rows,
      *values() {
        for (const f of from) for (let i = csr.off[f]!; i < csr.off[f + 1]!; i++) yield `(${fromIds[f]},${toIds[csr.to[i]!]},${csr.ts[i]})`;
      },
    };
  };
  return [
    {
      table: `${db}.users`,
      columns: ['id', 'username', 'data', 'created_at', 'updated_at', 'board_count', 'pin_count', 'like_count', 'follower_count', 'following_count', 'followed_board_count'],
      rows: users.length,
      *values() {
        for (const u of users) {
          const t = ds.userCreated[u]!;
          yield `(${ix.userIds[u]},${sqlString(normalizeLookupKey(ix.usernames[u]!))},${sqlString(userJson(ix, u))},${t},${t},${deg(ds.userBoardStart, u)},${deg(ds.userPinStart, u)},${deg(ds.likes.off, u)},${deg(ix.followers.off, u)},${deg(ds.follows.off, u)},${deg(ds.boardFollows.off, u)})`;
        }
      },
    },
    {
      table: `${db}.boards`,
      columns: ['id', 'owner_id', 'data', 'created_at', 'updated_at', 'pin_count', 'follower_count'],
      rows: boards.length,
      *values() {
        for (const b of boards) {
          const t = ds.boardCreated[b]!;
          yield `(${ix.boardIds[b]},${ix.userIds[ds.boardUser[b]!]},${sqlString(boardJson(ix, b))},${t},${t},${deg(ix.boardPins.off, b)},${deg(ix.boardFollowers.off, b)})`;
        }
      },
    },
    {
      table: `${db}.pins`,
      columns: ['id', 'board_id', 'pinner_id', 'via_pin_id', 'position', 'data', 'created_at', 'updated_at', 'like_count', 'repin_count', 'comment_count'],
      rows: pins.length,
      *values() {
        for (const p of pins) {
          const t = ds.pinCreated[p]!;
          const via = ds.pinVia[p]!;
          yield `(${ix.pinIds[p]},${ix.boardIds[ds.pinBoard[p]!]},${ix.userIds[ds.pinUser[p]!]},${via >= 0 ? ix.pinIds[via] : 'NULL'},${-t * POSITION_GAP},${sqlString(pinJson(ix, p))},${t},${t},${deg(ix.likers.off, p)},${deg(ix.repins.off, p)},0)`;
        }
      },
    },
    relation('likes', ['user_id', 'pin_id', 'created_at'], users, ix.userIds, ix.pinIds, ds.likes),
    relation('follows', ['follower_id', 'followee_id', 'created_at'], users, ix.userIds, ix.userIds, ds.follows),
    relation('board_follows', ['user_id', 'board_id', 'created_at'], users, ix.userIds, ix.boardIds, ds.boardFollows),
    eventsPart(`${db}.events`, ix.events),
  ];
}
