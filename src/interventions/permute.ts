/**
 * S_π — within-latent permutation. A latent is one float leaf; its scalar components (all elements,
 * flattened) are shuffled by Fisher–Yates with the seeded Prng. Elements move as raw bit patterns
 * (16-bit words, 32-bit words, or float64 word pairs; 32-bit words through Int32Array views so
 * the JIT keeps them as small integers), so the multiset of values — norm, mean, variance,
 * every order statistic, even NaN payloads — is preserved bitwise; dtype and shape are kept.
 *
 * The index draws are exactly `prng.nextInt(i + 1)` for i = n−1 … 1 (Lemire's method), i.e. the same
 * permutation as `prng.shuffle` of 0…n−1, and the stream is left where those calls leave it.
 *
 * Speed: the draws are taken in bulk (`Prng.fillUint32`, state in locals) and turned into indices and swaps
 * by WebAssembly kernels (kernels/wasm-permute.ts) or, where those do not apply, by one tight JS loop per element
 * width, in place on a fresh copy (details above `shuffle32`). Both give the same permutation.
 */
import type { Prng, FloatTensor } from '../core/index.js';
import type { LeafOperator, LeafStats } from './leaf-operator.js';
import { wasmPermute } from './kernels/index.js';

const TWO32 = 4294967296;
const INV_TWO32 = 1 / TWO32; // exact (a power of two)
/** Bounds up to 2^21 keep uint32 × bound below 2^53, so the inline Lemire step is exact in doubles. */
const INLINE_BOUND = 2 ** 21;
/** Steps per bulk draw (the scratch buffer's length). */
const CHUNK = 4096;

const draws = new Uint32Array(CHUNK);

/**
 * The rare path of the shuffles below: from step k of a chunk on (draw k not yet used, no draw skipped so far),
 * turns the chunk's draws into swap indices in place, out[k'] = the index of step k', handling rejections as
 * nextInt does: a rejected draw is followed by the next buffered draw, or, once the buffer is spent, by the
 * next draw of the stream (the buffer holds exactly one draw per step, so the stream is never advanced past
 * what the nextInt calls would use). Indices overwrite spent draws only (step k' reads draw p ≥ k').
 */
function indicesFrom(prng: Prng, top: number, count: number, out: Uint32Array, k: number): void {
  let p = k;
  for (; k < count; k++) {
    const bound = top + 1 - k;
    let m = (p < count ? (out[p++] as number) : prng.nextUint32()) * bound;
    let l = m >>> 0; // low 32 bits of the exact product
    if (l < bound) {
      const t = (TWO32 - bound) % bound;
      while (l < t) {
        m = (p < count ? (out[p++] as number) : prng.nextUint32()) * bound;
        l = m >>> 0;
      }
    }
    out[k] = (m - l) * INV_TWO32; // high 32 bits
  }
}

/*
 * Each shuffle below runs Fisher–Yates steps i = n−1 … 1 in chunks of up to CHUNK steps. A chunk takes one
 * draw per step in bulk (Prng.fillUint32) and, in one loop, turns draw k into the Lemire index of step k
 * (bound i + 1 ≤ INLINE_BOUND: the product is exact in doubles) and swaps. A draw whose low product word is
 * below the bound may be rejected by nextInt; from there the chunk's remaining indices come from
 * `indicesFrom` and a plain swap loop finishes it. Steps with bounds above INLINE_BOUND (n > 2^21) come
 * first and draw through prng.nextInt one by one.
 */

function shuffle32(a: Int32Array, prng: Prng): void {
  let i = a.length - 1;
  for (; i >= INLINE_BOUND; i--) {
    const j = prng.nextInt(i + 1);
    const t = a[i] as number;
    a[i] = a[j] as number;
    a[j] = t;
  }
  const d = draws;
  while (i > 0) {
    const top = i;
    const count = i < CHUNK ? i : CHUNK;
    prng.fillUint32(d, count);
    let k = 0;
    for (; k < count; k++, i--) {
      const m = (d[k] as number) * (i + 1);
      if (m >>> 0 <= i) break; // low word < bound: possibly rejected
      const j = (m * INV_TWO32) >>> 0;
      const t = a[i] as number;
      a[i] = a[j] as number;
      a[j] = t;
    }
    if (k < count) {
      indicesFrom(prng, top, count, d, k);
      for (; k < count; k++, i--) {
        const j = d[k] as number;
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
      }
    }
  }
}

function shuffle16(a: Uint16Array, prng: Prng): void {
  let i = a.length - 1;
  for (; i >= INLINE_BOUND; i--) {
    const j = prng.nextInt(i + 1);
    const t = a[i] as number;
    a[i] = a[j] as number;
    a[j] = t;
  }
  const d = draws;
  while (i > 0) {
    const top = i;
    const count = i < CHUNK ? i : CHUNK;
    prng.fillUint32(d, count);
    let k = 0;
    for (; k < count; k++, i--) {
      const m = (d[k] as number) * (i + 1);
      if (m >>> 0 <= i) break;
      const j = (m * INV_TWO32) >>> 0;
      const t = a[i] as number;
      a[i] = a[j] as number;
      a[j] = t;
    }
    if (k < count) {
      indicesFrom(prng, top, count, d, k);
      for (; k < count; k++, i--) {
        const j = d[k] as number;
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
      }
    }
  }
}

/** Shuffles float64 elements held as word pairs (2k, 2k+1). */
function shuffle64(a: Int32Array, prng: Prng): void {
  let i = a.length / 2 - 1;
  for (; i >= INLINE_BOUND; i--) swapPair(a, i, prng.nextInt(i + 1));
  const d = draws;
  while (i > 0) {
    const top = i;
    const count = i < CHUNK ? i : CHUNK;
    prng.fillUint32(d, count);
    let k = 0;
    for (; k < count; k++, i--) {
      const m = (d[k] as number) * (i + 1);
      if (m >>> 0 <= i) break;
      swapPair(a, i, (m * INV_TWO32) >>> 0);
    }
    if (k < count) {
      indicesFrom(prng, top, count, d, k);
      for (; k < count; k++, i--) swapPair(a, i, d[k] as number);
    }
  }
}

function swapPair(a: Int32Array, x: number, y: number): void {
  const p = 2 * x,
    q = 2 * y;
  const t0 = a[p] as number,
    t1 = a[p + 1] as number;
  a[p] = a[q] as number;
  a[p + 1] = a[q + 1] as number;
  a[q] = t0;
  a[q + 1] = t1;
}

/** A new leaf: the same elements (bitwise) in a Prng-drawn order. */
export function permuteLeaf(leaf: FloatTensor, prng: Prng): FloatTensor {
  const shape = [...leaf.shape];
  switch (leaf.dtype) {
    case 'float32': {
      const fast = wasmPermute(leaf.data, prng);
      if (fast !== undefined) return { dtype: 'float32', shape, data: fast };
      const data = leaf.data.slice();
      shuffle32(new Int32Array(data.buffer), prng);
      return { dtype: 'float32', shape, data };
    }
    case 'float64': {
      const fast = wasmPermute(leaf.data, prng);
      if (fast !== undefined) return { dtype: 'float64', shape, data: fast };
      const data = leaf.data.slice();
      shuffle64(new Int32Array(data.buffer), prng);
      return { dtype: 'float64', shape, data };
    }
    case 'float16':
    case 'bfloat16': {
      const fast = wasmPermute(leaf.data, prng);
      if (fast !== undefined) return { dtype: leaf.dtype, shape, data: fast };
      const data = leaf.data.slice();
      shuffle16(data, prng);
      return { dtype: leaf.dtype, shape, data };
    }
  }
}

export const permuteOperator: LeafOperator = {
  condition: 'S_pi',
  params: { scope: 'within-latent', algorithm: 'fisher-yates' },
  usesPrng: true,
  apply: (leaf: FloatTensor, prng: Prng, _stats: LeafStats) => permuteLeaf(leaf, prng),
};
