/**
 * Float tensors with an explicit dtype. float16 and bfloat16 are stored as their raw IEEE bit
 * patterns in a Uint16Array, so every operation on them is exact and byte-reproducible.
 */
export const FLOAT_DTYPES = ['float32', 'float16', 'bfloat16', 'float64'] as const;
export type FloatDtype = (typeof FLOAT_DTYPES)[number];

export type StorageOf<D extends FloatDtype> = D extends 'float32'
  ? Float32Array
  : D extends 'float64'
    ? Float64Array
    : Uint16Array;

export type FloatTensor =
  | { readonly dtype: 'float32'; readonly shape: readonly number[]; readonly data: Float32Array }
  | { readonly dtype: 'float64'; readonly shape: readonly number[]; readonly data: Float64Array }
  | { readonly dtype: 'float16'; readonly shape: readonly number[]; readonly data: Uint16Array }
  | { readonly dtype: 'bfloat16'; readonly shape: readonly number[]; readonly data: Uint16Array };

export function bytesPerElement(dtype: FloatDtype): number {
  return dtype === 'float64' ? 8 : dtype === 'float32' ? 4 : 2;
}

export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float16 bits -> number (exact). */
export function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** number -> float16 bits, round to nearest even (IEEE 754). NaN maps to 0x7e00 with the sign kept. */
export function numberToHalf(value: number): number {
  if (Number.isNaN(value)) return 0x7e00;
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  const a = Math.abs(value);
  if (a === Infinity) return sign | 0x7c00;
  if (a === 0) return sign;
  // Scale into an integer count of the smallest unit for the target binade, then round half-even.
  let exp = Math.floor(Math.log2(a));
  if (2 ** exp > a) exp -= 1;
  if (2 ** (exp + 1) <= a) exp += 1;
  if (exp < -14) {
    // subnormal: units of 2^-24
    const q = roundHalfEven(a / 2 ** -24);
    return sign | q; // q may be 0x400 which correctly becomes the smallest normal
  }
  const mant = roundHalfEven((a / 2 ** exp - 1) * 1024);
  let e = exp + 15;
  let m = mant;
  if (m === 1024) {
    m = 0;
    e += 1;
  }
  if (e >= 0x1f) return sign | 0x7c00;
  return sign | (e << 10) | m;
}

/** bfloat16 bits -> number (exact). */
export function bfloat16ToNumber(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0] as number;
}

/**
 * number -> bfloat16 bits, correctly rounded (nearest, ties to even) from the double itself: first to float32
 * with round-to-odd (an inexact float32 keeps a set last bit, so a double just off a bfloat16 midpoint cannot
 * land on it), then round-to-nearest-even on the low 16 bits. Round-to-odd at 24 bits followed by rounding to
 * 8 bits equals one rounding of the double (24 ≥ 8 + 2). Plain RNE to float32 first would round twice: the
 * double 1 + 2^-8 + 2^-30 became the midpoint 1 + 2^-8 and then 1.0 instead of 1.0078125.
 * NaN becomes a quiet NaN with the sign and top payload bits kept; overflow gives ±Infinity.
 */
export function numberToBfloat16(value: number): number {
  f32[0] = value;
  let x = u32[0] as number;
  if ((x & 0x7f800000) === 0x7f800000) {
    if ((x & 0x7fffff) !== 0) return ((x >>> 16) | 0x40) & 0xffff; // quiet NaN
  } else if ((x & 1) === 0 && (f32[0] as number) !== value) {
    // inexact with an even last bit: step to the float32 neighbour on the value's side (round to odd)
    x = Math.abs(f32[0] as number) < Math.abs(value) ? x + 1 : x - 1;
  }
  const lsb = (x >>> 16) & 1;
  const rounded = (x + 0x7fff + lsb) >>> 0;
  return (rounded >>> 16) & 0xffff;
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Element i of a tensor as a JS number (exact for every dtype). */
export function valueAt(t: FloatTensor, i: number): number {
  const raw = t.data[i] as number;
  if (t.dtype === 'float16') return halfToNumber(raw);
  if (t.dtype === 'bfloat16') return bfloat16ToNumber(raw);
  return raw;
}

/** A float64 copy of the tensor's values. */
export function toFloat64(t: FloatTensor): Float64Array {
  if (t.dtype === 'float64') return Float64Array.from(t.data);
  if (t.dtype === 'float32') return Float64Array.from(t.data);
  const out = new Float64Array(t.data.length);
  const conv = t.dtype === 'float16' ? halfToNumber : bfloat16ToNumber;
  for (let i = 0; i < out.length; i++) out[i] = conv(t.data[i] as number);
  return out;
}

/** Builds a tensor of `dtype` from numbers, rounding to nearest even where the dtype is narrower. */
export function tensorFrom(
  dtype: FloatDtype,
  values: ArrayLike<number>,
  shape: readonly number[] = [values.length],
): FloatTensor {
  if (elementCount(shape) !== values.length)
    throw new RangeError(`tensorFrom: shape [${shape.join(',')}] does not hold ${values.length} values`);
  switch (dtype) {
    case 'float32':
      return { dtype, shape: [...shape], data: Float32Array.from(values) };
    case 'float64':
      return { dtype, shape: [...shape], data: Float64Array.from(values) };
    case 'float16': {
      const data = new Uint16Array(values.length);
      for (let i = 0; i < values.length; i++) data[i] = numberToHalf(values[i] as number);
      return { dtype, shape: [...shape], data };
    }
    case 'bfloat16': {
      const data = new Uint16Array(values.length);
      for (let i = 0; i < values.length; i++) data[i] = numberToBfloat16(values[i] as number);
      return { dtype, shape: [...shape], data };
    }
  }
}

/**
 * A deep copy (new buffer, same bytes). Written out rather than `{ ...t, shape: [...t.shape], data: t.data.slice() }`:
 * banks copy on every write and every retrieved item (a policy's per-step path), where the object spread,
 * TypedArray#slice (several times slower than the same-type constructor on short arrays, which also copies
 * the bytes) and spreading a frozen shape (V8's slow path) were measurable.
 */
export function cloneTensor(t: FloatTensor): FloatTensor {
  const d = t.data;
  const data =
    t.dtype === 'float32'
      ? new Float32Array(d as Float32Array)
      : t.dtype === 'float64'
        ? new Float64Array(d as Float64Array)
        : new Uint16Array(d as Uint16Array);
  const n = t.shape.length;
  const shape = new Array<number>(n);
  for (let i = 0; i < n; i++) shape[i] = t.shape[i] as number;
  return { dtype: t.dtype, shape, data } as FloatTensor;
}

/** True when two shapes have the same dimensions (also for symbolic dimensions such as 'batch'). */
export function sameShape(a: readonly (number | string)[], b: readonly (number | string)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The tensor's bytes as a Uint8Array view (little-endian platform order). */
export function tensorBytes(t: FloatTensor): Uint8Array {
  return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

/** True when both tensors have the same dtype, shape and bytes. */
export function tensorsBitEqual(a: FloatTensor, b: FloatTensor): boolean {
  if (a.dtype !== b.dtype || !sameShape(a.shape, b.shape)) return false;
  const x = tensorBytes(a),
    y = tensorBytes(b);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
