/**
 * Redis Cluster key slots (the cluster specification's "Keys distribution model"): a key lives in
 * slot CRC16(key) mod 16384, where only the hash tag is hashed when the key has one — the text
 * between the first `{` and the next `}`, if that is not empty. Keys that share a hash tag share a
 * slot, so one Lua script or transaction may touch them all; keys without one spread over the
 * cluster's primaries.
 *
 *   keySlot('foo')                      // 12182
 *   keySlot('shardql:{inv}:log')        // keySlot('inv') = 13198, as every other `{inv}` key
 *   hashTagOf('a{}{b}')                 // undefined: the first tag is empty, so the whole key is hashed
 */

export const SLOTS = 16384;

/** CRC16-CCITT (XModem: polynomial 0x1021, initial value 0), as the cluster specification defines it. */
const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The part of `key` Redis Cluster hashes when it has a non-empty hash tag, else undefined. */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return undefined;
  return key.slice(open + 1, close);
}

/** The cluster slot of a key (0–16383), computed over its UTF-8 bytes as Redis does. */
export function keySlot(key: string): number {
  return crc16(new TextEncoder().encode(hashTagOf(key) ?? key)) % SLOTS;
}

/**
 * `{tag}`: the hash tag that puts every key containing it first in one slot. A tag may not hold
 * braces (the tag would end early). Example: `hashTag('shardql:inv')` → `{shardql:inv}`.
 */
export function hashTag(tag: string): string {
  if (tag === '' || /[{}]/.test(tag)) throw new RangeError(`a hash tag must be non-empty and hold no braces, got ${JSON.stringify(tag)}`);
  return `{${tag}}`;
}
