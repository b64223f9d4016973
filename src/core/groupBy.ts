/**
 * Groups items by a key, keeping the order items arrive in within each group and the order keys
 * first appear. Linear: each item is pushed once (a `[...list, item]` copy per item is quadratic,
 * and a level of 1,000 keys on one memcached server or host is common).
 *
 *   groupBy([1, 2, 3, 4], (n) => n % 2)  // Map { 1 => [1, 3], 0 => [2, 4] }
 */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}
