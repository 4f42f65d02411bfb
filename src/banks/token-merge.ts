import { tensorFrom, toFloat64 } from '../core/index.js';
import type { FloatTensor } from '../core/index.js';
import { dot64 } from './cosine.js';

/**
 * Consolidation of an over-full episode-local bank (MemoryVLA style), as pure functions.
 *
 * token-merge: among ADJACENT entry pairs (i, i+1), find the pair with the highest cosine similarity
 *   (canonical cosine, `cosine.ts`); equal similarities → the earliest pair (smallest i). Replace the pair
 *   by one entry whose feature is the element-wise mean computed in float64, (a + b) / 2 (a/2 + b/2 if
 *   that sum overflows), rounded back to the dtype by round-to-nearest-even, and whose timestep is the
 *   EARLIER of the two (entry i's).
 * fifo: drop the oldest entry (index 0).
 */

export const CONSOLIDATION_MODES = ['token-merge', 'fifo'] as const;
export type ConsolidationMode = (typeof CONSOLIDATION_MODES)[number];

export interface AdjacentPair {
  /** The pair is (index, index + 1). */
  readonly index: number;
  readonly similarity: number;
}

/** The most similar adjacent pair of unit vectors; undefined for fewer than two. */
export function mostSimilarAdjacentPair(units: readonly Float64Array[]): AdjacentPair | undefined {
  let best: AdjacentPair | undefined;
  for (let i = 0; i + 1 < units.length; i++) {
    const similarity = dot64(units[i] as Float64Array, units[i + 1] as Float64Array);
    // Strictly greater keeps the earliest pair on ties. NaN cannot occur: unit vectors are finite.
    if (best === undefined || similarity > best.similarity) best = { index: i, similarity };
  }
  return best;
}

/** Element-wise mean of two tensors of the same dtype and shape, computed in float64, rounded to the dtype. */
export function averageFeatures(a: FloatTensor, b: FloatTensor): FloatTensor {
  if (a.dtype !== b.dtype || a.data.length !== b.data.length) {
    throw new RangeError(`averageFeatures: ${a.dtype}[${a.data.length}] and ${b.dtype}[${b.data.length}] differ`);
  }
  const x = toFloat64(a);
  const y = toFloat64(b);
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const p = x[i] as number;
    const q = y[i] as number;
    let m = (p + q) / 2;
    if (!Number.isFinite(m) && Number.isFinite(p) && Number.isFinite(q)) m = p / 2 + q / 2;
    out[i] = m;
  }
  return tensorFrom(a.dtype, out, a.shape);
}
