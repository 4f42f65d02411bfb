/**
 * One-ULP steps on raw IEEE 754 bit patterns for float16, bfloat16, float32 and float64.
 *
 * Two families live here:
 *
 * - `nextUp` / `nextDown` (and their `…Bits` forms) follow IEEE 754-2008 exactly:
 *   nextUp(±0) = +smallest subnormal, nextDown(±0) = −smallest subnormal, nextUp(−smallest subnormal) = −0,
 *   nextUp(+max finite) = +Inf, nextUp(−Inf) = −max finite, nextUp(+Inf) = +Inf, NaN → the same NaN bits.
 *
 * - `stepUlp` is the U condition's step. Decisions (registered with the condition as `direction`):
 *   * 'up' / 'down' move toward +Inf / −Inf; 'away' moves the magnitude away from zero keeping the sign
 *     (the default); 'toward-zero' moves the magnitude toward zero keeping the sign.
 *   * Every FINITE value moves to an adjacent FINITE value, so it changes by exactly one ULP:
 *     where the requested step would overflow (±max finite stepping outward) the step is taken in the
 *     opposite direction instead (toward zero); where 'toward-zero' meets ±0 (no neighbour closer to zero)
 *     it steps away from zero keeping the sign (+0 → +smallest subnormal, −0 → −smallest subnormal).
 *   * Crossing zero: 'up' from −smallest subnormal gives −0 and 'down' from +smallest subnormal gives +0
 *     (IEEE), and 'up'/'down' from either zero give ±smallest subnormal. +0 and −0 are the same point of the
 *     finite order, so each of these is a one-ULP change of value.
 *   * ±Inf and NaN are left bit-identical and counted as non-finite by the tensor routine; they are not
 *     "changed by one ULP" and the installation record reports how many there were.
 *
 * The tensor routines work on typed-array views of the raw bits (no per-element allocation); float64 is
 * handled as (hi, lo) uint32 word pairs so NaN payloads never pass through a JS number. `stepTensorUlp` runs
 * WebAssembly SIMD kernels where available (kernels/simd-ulp.ts) and these scalar loops otherwise; both give the
 * same bits (test/interventions/bit-identical.test.ts).
 */
import {
  bfloat16ToNumber,
  halfToNumber,
  numberToBfloat16,
  numberToHalf,
  type FloatDtype,
  type FloatTensor,
} from '../core/index.js';
import { simdStepUlp } from './kernels/index.js';

export const ULP_DIRECTIONS = ['up', 'down', 'away', 'toward-zero'] as const;
export type UlpDirection = (typeof ULP_DIRECTIONS)[number];

/** The dtypes whose raw bits fit a JS number exactly (16- and 32-bit formats). */
export type NarrowDtype = Exclude<FloatDtype, 'float64'>;

interface BitFormat {
  readonly sign: number;
  readonly mag: number;
  /** Bit pattern of +Inf (also the smallest non-finite magnitude). */
  readonly inf: number;
  /** Bit pattern of +max finite. */
  readonly max: number;
}

const FORMATS: Readonly<Record<NarrowDtype, BitFormat>> = {
  float16: { sign: 0x8000, mag: 0x7fff, inf: 0x7c00, max: 0x7bff },
  bfloat16: { sign: 0x8000, mag: 0x7fff, inf: 0x7f80, max: 0x7f7f },
  float32: { sign: 0x80000000, mag: 0x7fffffff, inf: 0x7f800000, max: 0x7f7fffff },
};

const DIR_UP = 0,
  DIR_DOWN = 1,
  DIR_AWAY = 2,
  DIR_TOWARD = 3;
function dirCode(direction: UlpDirection): number {
  switch (direction) {
    case 'up':
      return DIR_UP;
    case 'down':
      return DIR_DOWN;
    case 'away':
      return DIR_AWAY;
    case 'toward-zero':
      return DIR_TOWARD;
  }
}

/**
 * Whether the step of a finite NON-ZERO value with sign `neg` grows its magnitude, after the overflow
 * fallback described above (zeros are handled by `signFromZero`).
 */
function growsMagnitude(neg: boolean, magIsMax: boolean, dir: number): boolean {
  const grow = dir === DIR_AWAY || (dir === DIR_UP && !neg) || (dir === DIR_DOWN && neg);
  return grow && !magIsMax;
}

/** The sign a step from zero lands on: 'up' → +, 'down' → −, 'away'/'toward-zero' keep the zero's sign. */
function signFromZero(neg: boolean, dir: number): boolean {
  if (dir === DIR_UP) return false;
  if (dir === DIR_DOWN) return true;
  return neg;
}

function stepNarrow(bits: number, f: BitFormat, dir: number): number {
  const mag = bits & f.mag;
  if (mag >= f.inf) return bits;
  const neg = (bits & f.sign) !== 0;
  if (mag === 0) return (signFromZero(neg, dir) ? f.sign : 0) + 1;
  const grow = growsMagnitude(neg, mag === f.max, dir);
  return (neg ? f.sign : 0) + (grow ? mag + 1 : mag - 1);
}

function checkBits(bits: number, dtype: NarrowDtype): void {
  const limit = dtype === 'float32' ? 0xffffffff : 0xffff;
  if (!(Number.isInteger(bits) && bits >= 0 && bits <= limit))
    throw new RangeError(`ulp: ${bits} is not a ${dtype} bit pattern`);
}

/** U's one-ULP step on raw bits of a 16/32-bit dtype (see the module comment for every edge case). */
export function stepUlpBits(bits: number, dtype: NarrowDtype, direction: UlpDirection): number {
  checkBits(bits, dtype);
  return stepNarrow(bits, FORMATS[dtype], dirCode(direction));
}

/** IEEE nextUp on raw bits of a 16/32-bit dtype. */
export function nextUpBits(bits: number, dtype: NarrowDtype): number {
  checkBits(bits, dtype);
  const f = FORMATS[dtype];
  const mag = bits & f.mag;
  const neg = (bits & f.sign) !== 0;
  if (mag > f.inf) return bits; // NaN
  if (mag === f.inf) return neg ? f.sign + f.max : bits; // −Inf → −max; +Inf stays
  if (mag === 0) return 1;
  return neg ? f.sign + mag - 1 : mag + 1; // +max → +Inf
}

/** IEEE nextDown on raw bits: nextDown(x) = −nextUp(−x). */
export function nextDownBits(bits: number, dtype: NarrowDtype): number {
  checkBits(bits, dtype);
  const f = FORMATS[dtype];
  const flip = (b: number): number => (b & f.sign ? b - f.sign : b + f.sign);
  const mag = bits & f.mag;
  if (mag > f.inf) return bits;
  return flip(nextUpBits(flip(bits), dtype));
}

/** True when the raw bits encode a finite value. */
export function isFiniteBits(bits: number, dtype: NarrowDtype): boolean {
  const f = FORMATS[dtype];
  return (bits & f.mag) < f.inf;
}

// ---------------------------------------------------------------- float64 as (hi, lo) words

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const F64_INF_HI = 0x7ff00000;
const F64_MAX_HI = 0x7fefffff;

/** Steps the float64 held in words[k+LO], words[k+HI] in place; returns false when it is non-finite. */
function stepF64Words(src: Uint32Array, dst: Uint32Array, k: number, dir: number): boolean {
  const hi = src[k + HI] as number;
  const lo = src[k + LO] as number;
  const magHi = hi & 0x7fffffff;
  if (magHi >= F64_INF_HI) {
    dst[k + HI] = hi;
    dst[k + LO] = lo;
    return false;
  }
  const neg = hi !== magHi;
  const isZero = magHi === 0 && lo === 0;
  if (isZero) {
    dst[k + HI] = signFromZero(neg, dir) ? 0x80000000 : 0;
    dst[k + LO] = 1;
    return true;
  }
  const isMax = magHi === F64_MAX_HI && lo === 0xffffffff;
  let nHi = magHi,
    nLo: number;
  if (growsMagnitude(neg, isMax, dir)) {
    nLo = (lo + 1) >>> 0;
    if (nLo === 0) nHi += 1;
  } else {
    nLo = (lo - 1) >>> 0;
    if (lo === 0) nHi -= 1;
  }
  dst[k + HI] = neg ? (nHi | 0x80000000) >>> 0 : nHi;
  dst[k + LO] = nLo;
  return true;
}

const scratchF64 = new Float64Array(1);
const scratchW64 = new Uint32Array(scratchF64.buffer);
const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

function toBits(value: number, dtype: NarrowDtype): number {
  let bits: number;
  let back: number;
  if (dtype === 'float32') {
    scratchF32[0] = value;
    bits = scratchU32[0] as number;
    back = scratchF32[0] as number;
  } else if (dtype === 'float16') {
    bits = numberToHalf(value);
    back = halfToNumber(bits);
  } else {
    bits = numberToBfloat16(value);
    back = bfloat16ToNumber(bits);
  }
  if (!(Object.is(back, value) || (Number.isNaN(value) && Number.isNaN(back)))) {
    throw new RangeError(`ulp: ${value} is not representable in ${dtype}`);
  }
  return bits;
}

function fromBits(bits: number, dtype: NarrowDtype): number {
  if (dtype === 'float16') return halfToNumber(bits);
  if (dtype === 'bfloat16') return bfloat16ToNumber(bits);
  scratchU32[0] = bits;
  return scratchF32[0] as number;
}

function valueOp(
  value: number,
  dtype: FloatDtype,
  narrow: (bits: number, d: NarrowDtype) => number,
  wide: (v: number) => number,
): number {
  return dtype === 'float64' ? wide(value) : fromBits(narrow(toBits(value, dtype), dtype), dtype);
}

function nextUpF64(value: number): number {
  if (Number.isNaN(value) || value === Infinity) return value;
  if (value === -Infinity) return -Number.MAX_VALUE;
  if (value === 0) return Number.MIN_VALUE;
  scratchF64[0] = value;
  const neg = value < 0;
  stepF64Words(scratchW64, scratchW64, 0, neg ? DIR_TOWARD : DIR_AWAY);
  if (!neg && value === Number.MAX_VALUE) return Infinity;
  return scratchF64[0] as number;
}

/** IEEE nextUp of a value representable in `dtype` (RangeError otherwise). */
export function nextUp(value: number, dtype: FloatDtype): number {
  return valueOp(value, dtype, nextUpBits, nextUpF64);
}

/** IEEE nextDown of a value representable in `dtype` (RangeError otherwise). */
export function nextDown(value: number, dtype: FloatDtype): number {
  return valueOp(value, dtype, nextDownBits, (v) => -nextUpF64(-v));
}

/** U's one-ULP step of a value representable in `dtype`; non-finite values are returned unchanged. */
export function stepUlp(value: number, dtype: FloatDtype, direction: UlpDirection): number {
  const dir = dirCode(direction);
  return valueOp(
    value,
    dtype,
    (b, d) => stepNarrow(b, FORMATS[d], dir),
    (v) => {
      scratchF64[0] = v;
      stepF64Words(scratchW64, scratchW64, 0, dir);
      return scratchF64[0] as number;
    },
  );
}

// ---------------------------------------------------------------- tensors

export interface UlpTensorResult {
  readonly tensor: FloatTensor;
  /** Elements left unchanged because they are ±Inf or NaN. */
  readonly nonFinite: number;
}

/** Steps 32-bit words in place; returns the number of non-finite words (left unchanged). */
function step32(data: Float32Array, dir: number): number {
  let nonFinite = 0;
  if (dir === DIR_AWAY) {
    // Fast path for the default direction, on an Int32Array view (values stay small integers for the
    // JIT): adding one to the raw pattern grows the magnitude whatever the sign, unless it is max finite.
    const w = new Int32Array(data.buffer, data.byteOffset, data.length);
    const n = w.length;
    for (let i = 0; i < n; i++) {
      const b = w[i] as number;
      const m = b & 0x7fffffff;
      if (m < 0x7f7fffff) w[i] = b + 1;
      else if (m === 0x7f7fffff) w[i] = b - 1;
      else nonFinite++;
    }
    return nonFinite;
  }
  const w = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const n = w.length;
  const f = FORMATS.float32;
  for (let i = 0; i < n; i++) {
    const b = w[i] as number;
    const r = stepNarrow(b, f, dir);
    if (r === b) nonFinite++;
    else w[i] = r;
  }
  return nonFinite;
}

/** Steps 16-bit words in place; returns the number of non-finite words (left unchanged). */
function step16(w: Uint16Array, f: BitFormat, dir: number): number {
  const n = w.length;
  let nonFinite = 0;
  for (let i = 0; i < n; i++) {
    const b = w[i] as number;
    const r = stepNarrow(b, f, dir);
    if (r === b) nonFinite++;
    else w[i] = r;
  }
  return nonFinite;
}

/** A new tensor (own buffer, same dtype and shape) with every finite element stepped by one ULP. */
export function stepTensorUlp(t: FloatTensor, direction: UlpDirection): UlpTensorResult {
  const shape = [...t.shape];
  // Fast path: WebAssembly SIMD kernels (kernels/simd-ulp.ts), bit-identical to the scalar loops below.
  switch (t.dtype) {
    case 'float32': {
      const r = simdStepUlp(t.data, 'float32', direction);
      if (r !== undefined) return { tensor: { dtype: 'float32', shape, data: r.data }, nonFinite: r.nonFinite };
      break;
    }
    case 'float64': {
      const r = simdStepUlp(t.data, 'float64', direction);
      if (r !== undefined) return { tensor: { dtype: 'float64', shape, data: r.data }, nonFinite: r.nonFinite };
      break;
    }
    case 'float16':
    case 'bfloat16': {
      const r = simdStepUlp(t.data, t.dtype, direction);
      if (r !== undefined) return { tensor: { dtype: t.dtype, shape, data: r.data }, nonFinite: r.nonFinite };
      break;
    }
  }
  const dir = dirCode(direction);
  // Copy the bytes (memcpy), then step the words in place.
  switch (t.dtype) {
    case 'float32': {
      const data = t.data.slice();
      const nonFinite = step32(data, dir);
      return { tensor: { dtype: 'float32', shape, data }, nonFinite };
    }
    case 'float64': {
      const data = t.data.slice();
      const w = new Uint32Array(data.buffer);
      let nonFinite = 0;
      for (let k = 0; k < w.length; k += 2) if (!stepF64Words(w, w, k, dir)) nonFinite++;
      return { tensor: { dtype: 'float64', shape, data }, nonFinite };
    }
    case 'float16':
    case 'bfloat16': {
      const data = t.data.slice();
      const nonFinite = step16(data, FORMATS[t.dtype], dir);
      return { tensor: { dtype: t.dtype, shape, data }, nonFinite };
    }
  }
}
