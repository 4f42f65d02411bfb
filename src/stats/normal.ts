/**
 * Standard normal distribution: CDF, upper tail, density and quantile.
 *
 * Definitions followed:
 * - `normalCdf(x) = Φ(x) = ½·erfc(−x/√2)` and `normalSf(x) = 1 − Φ(x) = ½·erfc(x/√2)`, with `erfc` the
 *   rational approximation of fdlibm `s_erf.c` (Sun Microsystems, 1993; freely usable with notice),
 *   accurate to under 1 ulp of erfc, and x/√2 carried in double-double. The absolute error of Φ is about
 *   1e-16 and the relative error of either tail about 1e-15 down to the underflow limit; the upper tail is
 *   computed directly, never as `1 − Φ`.
 * - `normalQuantile(p) = Φ⁻¹(p)` by Wichura's algorithm AS 241 (PPND16, Appl. Statist. 37:477–484, 1988),
 *   relative accuracy about 1e-16 over (0, 1).
 *
 * Degenerate inputs: Φ(±∞) = 1 / 0; Φ(NaN) = NaN. `normalQuantile(0) = −∞`, `normalQuantile(1) = +∞`;
 * a probability outside [0, 1] (or NaN) throws E_STATS_DOMAIN naming the argument.
 */
import { domainError } from '../core/index.js';

// fdlibm s_erf.c coefficients.
const ERX = 8.45062911510467529297e-1;
const PP = [
  1.28379167095512558561e-1, -3.2504210724700149937e-1, -2.84817495755985104766e-2, -5.77027029648944159157e-3,
  -2.37630166566501626084e-5,
] as const;
const QQ = [
  3.97917223959155352819e-1, 6.50222499887672944485e-2, 5.08130628187576562776e-3, 1.32494738004321644526e-4,
  -3.9602282787753681232e-6,
] as const;
const PA = [
  -2.36211856075265944077e-3, 4.14856118683748331666e-1, -3.72207876035701323847e-1, 3.18346619901161753674e-1,
  -1.10894694282396677476e-1, 3.54783043256182359371e-2, -2.166375594868790843e-3,
] as const;
const QA = [
  1.06420880400844228286e-1, 5.40397917702171048937e-1, 7.18286544141962662868e-2, 1.26171219808761642112e-1,
  1.36370839120290507362e-2, 1.1984499846799107417e-2,
] as const;
const RA = [
  -9.86494403484714822705e-3, -6.93858572707181764372e-1, -1.05586262253232909814e1, -6.23753324503260060396e1,
  -1.62396669462573470355e2, -1.84605092906711035994e2, -8.12874355063065934246e1, -9.81432934416914548592,
] as const;
const SA = [
  1.96512716674392571292e1, 1.376577541435190426e2, 4.34565877475229228821e2, 6.45387271733267880336e2,
  4.29008140027567833386e2, 1.08635005541779435134e2, 6.57024977031928170135, -6.04244152148580987438e-2,
] as const;
const RB = [
  -9.86494292470009928597e-3, -7.99283237680523006574e-1, -1.77579549177547519889e1, -1.60636384855821916062e2,
  -6.37566443368389627722e2, -1.02509513161107724954e3, -4.83519191608651397019e2,
] as const;
const SB = [
  3.03380607434824582924e1, 3.25792512996573918826e2, 1.53672958608443695994e3, 3.19985821950859553908e3,
  2.55305040643316442583e3, 4.74528541206955367215e2, -2.24409524465858183362e1,
] as const;

/** Horner evaluation of c[0] + c[1]·x + … + c[k]·x^k. */
function poly(c: readonly number[], x: number): number {
  let acc = 0;
  for (let i = c.length - 1; i >= 0; i--) acc = acc * x + (c[i] as number);
  return acc;
}

/** 1 + c[0]·x + c[1]·x² + … */
function poly1(c: readonly number[], x: number): number {
  return 1 + x * poly(c, x);
}

const scratch = new DataView(new ArrayBuffer(8));
/** x with the low 32 bits of its IEEE-754 representation cleared (fdlibm's SET_LOW_WORD(z, 0)). */
function truncateLowWord(x: number): number {
  scratch.setFloat64(0, x);
  scratch.setUint32(4, 0);
  return scratch.getFloat64(0);
}

/** Complementary error function erfc(x) = 1 − erf(x) (fdlibm algorithm). */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x === Infinity) return 0;
  if (x === -Infinity) return 2;
  const ax = Math.abs(x);
  if (ax < 0.84375) {
    if (ax < 2 ** -56) return 1 - x;
    const z = x * x;
    const y = (PP[0] + z * (PP[1] + z * (PP[2] + z * (PP[3] + z * PP[4])))) / poly1(QQ, z);
    if (x < 0.25) return 1 - (x + x * y);
    return 0.5 - (x * y + (x - 0.5));
  }
  if (ax < 1.25) {
    const s = ax - 1;
    const pq = poly(PA, s) / poly1(QA, s);
    return x >= 0 ? 1 - ERX - pq : 1 + ERX + pq;
  }
  if (ax < 28) {
    if (x < 0 && ax >= 6) return 2;
    const s = 1 / (ax * ax);
    const rs = ax < 1 / 0.35 ? poly(RA, s) / poly1(SA, s) : poly(RB, s) / poly1(SB, s);
    const z = truncateLowWord(ax);
    const r = Math.exp(-z * z - 0.5625) * Math.exp((z - ax) * (z + ax) + rs);
    return x > 0 ? r / ax : 2 - r / ax;
  }
  return x > 0 ? 0 : 2;
}

/** Error function erf(x) = 1 − erfc(x); accurate in absolute terms (use erfc for tails). */
export function erf(x: number): number {
  return 1 - erfc(x);
}

// √½ = SQRT1_2_HI + SQRT1_2_LO to about 2^-106.
const SQRT1_2_HI = Math.SQRT1_2;
const SQRT1_2_LO = -4.833646656726457e-17;
const SPLITTER = 134217729; // 2^27 + 1 (Dekker)
const TWO_OVER_SQRT_PI = 1.1283791670955126;

/**
 * ½·erfc(x/√2) with the scaling done in double-double: u = x/√2 = hi + lo, then
 * erfc(hi + lo) ≈ erfc(hi) − lo·(2/√π)·exp(−hi²). Without this the rounding of x/√2 alone costs a relative
 * error of about x²·2⁻⁵³ deep in the tail (≈1.6e-13 at x = 38).
 */
function halfErfcScaled(x: number): number {
  if (!Number.isFinite(x)) return 0.5 * erfc(x);
  const hi = x * SQRT1_2_HI;
  // Dekker two-product: x·SQRT1_2_HI = hi + err exactly.
  const xs = SPLITTER * x;
  const xh = xs - (xs - x);
  const xl = x - xh;
  const cs = SPLITTER * SQRT1_2_HI;
  const ch = cs - (cs - SQRT1_2_HI);
  const cl = SQRT1_2_HI - ch;
  const err = xh * ch - hi + xh * cl + xl * ch + xl * cl;
  const lo = err + x * SQRT1_2_LO;
  // First-order Taylor step: erfc(hi + lo) = erfc(hi) − lo·(2/√π)·exp(−hi²) + O(hi·lo²·exp(−hi²)).
  return 0.5 * (erfc(hi) - lo * TWO_OVER_SQRT_PI * Math.exp(-hi * hi));
}

/** Φ(x), the standard normal CDF. */
export function normalCdf(x: number): number {
  return halfErfcScaled(-x);
}

/** 1 − Φ(x), the standard normal upper tail, computed without cancellation. */
export function normalSf(x: number): number {
  return halfErfcScaled(x);
}

/** φ(x), the standard normal density. */
export function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
}

// Wichura AS 241 (PPND16) coefficients.
const A = [
  3.387132872796366608, 1.3314166789178437745e2, 1.9715909503065514427e3, 1.3731693765509461125e4,
  4.5921953931549871457e4, 6.7265770927008700853e4, 3.3430575583588128105e4, 2.5090809287301226727e3,
] as const;
const B = [
  4.2313330701600911252e1, 6.871870074920579083e2, 5.3941960214247511077e3, 2.1213794301586595867e4,
  3.930789580009271061e4, 2.8729085735721942674e4, 5.226495278852854561e3,
] as const;
const C = [
  1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504, 1.27045825245236838258,
  2.4178072517745061177e-1, 2.27238449892691845833e-2, 7.7454501427834140764e-4,
] as const;
const D = [
  2.05319162663775882187, 1.6763848301838038494, 6.8976733498510000455e-1, 1.4810397642748007459e-1,
  1.51986665636164571966e-2, 5.475938084995344946e-4, 1.05075007164441684324e-9,
] as const;
const E = [
  6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 2.9656057182850489123e-1,
  2.6532189526576123093e-2, 1.2426609473880784386e-3, 2.71155556874348757815e-5, 2.01033439929228813265e-7,
] as const;
const F = [
  5.9983220655588793769e-1, 1.3692988092273580531e-1, 1.48753612908506148525e-2, 7.868691311456132591e-4,
  1.8463183175100546818e-5, 1.4215117583164458887e-7, 2.04426310338993978564e-15,
] as const;

/** Φ⁻¹(p), the standard normal quantile (AS 241). */
export function normalQuantile(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) domainError('p', `probability must lie in [0, 1], got ${p}`);
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (q * poly(A, r)) / poly1(B, r);
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let x: number;
  if (r <= 5) {
    r -= 1.6;
    x = poly(C, r) / poly1(D, r);
  } else {
    r -= 5;
    x = poly(E, r) / poly1(F, r);
  }
  return q < 0 ? -x : x;
}

/**
 * The critical value z with P(Z > z) = tail, i.e. Φ⁻¹(1 − tail), computed as −Φ⁻¹(tail) so that small
 * tails keep full precision. Throws when tail is outside (0, 1).
 */
export function upperCriticalValue(tail: number): number {
  if (Number.isNaN(tail) || tail <= 0 || tail >= 1)
    domainError('tail', `tail probability must lie in (0, 1), got ${tail}`);
  return -normalQuantile(tail);
}
