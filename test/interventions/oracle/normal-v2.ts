/**
 * FROZEN TEST ORACLE — a verbatim copy of src/interventions/normal-v2.ts as first written (T_μ version 2's
 * exactly specified ziggurat). src/interventions/resample-v2.ts must reproduce it bit for bit
 * (test/interventions/v2.test.ts). Do not optimise or edit this copy.
 */
/**
 * The ziggurat of T_μ version 2 (resample-v2.ts): the Marsaglia–Tsang 128-layer ziggurat of normal.ts, made
 * reproducible bit for bit on any IEEE-754 binary64 engine, not only on engines whose Math.exp / Math.log
 * round alike.
 *
 * Version 1 (normal.ts) builds its tables and its tail/wedge tests with Math.exp and Math.log, which ECMA-262
 * leaves implementation-approximated: its draws are reproducible wherever those functions give the same bits
 * (V8 ships its own fdlibm port, so every V8 does), not on every engine. Version 2 uses `detExp` and `detLog`
 * below instead: fixed sequences of +, −, ×, ÷ (correctly rounded in JS and WebAssembly), Math.round of a
 * double (exact) and exponent-field bit manipulation, so their results are the same on every conforming
 * engine. Both are accurate to a few units in the last place, far below float32 rounding; what matters here
 * is that they are exactly specified. The tables also use Math.sqrt, which V8 and WebAssembly (f64.sqrt)
 * compute correctly rounded; `ZIGGURAT_V2_DIGEST` (test/interventions/v2.test.ts) pins the tables' bits.
 *
 * Draw from uint32 u (as version 1): layer iz = u & 127, abscissa hz = (u as int32) >> 7; fast path
 * |hz| < kn[iz] → z = hz · wn[iz]. Otherwise `slowPathV2` runs the general ziggurat, its extra uniforms
 * drawn from a separate source (T_μ v2: the parent Prng), so the fast path over a whole latent can run in one
 * tight loop over the lane-interleaved draws of PrngX4.
 */

const LAYERS = 128;
const R = 3.442619855899;
const V = 9.91256303526217e-3;
const SCALE = 2 ** 24; // |hz| ≤ 2^24

const LN2_HI = 6.93147180369123816490e-1; // fdlibm: low 32 bits zero, so k·LN2_HI is exact for |k| < 2^20
const LN2_LO = 1.90821492927058770002e-10;
const INV_LN2 = 1.44269504088896338700;
const SQRT2 = 1.4142135623730951;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer); // little-endian hosts (the wasm path's requirement too): [lo, hi]
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** 2^k for integers −1022 ≤ k ≤ 1023, built from its bits. */
function pow2(k: number): number {
  u32[HI] = (k + 1023) << 20;
  u32[1 - HI] = 0;
  return f64[0] as number;
}

/** EXP_C[j] = 1/j! for j = 0 … 16, each the double nearest to EXP_C[j − 1] / j (from EXP_C[0] = 1). */
const EXP_C = new Float64Array(17);
EXP_C[0] = 1;
for (let j = 1; j <= 16; j++) EXP_C[j] = (EXP_C[j - 1] as number) / j;
/** LOG_C[j] = 1/(2j + 1) for j = 1 … 12 (LOG_C[0] unused). */
const LOG_C = new Float64Array(13);
for (let j = 1; j <= 12; j++) LOG_C[j] = 1 / (2 * j + 1);

/**
 * e^x for −700 ≤ x ≤ 700, exactly specified: k = round(x / ln 2), r = (x − k·ln2_hi) − k·ln2_lo,
 * e^r = Σ_{j=0..16} EXP_C[j]·r^j in Horner form, p = EXP_C[16], p = p·r + EXP_C[j] for j = 15 … 0
 * (|r| ≤ 0.35: truncation < 1e-21), times 2^k.
 */
export function detExp(x: number): number {
  if (!(x >= -700 && x <= 700)) throw new RangeError(`detExp: x=${x} outside [-700, 700]`);
  const k = Math.round(x * INV_LN2);
  const r = (x - k * LN2_HI) - k * LN2_LO;
  let p = EXP_C[16] as number;
  for (let j = 15; j >= 0; j--) p = p * r + (EXP_C[j] as number);
  return p * pow2(k);
}

/**
 * ln x for positive normal x, exactly specified: x = m·2^e with m in [√½, √2), s = (m − 1)/(m + 1),
 * ln m = 2s + 2s·p with p = Σ_{j=1..12} LOG_C[j]·s^{2j} in Horner form (p = 0; p = s²·(LOG_C[j] + p) for
 * j = 12 … 1; |s| ≤ 0.1716: truncation < 1e-20), result e·ln2_hi + (e·ln2_lo + ln m).
 */
export function detLog(x: number): number {
  if (!(x >= 2.2250738585072014e-308 && x < Infinity)) throw new RangeError(`detLog: x=${x} is not a positive normal number`);
  f64[0] = x;
  const hi = u32[HI] as number;
  let e = ((hi >>> 20) & 0x7ff) - 1023;
  u32[HI] = (hi & 0x000fffff) | 0x3ff00000; // m in [1, 2)
  let m = f64[0] as number;
  if (m >= SQRT2) {
    m *= 0.5; // exact
    e += 1;
  }
  const s = (m - 1) / (m + 1);
  const s2 = s * s;
  let p = 0;
  for (let j = 12; j >= 1; j--) p = s2 * ((LOG_C[j] as number) + p);
  const lnm = 2 * s + 2 * s * p;
  return e * LN2_HI + (e * LN2_LO + lnm);
}

/** Layer tables (as normal.ts, built with detExp/detLog): accept |hz| < kn[iz], value hz · wn[iz]. */
export const ZIG_KN = new Float64Array(LAYERS);
export const ZIG_WN = new Float64Array(LAYERS);
export const ZIG_FN = new Float64Array(LAYERS);
(() => {
  let dn = R;
  let tn = dn;
  const q = V / detExp(-0.5 * dn * dn);
  ZIG_KN[0] = (dn / q) * SCALE;
  ZIG_KN[1] = 0;
  ZIG_WN[0] = q / SCALE;
  ZIG_WN[LAYERS - 1] = dn / SCALE;
  ZIG_FN[0] = 1;
  ZIG_FN[LAYERS - 1] = detExp(-0.5 * dn * dn);
  for (let i = LAYERS - 2; i >= 1; i--) {
    dn = Math.sqrt(-2 * detLog(V / dn + detExp(-0.5 * dn * dn)));
    ZIG_KN[i + 1] = (dn / tn) * SCALE;
    tn = dn;
    ZIG_FN[i] = detExp(-0.5 * dn * dn);
    ZIG_WN[i] = dn / SCALE;
  }
})();

/** Where the slow path's extra uniforms come from (a Prng). */
export interface UniformSourceV2 {
  nextUint32(): number;
  nextFloat(): number;
}

/** The fast-path value of draw u, or NaN when u needs the slow path. */
export function zigFast(u: number): number {
  const iz = u & 127;
  const hz = (u | 0) >> 7;
  return Math.abs(hz) < (ZIG_KN[iz] as number) ? hz * (ZIG_WN[iz] as number) : NaN;
}

/**
 * The general ziggurat for a draw u whose fast path failed (as normal.ts's slowPath, with detExp/detLog):
 * the base strip's tail (Marsaglia 1964) for layer 0, the wedge test otherwise, then fresh draws from `src`.
 */
export function zigSlow(src: UniformSourceV2, u: number): number {
  let iz = u & 127;
  let hz = (u | 0) >> 7;
  for (;;) {
    const x = hz * (ZIG_WN[iz] as number);
    if (iz === 0) {
      let xx: number, y: number;
      do {
        xx = -detLog(1 - src.nextFloat()) / R;
        y = -detLog(1 - src.nextFloat());
      } while (y + y < xx * xx);
      return hz > 0 ? R + xx : -R - xx;
    }
    const f0 = ZIG_FN[iz] as number;
    if (f0 + src.nextFloat() * ((ZIG_FN[iz - 1] as number) - f0) < detExp(-0.5 * x * x)) return x;
    const v = src.nextUint32();
    iz = v & 127;
    hz = (v | 0) >> 7;
    if (Math.abs(hz) < (ZIG_KN[iz] as number)) return hz * (ZIG_WN[iz] as number);
  }
}
