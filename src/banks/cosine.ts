import type { FloatTensor } from '../core/index.js';
import { valueAt, ImepError } from '../core/index.js';

/**
 * Cosine similarity over float tensors, computed in float64 from the exact element values of any
 * dtype (float16/bfloat16 bits are decoded exactly).
 *
 * Canonical definition (every bank uses exactly this, cached or not, so cached and uncached
 * similarities are bit-identical):
 *
 *   unit(x)      = y / ‖y‖₂ with y = x / max|xᵢ|, summed in index order (the max-abs pre-scaling
 *                  keeps huge or tiny vectors from overflowing or underflowing);
 *   cosine(a, b) = Σᵢ unit(a)ᵢ · unit(b)ᵢ, summed in the fixed four-lane order of `dot64`.
 *
 * Degenerate vectors: a vector whose elements are all zero (±0), or which holds any NaN or ±Infinity,
 * has no direction. Its unit vector is the all-zero vector, so its similarity to anything is exactly 0.
 * (The structured bank refuses non-finite keys before they get here; episode-local features may carry
 * them, and then simply never look similar.)
 *
 * The result is not clamped: rounding can put it a few ULPs outside [-1, 1].
 */

/** The canonical unit vector of a tensor's values (all zeros when degenerate). Writes into `out` when given. */
export function unitVector(t: FloatTensor, out?: Float64Array): Float64Array {
  const n = t.data.length;
  const u = out ?? new Float64Array(n);
  if (u.length !== n) throw new RangeError(`unitVector: output holds ${u.length} values, tensor ${n}`);
  return unitInto(t, u);
}

/** The canonical unit vector of plain float64 values (all zeros when degenerate). */
export function unitOfValues(values: ArrayLike<number>, out?: Float64Array): Float64Array {
  const n = values.length;
  const u = out ?? new Float64Array(n);
  let m = 0;
  let finite = true;
  for (let i = 0; i < n; i++) {
    const a = Math.abs(values[i] as number);
    if (a > m) m = a;
    else if (!(a <= m)) finite = false; // NaN
  }
  return scaleToUnit(values, finite ? m : NaN, u);
}

function unitInto(t: FloatTensor, u: Float64Array): Float64Array {
  const n = t.data.length;
  if (t.dtype === 'float32' || t.dtype === 'float64') return unitOfValues(t.data, u);
  for (let i = 0; i < n; i++) u[i] = valueAt(t, i);
  return unitOfValues(u, u);
}

function scaleToUnit(values: ArrayLike<number>, maxAbs: number, u: Float64Array): Float64Array {
  const n = values.length;
  if (!(maxAbs > 0) || maxAbs === Infinity) {
    u.fill(0);
    return u;
  }
  let ss = 0;
  for (let i = 0; i < n; i++) {
    const y = (values[i] as number) / maxAbs;
    u[i] = y;
    ss += y * y;
  }
  const norm = Math.sqrt(ss);
  for (let i = 0; i < n; i++) u[i] = (u[i] as number) / norm;
  return u;
}

/**
 * Canonical float64 dot product of two equally long vectors: four running sums over the lanes
 * i ≡ 0, 1, 2, 3 (mod 4) in index order, combined as (s0 + s1) + (s2 + s3). (Four independent sums
 * keep the floating-point add latency off the critical path; the order is fixed, so the result is
 * reproducible bit for bit.)
 */
export function dot64(a: Float64Array, b: Float64Array): number {
  const n = a.length;
  const n4 = n - (n & 3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i < n4; i += 4) {
    s0 += (a[i] as number) * (b[i] as number);
    s1 += (a[i + 1] as number) * (b[i + 1] as number);
    s2 += (a[i + 2] as number) * (b[i + 2] as number);
    s3 += (a[i + 3] as number) * (b[i + 3] as number);
  }
  if (i < n) s0 += (a[i] as number) * (b[i] as number);
  if (i + 1 < n) s1 += (a[i + 1] as number) * (b[i + 1] as number);
  if (i + 2 < n) s2 += (a[i + 2] as number) * (b[i + 2] as number);
  return s0 + s1 + (s2 + s3);
}

/**
 * `dot64(a, b.subarray(off, off + a.length))` without the view: the same four lanes in the same order, so the
 * result is bit-identical. For vectors stored back to back in one array. Kept apart from dot64 on purpose:
 * dot64 written as dot64At(a, b, 0) made structured-bank selection 13% slower (bench/bank-selection.ts:
 * 1.11× → 1.26× its baseline).
 */
export function dot64At(a: Float64Array, b: Float64Array, off: number): number {
  const n = a.length;
  const n4 = n - (n & 3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i < n4; i += 4) {
    s0 += (a[i] as number) * (b[off + i] as number);
    s1 += (a[i + 1] as number) * (b[off + i + 1] as number);
    s2 += (a[i + 2] as number) * (b[off + i + 2] as number);
    s3 += (a[i + 3] as number) * (b[off + i + 3] as number);
  }
  if (i < n) s0 += (a[i] as number) * (b[off + i] as number);
  if (i + 1 < n) s1 += (a[i + 1] as number) * (b[off + i + 1] as number);
  if (i + 2 < n) s2 += (a[i + 2] as number) * (b[off + i + 2] as number);
  return s0 + s1 + (s2 + s3);
}

/** True when the tensor has no direction (all zero, or any non-finite element). */
export function isDegenerate(t: FloatTensor): boolean {
  const u = unitVector(t);
  for (let i = 0; i < u.length; i++) if (u[i] !== 0) return false;
  return true;
}

/**
 * Cosine similarity of two tensors of equal element count (dtypes and shapes may differ).
 * Throws E_BANK_INVALID when the element counts differ.
 */
export function cosine(a: FloatTensor, b: FloatTensor): number {
  if (a.data.length !== b.data.length) {
    throw new ImepError('E_BANK_INVALID', `cosine: vectors of ${a.data.length} and ${b.data.length} elements`);
  }
  return dot64(unitVector(a), unitVector(b));
}

/** Cosine similarity of two cached unit vectors (same as `cosine` on the tensors they came from). */
export function cosineOfUnits(a: Float64Array, b: Float64Array): number {
  if (a.length !== b.length) {
    throw new ImepError('E_BANK_INVALID', `cosine: vectors of ${a.length} and ${b.length} elements`);
  }
  return dot64(a, b);
}
