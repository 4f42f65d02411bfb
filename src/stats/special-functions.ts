/**
 * Special functions behind the exact binomial machinery: log-gamma, log-beta, log-binomial
 * coefficients, the regularized incomplete beta function I_x(a, b) and its inverse.
 *
 * Definitions.
 * - logGamma(x) = ln Γ(x) for x > 0. Series for ln Γ(1+z), ln Γ(2+z) (|z| ≤ ½, via ζ(k)−1) near the
 *   zeros at 1 and 2, exact downward recurrence on [2.5, 10), Stirling with a 10-term Bernoulli
 *   correction for x ≥ 10. Relative error ≈ 1e-15 (absolute ≈ 1e-16 next to the zeros at 1 and 2).
 * - logBeta(a, b) = ln B(a, b), with the Stirling corrections split off for large arguments
 *   (the algorithm of R's lbeta), so that ln B(5, 1e7) keeps full relative precision.
 * - logChoose(n, k) = ln C(n, k) = −ln(n+1) − ln B(k+1, n−k+1), for real 0 ≤ k ≤ n.
 * - I_x(a, b) = B(x; a, b)/B(a, b), on the side x < (a+1)/(a+b+2) (the other side by the symmetry
 *   I_x(a, b) = 1 − I_{1−x}(b, a)) as prefactor·h with prefactor = x^a(1−x)^b/(a·B(a, b)) and h the
 *   continued fraction (modified Lentz). The prefactor is Loader's saddle-point form (stirlerr and
 *   the deviance bd0, saddle points n·x, n·y as double-doubles), so a, b up to 1e7 cost no
 *   cancellation of ~1e8-sized logs. The continued fraction loses ≈ h·ε (h ≈ √(ab/(a+b)) near the
 *   mean), so where h > 32 the same value is summed as positive terms instead: the finite sum for an
 *   integer b (b terms), else the series Σ_j prefactor(a+j, b) (≈10h terms). Both tails are returned
 *   in log space, so neither underflows nor is lost to 1 − (value close to 1). Precision (checked
 *   against 40-digit mpmath): relative error ≤ 2ε·(|ln I| + 30), i.e. ≈1e-14 for I ≥ 1e-20, for
 *   a, b ≥ ½ up to 1e7 (every binomial and Clopper–Pearson use has a, b ≥ 1); smaller a, b are
 *   computed, the complement possibly losing a few digits.
 * - inverseRegularizedIncompleteBeta(p, a, b) = the x with I_x(a, b) = p; the complement variant
 *   solves 1 − I_x(a, b) = q, so that a tiny upper-tail probability is never rounded through 1 − q.
 *   Safeguarded Newton on ln(tail) in ln x or ln(1 − x) with a shrinking bisection bracket, converged
 *   to about one ulp (checked against 40-digit roots to 1e-14).
 *
 * Degenerate input: x = 0 gives I = 0 and x = 1 gives I = 1; p = 0 and p = 1 invert to 0 and 1.
 * Non-finite or out-of-domain arguments throw E_STATS_DOMAIN naming the argument. Pure, no I/O.
 */
import { ImepError, domainError } from '../core/index.js';

const LN_SQRT_2PI = 0.9189385332046728; // ln √(2π)
const LN_2PI = 1.8378770664093453;
const EULER_GAMMA = 0.5772156649015329;

/** ζ(k) − 1 for k = 2..30 (computed with mpmath at 40 digits). */
const ZETA_MINUS_ONE: readonly number[] = [
  0.6449340668482264, 0.2020569031595943, 0.08232323371113819, 0.03692775514336993, 0.01734306198444914,
  0.008349277381922827, 0.00407735619794434, 0.0020083928260822143, 0.0009945751278180853, 0.0004941886041194645,
  0.0002460865533080483, 0.00012271334757848915, 6.124813505870483e-5, 3.058823630702049e-5, 1.528225940865187e-5,
  7.637197637899763e-6, 3.81729326499984e-6, 1.908212716553939e-6, 9.539620338727962e-7, 4.769329867878064e-7,
  2.38450502727733e-7, 1.1921992596531106e-7, 5.960818905125948e-8, 2.980350351465228e-8, 1.4901554828365043e-8,
  7.45071178983543e-9, 3.725334024788457e-9, 1.862659723513049e-9, 9.313274324196682e-10,
];

/** B_{2k} / (2k(2k−1)), k = 1..10: the Stirling-series coefficients. */
const STIRLING: readonly number[] = [
  1 / 12,
  -1 / 360,
  1 / 1260,
  -1 / 1680,
  1 / 1188,
  -691 / 360360,
  1 / 156,
  -3617 / 122400,
  43867 / 244188,
  -174611 / 125400,
];

function checkPositive(field: string, v: number): void {
  if (!(v > 0) || !Number.isFinite(v)) domainError(field, `${field} must be a finite number > 0, got ${v}`);
}

/** Σ_{k≥2} (−1)^k (ζ(k)−1) z^k / k for |z| ≤ ½; equals ln Γ(2+z) − (1−γ)z. */
function zetaSeries(z: number): number {
  let s = 0;
  for (let i = ZETA_MINUS_ONE.length - 1; i >= 0; i--) {
    const k = i + 2;
    const sign = k % 2 === 0 ? 1 : -1;
    s = s * z + (sign * (ZETA_MINUS_ONE[i] as number)) / k;
  }
  return s * z * z;
}

/** ln Γ(2 + z), |z| ≤ ½. */
function lgamma2p(z: number): number {
  return z * (1 - EULER_GAMMA) + zetaSeries(z);
}

/** ln Γ(1 + z), |z| ≤ ½. */
function lgamma1p(z: number): number {
  return lgamma2p(z) - Math.log1p(z);
}

/** Stirling correction ln Γ(x) − [(x−½) ln x − x + ln √(2π)] for x ≥ 10 (10 terms, abs error < 1e-19). */
function lgammaCorrection(x: number): number {
  const r = 1 / x;
  const r2 = r * r;
  let s = 0;
  for (let i = STIRLING.length - 1; i >= 0; i--) s = s * r2 + (STIRLING[i] as number);
  return s * r;
}

/** ln Γ(x) for x > 0 (x = +∞ gives +∞). */
export function logGamma(x: number): number {
  if (x === Infinity) return Infinity;
  checkPositive('x', x);
  if (x < 0.5) return lgamma1p(x) - Math.log(x);
  if (x < 1.5) return lgamma1p(x - 1);
  if (x < 2.5) return lgamma2p(x - 2);
  if (x < 10) {
    let prod = 1;
    let y = x;
    while (y >= 2.5) {
      y -= 1; // exact: y ≥ 1.5 keeps the result on the finer grid
      prod *= y;
    }
    return lgamma2p(y - 2) + Math.log(prod);
  }
  return (x - 0.5) * Math.log(x) - x + LN_SQRT_2PI + lgammaCorrection(x);
}

/** ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a+b), a, b > 0. */
export function logBeta(a: number, b: number): number {
  checkPositive('a', a);
  checkPositive('b', b);
  const p = Math.min(a, b);
  const q = Math.max(a, b);
  if (p >= 10) {
    const corr = lgammaCorrection(p) + lgammaCorrection(q) - lgammaCorrection(p + q);
    const r = p / (p + q);
    return -0.5 * Math.log(q) + LN_SQRT_2PI + corr + (p - 0.5) * Math.log(r) + q * Math.log1p(-r);
  }
  if (q >= 10) {
    const corr = lgammaCorrection(q) - lgammaCorrection(p + q);
    return logGamma(p) + corr + p - p * Math.log(p + q) + (q - 0.5) * Math.log1p(-p / (p + q));
  }
  return logGamma(p) + (logGamma(q) - logGamma(p + q));
}

/** ln C(n, k) for real 0 ≤ k ≤ n. */
export function logChoose(n: number, k: number): number {
  if (!Number.isFinite(n) || n < 0) domainError('n', `n must be a finite number ≥ 0, got ${n}`);
  if (!Number.isFinite(k) || k < 0 || k > n) domainError('k', `k must lie in [0, n=${n}], got ${k}`);
  if (k === 0 || k === n) return 0;
  return -Math.log1p(n) - logBeta(k + 1, n - k + 1);
}

/**
 * Loader's Stirling error ln Γ(n+1) − [(n+½) ln n − n + ln √(2π)] for n > 0. For n ≥ 10 the Stirling
 * series; on [1, 10) an upward shift whose increments δ(m) = Σ u^{2j}/(2j+1), u = 1/(2m+1), are all
 * positive (no cancellation); below 1 the definition.
 */
export function stirlerr(n: number): number {
  if (n >= 10) return lgammaCorrection(n);
  if (n >= 1) {
    let sum = 0;
    let m = n;
    while (m < 10) {
      const u = 1 / (2 * m + 1);
      const u2 = u * u;
      let term = u2;
      let d = 0;
      for (let j = 1; j < 60; j++) {
        const add = term / (2 * j + 1);
        d += add;
        if (add < d * 1e-17) break;
        term *= u2;
      }
      sum += d;
      m += 1;
    }
    return sum + lgammaCorrection(m);
  }
  return logGamma(n + 1) - (n + 0.5) * Math.log(n) + n - LN_SQRT_2PI;
}

/**
 * Deviance term bd0(x, M) = x ln(x/M) + M − x ≥ 0 for M = m + mLo (a double-double, mLo optional),
 * computed without cancellation: Loader's series in v = (x − M)/(x + M) for |v| < ½ (its terms after
 * the first are at most |v|/3 of it, where R stops at |v| < 0.1 and loses ~1 digit to x ln(x/M) + M − x).
 */
export function bd0(x: number, m: number, mLo = 0): number {
  if (Math.abs(x - m) < 0.5 * (x + m)) {
    const diff = x - m - mLo; // x − m is exact here (Sterbenz)
    const v = diff / (x + m);
    let s = diff * v;
    let ej = 2 * x * v;
    const v2 = v * v;
    for (let j = 1; j < 1000; j++) {
      ej *= v2;
      const s1 = s + ej / (2 * j + 1);
      if (s1 === s) return s1;
      s = s1;
    }
    return s;
  }
  const ratio = x / m;
  if (ratio > 0 && ratio < Infinity) return x * Math.log(ratio) + (m - x) + mLo * (1 - ratio);
  return x * (Math.log(x) - Math.log(m)) + (m - x); // m subnormal: x/m overflows
}

const SPLITTER = 134217729; // 2^27 + 1 (Dekker)
let productLo = 0;

/** Dekker's exact product: returns fl(p·q) and leaves the rounding error p·q − fl(p·q) in productLo. */
function twoProduct(p: number, q: number): number {
  const prod = p * q;
  let t = SPLITTER * p;
  const ph = t - (t - p);
  const pl = p - ph;
  t = SPLITTER * q;
  const qh = t - (t - q);
  const ql = q - qh;
  productLo = ph * qh - prod + ph * ql + pl * qh + pl * ql;
  return prod;
}

/**
 * ln[ Γ(a+b+1)/(Γ(a+1)Γ(b+1)) · x^a y^b ] for a, b > 0, 0 < x < 1, x + y = 1: Loader's saddle-point
 * form of the binomial kernel. Of x and y = fl(1 − x) (or x = fl(1 − y)) the smaller is exact and the
 * larger is completed to 1 − smaller; the saddle points n·x and n·y are carried as double-doubles, so
 * the far tails keep ≈1e-15 relative precision for n up to 1e7.
 */
export function logBinomialKernel(a: number, b: number, x: number, y: number): number {
  const n = a + b;
  const mx = twoProduct(n, x);
  let mxLo = productLo;
  const my = twoProduct(n, y);
  let myLo = productLo;
  if (x <= y) myLo += n * (1 - y - x);
  else mxLo += n * (1 - x - y);
  const lc = stirlerr(n) - stirlerr(a) - stirlerr(b) - bd0(a, mx, mxLo) - bd0(b, my, myLo);
  const lf = LN_2PI + Math.log(a) + Math.log(b) - Math.log(n);
  return lc - 0.5 * lf;
}

/** ln[x^a y^b / (a·B(a, b))]: the continued fraction's prefactor. */
function logCfPrefactor(a: number, b: number, x: number, y: number): number {
  return Math.log(b / (a + b)) + logBinomialKernel(a, b, x, y);
}

const CF_TINY = 1e-300;
const CF_EPS = 2.3e-16;

/**
 * The continued fraction's value h, with I_x(a, b) = prefactor · h; valid for x < (a+1)/(a+b+2).
 * Its first denominator 1 + d₁/(…) cancels by a factor ≈ h, so the relative error is ≈ h·ε.
 */
function continuedFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < CF_TINY) d = CF_TINY;
  d = 1 / d;
  let h = d;
  const maxIter = 20000 + Math.ceil(20 * Math.sqrt(Math.max(a, b)));
  for (let m = 1; m <= maxIter; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < CF_TINY) d = CF_TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < CF_TINY) c = CF_TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < CF_TINY) d = CF_TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < CF_TINY) c = CF_TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < CF_EPS) return h;
  }
  throw new ImepError('E_INTERNAL', `incomplete beta continued fraction did not converge (x=${x}, a=${a}, b=${b})`);
}

/** Above this continued-fraction value the positive series is used instead (error ≈ h·ε otherwise). */
const SERIES_FROM_H = 32;
/** Beyond this value the series would be too long (≈ 10·h terms); the continued fraction is kept. */
const SERIES_UP_TO_H = 20000;
/** The series re-anchors its running product on the exact term every this many terms. */
const SERIES_ANCHOR = 64;

/**
 * Σ_{j≥0} x^{a+j} y^b / ((a+j)·B(a+j, b)) / prefactor(a, b) — the all-positive series
 * I_x(a, b) = Σ_j prefactor(a+j, b) (from I_x(a, b) = I_x(a+1, b) + prefactor(a, b)), summed with
 * Neumaier compensation; the ratio recurrence is re-anchored on the exact log term every 64 terms.
 */
function positiveSeries(a: number, b: number, x: number, y: number, logPre0: number, maxTerms: number): number {
  let sum = 0;
  let comp = 0;
  let t = 1;
  for (let j = 0; j < maxTerms; j++) {
    const s = sum + t;
    comp += Math.abs(sum) >= Math.abs(t) ? sum - s + t : t - s + sum;
    sum = s;
    const r = (x * (a + b + j)) / (a + 1 + j); // t_{j+1}/t_j; the ratios decrease when b > 1
    const rb = b > 1 ? r : Math.max(r, x);
    if (t * rb < (1 - rb) * sum * 1e-17) return sum + comp;
    t = (j + 1) % SERIES_ANCHOR === 0 ? Math.exp(logCfPrefactor(a + j + 1, b, x, y) - logPre0) : t * r;
  }
  return Number.NaN;
}

/**
 * ln I_x(a, b) for integer b as the finite positive sum I_x(a, b) = Σ_{i<b} T_i, T_0 = x^a,
 * T_i = x^a y^i/(i·B(a, i)) (from I_x(a, b+1) = I_x(a, b) + x^a y^b/(b·B(a, b))), summed outward from
 * the largest term with the ratio T_{i+1}/T_i = y(a+i)/(i+1), re-anchored every 64 terms.
 */
function logFiniteSum(a: number, b: number, x: number, y: number): number {
  const logTerm = (i: number): number =>
    i === 0 ? (y < x ? a * Math.log1p(-y) : a * Math.log(x)) : logCfPrefactor(i, a, y, x);
  const mode = Math.min(b - 1, Math.max(0, Math.floor((a * y - 1) / x) + 1));
  const logMode = logTerm(mode);
  let sum = 1;
  let comp = 0;
  const add = (t: number): void => {
    const s = sum + t;
    comp += sum >= t ? sum - s + t : t - s + sum;
    sum = s;
  };
  let t = 1;
  for (let i = mode; i < b - 1; i++) {
    t = (i + 1 - mode) % SERIES_ANCHOR === 0 ? Math.exp(logTerm(i + 1) - logMode) : (t * y * (a + i)) / (i + 1);
    add(t);
    if (t < sum * 1e-17) break;
  }
  t = 1;
  for (let i = mode - 1; i >= 0; i--) {
    t = (mode - i) % SERIES_ANCHOR === 0 ? Math.exp(logTerm(i) - logMode) : (t * (i + 1)) / (y * (a + i));
    add(t);
    if (t < sum * 1e-17) break;
  }
  return logMode + Math.log(sum + comp);
}

/**
 * ln I_x(a, b) for x < (a+1)/(a+b+2): the continued fraction where its value h is small; where h is
 * large (its error is ≈ h·ε) the finite sum for an integer b of at most ≈16h terms, else the positive
 * series when h < 20000 (≈10h terms), else the continued fraction after all.
 */
function logLowerTail(a: number, b: number, x: number, y: number, accurate: boolean): number {
  const logPre = logCfPrefactor(a, b, x, y);
  const h = continuedFraction(a, b, x);
  if (accurate && h > SERIES_FROM_H) {
    if (Number.isInteger(b) && b <= 16 * h + 256) return logFiniteSum(a, b, x, y);
    if (h < SERIES_UP_TO_H) {
      const s = positiveSeries(a, b, x, y, logPre, Math.ceil(40 * h) + 1000);
      if (s > 0) return logPre + Math.log(s);
    }
  }
  return logPre + Math.log(h);
}

/** ln(1 − e^l) for l ≤ 0, accurate on both sides of −ln 2. */
export function log1mExp(l: number): number {
  return l > -Math.LN2 ? Math.log(-Math.expm1(l)) : Math.log1p(-Math.exp(l));
}

/** Both tails of I in log space: lower = ln I_x(a, b), upper = ln(1 − I_x(a, b)). */
export interface LogTails {
  readonly lower: number;
  readonly upper: number;
}

/**
 * ln I_x(a, b) and ln(1 − I_x(a, b)) for a, b > 0 and x + y = 1 (y passed separately, exact where
 * the caller has it). No argument checks: internal building block of the binomial tails.
 * `accurate = false` skips the positive sums (continued fraction only, relative error ≈ h·ε): the
 * inverse's Newton iterations use it before polishing with the accurate form.
 */
export function betaLogTails(x: number, y: number, a: number, b: number, accurate = true): LogTails {
  if (x <= 0) return { lower: -Infinity, upper: 0 };
  if (y <= 0) return { lower: 0, upper: -Infinity };
  if (x < (a + 1) / (a + b + 2)) {
    const l = logLowerTail(a, b, x, y, accurate);
    return { lower: l, upper: log1mExp(l) };
  }
  const u = logLowerTail(b, a, y, x, accurate);
  return { lower: log1mExp(u), upper: u };
}

/** ln of the beta density x^{a−1} y^{b−1} / B(a, b), 0 < x < 1, y = 1 − x. */
export function betaLogDensity(x: number, y: number, a: number, b: number): number {
  return Math.log((a * b) / (a + b)) + logBinomialKernel(a, b, x, y) - Math.log(x) - Math.log(y);
}

function checkBetaArgs(x: number, a: number, b: number): void {
  if (!(x >= 0 && x <= 1)) domainError('x', `x must lie in [0, 1], got ${x}`);
  checkPositive('a', a);
  checkPositive('b', b);
}

/** I_x(a, b), the regularized incomplete beta function (the Beta(a, b) CDF at x). */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  checkBetaArgs(x, a, b);
  return Math.exp(betaLogTails(x, 1 - x, a, b).lower);
}

/** 1 − I_x(a, b), computed directly (full relative precision when it is tiny). */
export function regularizedIncompleteBetaComplement(x: number, a: number, b: number): number {
  checkBetaArgs(x, a, b);
  return Math.exp(betaLogTails(x, 1 - x, a, b).upper);
}

/** Initial guess for I_x(a, b) = target (Numerical Recipes 3, invbetai; AS 109 style). */
function initialGuess(t: number, side: 'lower' | 'upper', a: number, b: number): number {
  let x: number;
  if (a >= 1 && b >= 1) {
    const tt = Math.sqrt(-2 * Math.log(t));
    let z = (2.30753 + tt * 0.27061) / (1 + tt * (0.99229 + tt * 0.04481)) - tt;
    if (side === 'lower') z = -z; // z ≈ Φ⁻¹(1 − p) for the lower-tail probability p
    const al = (z * z - 3) / 6;
    const h = 2 / (1 / (2 * a - 1) + 1 / (2 * b - 1));
    const w = (z * Math.sqrt(al + h)) / h - (1 / (2 * b - 1) - 1 / (2 * a - 1)) * (al + 5 / 6 - 2 / (3 * h));
    x = a / (a + b * Math.exp(2 * w));
  } else {
    const lna = Math.log(a / (a + b));
    const lnb = Math.log(b / (a + b));
    const ta = Math.exp(a * lna) / a;
    const ub = Math.exp(b * lnb) / b;
    const w = ta + ub;
    const p = side === 'lower' ? t : 1 - t;
    x = p < ta / w ? Math.pow(a * w * p, 1 / a) : 1 - Math.pow(b * w * (side === 'upper' ? t : 1 - t), 1 / b);
  }
  return x > 0 && x < 1 && Number.isFinite(x) ? x : 0.5;
}

/** A point strictly inside (lo, hi), geometric on the side of ½ where the bracket spans scales. */
function bisect(lo: number, hi: number): number {
  if (lo === 0 && hi <= 0.5) return hi * 2 ** -20; // jumps scales fast; Newton in ln x recovers
  if (hi <= 0.5 && hi > 2 * lo) return Math.sqrt(lo * hi);
  if (lo >= 0.5 && hi < 1 && 1 - lo > 2 * (1 - hi)) return 1 - Math.sqrt((1 - lo) * (1 - hi));
  return lo + (hi - lo) / 2;
}

/**
 * Solves tail(x) = t where tail is I_x(a, b) (side 'lower', increasing) or 1 − I_x(a, b) (side
 * 'upper', decreasing), 0 < t ≤ ½. Newton on g = ln tail − ln t in the variable ln x (x ≤ ½) or
 * ln(1 − x) (x > ½), so that roots at 1e-300 or 1 − 1e-12 take a few steps; every evaluation
 * shrinks a bisection bracket that catches a step leaving it. The iterations use the fast tails
 * (continued fraction only); the converged point is then polished with the accurate tails, and
 * accepted once the accurate Newton step is below 1e-10 in the log variable (its quadratic
 * remainder is then far below one ulp). A root below the smallest double returns 0.
 */
function solveTail(t: number, side: 'lower' | 'upper', a: number, b: number): number {
  const logT = Math.log(t);
  let lo = 0;
  let hi = 1;
  let accurate = false;
  let x = initialGuess(t, side, a, b);
  for (let iter = 0; iter < 300; iter++) {
    const y = 1 - x;
    const tails = betaLogTails(x, y, a, b, accurate);
    const logTail = side === 'lower' ? tails.lower : tails.upper;
    const g = logTail - logT;
    if (g === 0 && accurate) return x;
    if (side === 'lower' ? g < 0 : g > 0) lo = x;
    else hi = x;
    // Newton step in w = ln x or w = ln(1 − x): dg/dw = ±(x or −y)·density/tail, formed in log space
    const inX = x <= 0.5;
    const slope = Math.exp(betaLogDensity(x, y, a, b) - logTail + Math.log(inX ? x : y));
    const dw = -g / ((side === 'lower') === inX ? slope : -slope);
    let next = inX ? x * Math.exp(dw) : 1 - y * Math.exp(dw);
    const small = Math.abs(dw) <= (accurate ? 1e-10 : 2 * Number.EPSILON);
    if (small || hi - lo <= 2 * Number.EPSILON * Math.min(hi, 1 - lo)) {
      if (accurate) return next > lo && next < hi ? next : x;
      accurate = true;
      lo = 0;
      hi = 1;
      x = next > 0 && next < 1 ? next : x;
      continue;
    }
    if (next === 0 && lo === 0 && hi > Number.MIN_VALUE) next = Number.MIN_VALUE; // ln x step underflowed
    if (!(next > lo && next < hi) || !Number.isFinite(next)) next = bisect(lo, hi);
    if (!(next > lo && next < hi)) return next <= 0 ? 0 : x; // bracket exhausted at double resolution
    x = next;
  }
  return x;
}

function checkProbability(field: string, p: number): void {
  if (!(p >= 0 && p <= 1)) domainError(field, `${field} must lie in [0, 1], got ${p}`);
}

/** The x in [0, 1] with I_x(a, b) = p. */
export function inverseRegularizedIncompleteBeta(p: number, a: number, b: number): number {
  checkProbability('p', p);
  checkPositive('a', a);
  checkPositive('b', b);
  if (p === 0) return 0;
  if (p === 1) return 1;
  return p <= 0.5 ? solveTail(p, 'lower', a, b) : solveTail(1 - p, 'upper', a, b);
}

/** The x in [0, 1] with 1 − I_x(a, b) = q (no rounding through 1 − q when q is tiny). */
export function inverseRegularizedIncompleteBetaComplement(q: number, a: number, b: number): number {
  checkProbability('q', q);
  checkPositive('a', a);
  checkPositive('b', b);
  if (q === 0) return 1;
  if (q === 1) return 0;
  return q <= 0.5 ? solveTail(q, 'upper', a, b) : solveTail(1 - q, 'lower', a, b);
}
