import { ShardqlError, describeValue } from './errors.ts';
import { typeName, OBJECT_TYPES, type ObjectType } from './objectTypes.ts';

/**
 * The 64-bit ID: `2 reserved | 16 shard | 10 type | 36 local`, i.e.
 * `id = shard << 46 | type << 36 | local`.
 *
 * Example (Pinterest's own pin): 241294492511762325 → { shard: 3429, type: 1 (pin), local: 7075733 }.
 * IDs are `bigint` in code and decimal strings on the wire.
 */
export const ID_LAYOUT = { reservedBits: 2, shardBits: 16, typeBits: 10, localBits: 36 } as const;

export const MAX_SHARD = (1 << ID_LAYOUT.shardBits) - 1; // 65535
export const MAX_TYPE = (1 << ID_LAYOUT.typeBits) - 1; // 1023
export const MAX_LOCAL_ID = (1n << BigInt(ID_LAYOUT.localBits)) - 1n; // 2^36 - 1
const SHARD_SHIFT = BigInt(ID_LAYOUT.typeBits + ID_LAYOUT.localBits); // 46
const TYPE_SHIFT = BigInt(ID_LAYOUT.localBits); // 36
const ID_LIMIT = 1n << 62n; // reserved bits must be zero
const MAX_DECIMAL_DIGITS = 19; // 2^62 has 19 digits; longer input is refused before BigInt parses it

export interface IdParts {
  readonly shard: number;
  readonly type: number;
  readonly local: bigint;
}

export function encodeId(parts: IdParts): bigint {
  const { shard, type, local } = parts;
  if (!Number.isInteger(shard) || shard < 0 || shard > MAX_SHARD) {
    throw new RangeError(`shard must be an integer in 0..${MAX_SHARD}, got ${shard}`);
  }
  if (!Number.isInteger(type) || type < 0 || type > MAX_TYPE) {
    throw new RangeError(`type must be an integer in 0..${MAX_TYPE}, got ${type}`);
  }
  if (local < 0n || local > MAX_LOCAL_ID) {
    throw new ShardqlError('LOCAL_ID_OVERFLOW', `local ID must be in 0..2^36-1, got ${local}`, { local: `${local}` });
  }
  return (BigInt(shard) << SHARD_SHIFT) | (BigInt(type) << TYPE_SHIFT) | local;
}

/** Splits a valid ID. Callers holding client input use `parseId` first. */
export function decodeId(id: bigint): IdParts {
  return {
    shard: Number((id >> SHARD_SHIFT) & 0xffffn),
    type: Number((id >> TYPE_SHIFT) & 0x3ffn),
    local: id & MAX_LOCAL_ID,
  };
}

export function shardOf(id: bigint): number {
  return Number((id >> SHARD_SHIFT) & 0xffffn);
}

export function typeOf(id: bigint): ObjectType | undefined {
  return typeName(Number((id >> TYPE_SHIFT) & 0x3ffn));
}

export type InvalidIdReason = 'not_decimal' | 'too_large' | 'reserved_bits' | 'unknown_type' | 'wrong_type' | 'unknown_shard';

function invalid(input: unknown, reason: InvalidIdReason, expected: string): ShardqlError {
  return new ShardqlError('INVALID_ID', `Expected ${expected}, got ${describeValue(input)}`, { reason });
}

export interface ParseIdOptions {
  /** The object type the caller needs; another type is refused with reason `wrong_type`. */
  readonly expect?: ObjectType;
  /** Whether a shard exists in the current topology; unknown shards are refused with `unknown_shard`. */
  readonly shardExists?: (shard: number) => boolean;
}

/**
 * Parses a client-supplied ID (decimal string, or a number for JSON inputs) into a bigint, or throws
 * `INVALID_ID` with a `reason`. "0241…" and "+1" are refused: one ID has exactly one spelling, so
 * cache keys and cursors built from IDs cannot alias.
 */
export function parseId(input: unknown, options: ParseIdOptions = {}): bigint {
  const text = typeof input === 'number' && Number.isSafeInteger(input) ? String(input) : input;
  if (typeof text !== 'string' || !/^(0|[1-9][0-9]*)$/.test(text)) {
    return fail(input, 'not_decimal', 'an ID as a decimal string of digits');
  }
  if (text.length > MAX_DECIMAL_DIGITS) return fail(input, 'too_large', 'an ID below 2^62');
  const id = BigInt(text);
  if (id >= ID_LIMIT) return fail(input, 'reserved_bits', 'an ID whose two reserved high bits are zero');
  const { shard, type } = decodeId(id);
  const name = typeName(type);
  if (name === undefined) {
    return fail(input, 'unknown_type', `an ID whose type bits name a known type (${Object.values(OBJECT_TYPES).join(', ')}), type ${type}`);
  }
  if (options.expect !== undefined && name !== options.expect) {
    // `Expected an ID of type track, got an ID of type playlist: "…"`: no article to get wrong per name.
    throw new ShardqlError('INVALID_ID', `Expected an ID of type ${options.expect}, got an ID of type ${name}: ${describeValue(input)}`, { reason: 'wrong_type' });
  }
  if (options.shardExists && !options.shardExists(shard)) {
    return fail(input, 'unknown_shard', `an ID on a shard of this deployment, shard ${shard}`);
  }
  return id;
}

function fail(input: unknown, reason: InvalidIdReason, expected: string): never {
  throw invalid(input, reason, expected);
}

export function formatId(id: bigint): string {
  return id.toString(10);
}
