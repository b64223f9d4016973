/**
 * The notified users' event sequences, derived from the data set's edges exactly as the product's
 * writes would have appended them (src/services/writes.ts): each like of one of their pins, repin of
 * one of their pins, follow of them and follow of one of their boards is a `notifications` event in
 * their sequence, at the edge's own time (its mapping `sequence`), with the happening's event ID
 * (src/core/events.ts, in Pinterest's kinds: src/product/pinterest/events.ts). So every event's relation stands and reads show it. Only the notified users'
 * notifications are derived (not every user's, nor the actors' activity): what the scenario reads.
 */
import { eventOf, type Happening, type SequenceEvent } from '../core/events.ts';
import { PINTEREST_EVENTS } from '../product/pinterest/events.ts';
import type { DatasetIndex } from './datasetIndex.ts';

/** Every derived event, user by user (notified users in order), in no particular order within a user. */
export function notificationEvents(ix: Omit<DatasetIndex, 'events'>): SequenceEvent[] {
  const ds = ix.ds;
  const out: SequenceEvent[] = [];
  const id = (ids: string[], i: number): bigint => BigInt(ids[i]!);
  for (const n of ds.specials.notifiedUsers) {
    const owner = id(ix.userIds, n);
    const add = (h: Happening): void => {
      if (h.actor !== owner) out.push(eventOf(PINTEREST_EVENTS, h, owner, 'notifications'));
    };
    for (let p = ds.userPinStart[n]!; p < ds.userPinStart[n + 1]!; p++) {
      const pin = id(ix.pinIds, p);
      for (let i = ix.likers.off[p]!; i < ix.likers.off[p + 1]!; i++) {
        add({ kind: 'LIKE', actor: id(ix.userIds, ix.likers.to[i]!), object: pin, detail: null, ts: ix.likers.ts[i]! });
      }
      for (let i = ix.repins.off[p]!; i < ix.repins.off[p + 1]!; i++) {
        const r = ix.repins.items[i]!;
        add({ kind: 'REPIN', actor: id(ix.userIds, ds.pinUser[r]!), object: pin, detail: id(ix.pinIds, r), ts: ds.pinCreated[r]! });
      }
    }
    for (let i = ix.followers.off[n]!; i < ix.followers.off[n + 1]!; i++) {
      add({ kind: 'FOLLOW_USER', actor: id(ix.userIds, ix.followers.to[i]!), object: owner, detail: null, ts: ix.followers.ts[i]! });
    }
    for (let b = ds.userBoardStart[n]!; b < ds.userBoardStart[n + 1]!; b++) {
      const board = id(ix.boardIds, b);
      for (let i = ix.boardFollowers.off[b]!; i < ix.boardFollowers.off[b + 1]!; i++) {
        add({ kind: 'FOLLOW_BOARD', actor: id(ix.userIds, ix.boardFollowers.to[i]!), object: board, detail: null, ts: ix.boardFollowers.ts[i]! });
      }
    }
  }
  return out;
}

/** An event as a row of the `events` table (shards and flat alike; detail 0 = none). */
export function eventRow(e: SequenceEvent): string {
  return `(${e.user},'${e.kind}',${e.ts},${e.id},${e.actor},${e.object},${e.detail ?? 0n},${e.ts})`;
}

export const EVENT_ROW_COLUMNS = ['user_id', 'kind', 'ts', 'event_id', 'actor_id', 'object_id', 'detail_id', 'created_at'] as const;
