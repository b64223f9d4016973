/**
 * Seeded randomness for the synthetic data set: the same seed gives the same graph, byte for byte,
 * on every machine (no Math.random, no clock).
 */

/** sfc32: a small, fast 32-bit generator with good statistical quality. Returns [0, 1). */
export type Rng = () => number;

export function sfc32(a: number, b: number, c: number, d: number): Rng {
  return () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

/** A 32-bit mix of a few integers (murmur3's finalizer over a running hash). */
export function mix32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h ^= Math.imul((p | 0) ^ ((p / 4294967296) | 0), 0x85ebca6b);
    h = Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A generator derived from a seed and a stream name/number, independent of every other stream. */
export function rngFor(seed: number, ...stream: number[]): Rng {
  const rng = sfc32(mix32(seed, 1, ...stream), mix32(seed, 2, ...stream), mix32(seed, 3, ...stream), mix32(seed, 4, ...stream));
  for (let i = 0; i < 12; i++) rng(); // let the state diffuse
  return rng;
}

export function randInt(rng: Rng, n: number): number {
  return Math.floor(rng() * n);
}

/**
 * Lomax (Pareto type II) draw with the given mean and tail index `alpha` (> 1), floored to an
 * integer and capped: most values are small, a few are very large — the shape of real activity.
 */
export function heavyTail(rng: Rng, mean: number, alpha: number, cap: number): number {
  const lambda = mean * (alpha - 1);
  const x = lambda * (Math.pow(1 - rng(), -1 / alpha) - 1);
  return Math.min(cap, Math.floor(x));
}

/** Fisher–Yates shuffle of 0..n-1. */
export function permutation(rng: Rng, n: number): Int32Array {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = randInt(rng, i + 1);
    const t = p[i]!;
    p[i] = p[j]!;
    p[j] = t;
  }
  return p;
}

/**
 * Samples items by popularity: rank r (0-based) has weight (r+1)^-s (Zipf). `order[r]` is the item
 * at rank r, so popularity is independent of creation order.
 */
export class ZipfSampler {
  readonly #cdf: Float64Array;
  readonly #order: Int32Array;

  constructor(order: Int32Array, s: number) {
    this.#order = order;
    this.#cdf = new Float64Array(order.length);
    let sum = 0;
    for (let r = 0; r < order.length; r++) {
      sum += Math.pow(r + 1, -s);
      this.#cdf[r] = sum;
    }
    for (let r = 0; r < order.length; r++) this.#cdf[r]! /= sum;
  }

  get size(): number {
    return this.#order.length;
  }

  sample(rng: Rng): number {
    const u = rng();
    let lo = 0;
    let hi = this.#cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.#order[lo]!;
  }
}
