import { createHash } from 'node:crypto';

/**
 * The mod shard of a lookup key: `md5(key) mod count`, reading the digest as one 128-bit number.
 * Example: modShardOf("1.2.3.4", 4096) → 1537. (The seeds print 1524 for that key, an illustration:
 * md5 gives 1537.)
 */
export function modShardOf(key: string, count: number): number {
  const digest = createHash('md5').update(key, 'utf8').digest('hex');
  return Number(BigInt(`0x${digest}`) % BigInt(count));
}

/** Keys are looked up case-insensitively: "Alice" and "alice" are one username. */
export function normalizeLookupKey(key: string): string {
  return key.normalize('NFC').toLowerCase();
}
