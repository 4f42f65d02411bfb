/**
 * The cross-check's own arithmetic — a SECOND code path that shares nothing with src/stats:
 *   - McNemar: exact BigInt binomial sums Σ C(m, j) over 2^m, rounded to a double at the end;
 *   - Fisher: exact BigInt hypergeometric weights C(r1, x)·C(r2, s − x) over C(N, s);
 *   - Clopper–Pearson: bisection on p of log-space binomial tails (a log-factorial table and
 *     log-sum-exp), not the inverse incomplete beta;
 *   - Wilson: the closed form, with z from bisection on Φ computed by the all-positive series
 *     erf(x) = (2/√π)·e^(−x²)·Σ 2ⁿx^(2n+1)/(1·3·…·(2n+1));
 *   - Tango: bisection on the score statistic with the restricted MLE from the quadratic formula;
 *   - Newcombe: square-and-add from the Wilson limits above;
 *   - Holm: a step-down loop.
 * Pure; agreement with the producer is expected to ~1e-12 (the cross-check tolerates 1e-9).
 */

// ------------------------------------------------------------------ BigInt ----

function bitLength(v: bigint): number {
  return v === 0n ? 0 : v.toString(2).length;
}

/** num/den (num ≥ 0, den > 0) as the nearest double (to within an ulp). */
export function ratioToDouble(num: bigint, den: bigint): number {
  if (num === 0n) return 0;
  const shift = 64 - (bitLength(num) - bitLength(den));
  const q = shift >= 0 ? (num << BigInt(shift)) / den : num / (den << BigInt(-shift));
  let v = Number(q);
  let s = shift;
  while (s > 1000) {
    v /= 2 ** 1000;
    s -= 1000;
  }
  return s >= 0 ? v / 2 ** s : v * 2 ** -s;
}

function binomialRow(m: number): bigint[] {
  const row: bigint[] = [1n];
  for (let j = 1; j <= m; j++) row.push(((row[j - 1] as bigint) * BigInt(m - j + 1)) / BigInt(j));
  return row;
}

/** Exact McNemar p on (b, c): two-sided min(1, 2·P(X ≤ min(b, c))), 'greater' P(X ≥ b), 'less' P(X ≤ b); X ~ Bin(b+c, ½). */
export function mcnemarBig(b: number, c: number, alternative: 'two-sided' | 'greater' | 'less'): number {
  const m = b + c;
  if (m === 0) return 1;
  const row = binomialRow(m);
  const den = 1n << BigInt(m);
  const sum = (from: number, to: number): bigint => {
    let s = 0n;
    for (let j = Math.max(0, from); j <= Math.min(m, to); j++) s += row[j] as bigint;
    return s;
  };
  if (alternative === 'greater') return ratioToDouble(sum(b, m), den);
  if (alternative === 'less') return ratioToDouble(sum(0, b), den);
  if (b === c) return 1;
  const tail = sum(0, Math.min(b, c)) * 2n;
  return tail >= den ? 1 : ratioToDouble(tail, den);
}

/**
 * Exact two-sided Fisher p on [[a, b], [c, d]] in BigInt: the tables of the hypergeometric support whose
 * C(r1, x)·C(r2, s − x) is at most the observed one's times (1 + 1e-7) (the documented tie slack, compared as
 * integers: 10^7·q ≤ (10^7 + 1)·q_obs), summed and divided by C(N, s). An empty row or column gives 1.
 */
export function fisherBig(a: number, b: number, c: number, d: number): number {
  const r1 = a + b,
    r2 = c + d,
    s = a + c,
    n = r1 + r2;
  if (r1 === 0 || r2 === 0 || s === 0 || s === n) return 1;
  const row1 = binomialRow(r1),
    row2 = binomialRow(r2);
  const weight = (x: number): bigint => (row1[x] as bigint) * (row2[s - x] as bigint);
  const observed = weight(a) * 10_000_001n;
  let sum = 0n;
  for (let x = Math.max(0, s - r2); x <= Math.min(r1, s); x++) {
    const q = weight(x);
    if (q * 10_000_000n <= observed) sum += q;
  }
  const den = binomialRow(n)[s] as bigint;
  return sum >= den ? 1 : ratioToDouble(sum, den);
}

// ------------------------------------------------------ binomial tails ----

const logFact: number[] = [0];
function lf(n: number): number {
  for (let i = logFact.length; i <= n; i++) logFact.push((logFact[i - 1] as number) + Math.log(i));
  return logFact[n] as number;
}

function logPmf(k: number, n: number, p: number): number {
  const a = k === 0 ? 0 : k * Math.log(p);
  const b = n - k === 0 ? 0 : (n - k) * Math.log1p(-p);
  return lf(n) - lf(k) - lf(n - k) + a + b;
}

function logSumExp(xs: number[]): number {
  const m = Math.max(...xs);
  if (m === -Infinity) return -Infinity;
  let s = 0;
  for (const x of xs) s += Math.exp(x - m);
  return m + Math.log(s);
}

/** P(X ≥ x) for X ~ Bin(n, p). */
export function upperTail(x: number, n: number, p: number): number {
  const terms: number[] = [];
  for (let k = x; k <= n; k++) terms.push(logPmf(k, n, p));
  return Math.exp(logSumExp(terms));
}

/** P(X ≤ x) for X ~ Bin(n, p). */
export function lowerTail(x: number, n: number, p: number): number {
  const terms: number[] = [];
  for (let k = 0; k <= x; k++) terms.push(logPmf(k, n, p));
  return Math.exp(logSumExp(terms));
}

/** Bisection for the crossing of an increasing function f on (lo, hi), to the last representable bit. */
function bisectIncreasing(f: (p: number) => number, target: number, lo: number, hi: number): number {
  let l = lo;
  let h = hi;
  for (let i = 0; i < 400; i++) {
    const mid = l + (h - l) / 2;
    if (mid <= l || mid >= h) break;
    if (f(mid) < target) l = mid;
    else h = mid;
  }
  return l + (h - l) / 2;
}

/** One-sided (1 − α) lower Clopper–Pearson bound: the p with P(X ≥ x; p) = α. */
export function cpLower(x: number, n: number, alpha: number): number {
  if (n === 0 || x === 0) return 0;
  return bisectIncreasing((p) => upperTail(x, n, p), alpha, 0, 1);
}

/** One-sided (1 − α) upper Clopper–Pearson bound: the p with P(X ≤ x; p) = α. */
export function cpUpper(x: number, n: number, alpha: number): number {
  if (n === 0 || x === n) return 1;
  // P(X ≤ x; p) decreases in p: bisect on its negative.
  return bisectIncreasing((p) => -lowerTail(x, n, p), -alpha, 0, 1);
}

// ------------------------------------------------------------- normal ----

/** Φ(z) for z ≥ 0 from erf by the all-positive series. */
function phi(z: number): number {
  const x = z / Math.SQRT2;
  let term = x;
  let sum = x;
  for (let n = 1; n < 500; n++) {
    term *= (2 * x * x) / (2 * n + 1);
    sum += term;
    if (term < sum * 1e-18) break;
  }
  const erf = (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x) * sum;
  return 0.5 * (1 + erf);
}

/** z with Φ(z) = 1 − tail (0 < tail < ½). */
export function zUpper(tail: number): number {
  return bisectIncreasing(phi, 1 - tail, 0, 12);
}

/** Two-sided Wilson interval by its closed form. */
export function wilsonClosed(x: number, n: number, level: number): [number, number] {
  const z = zUpper((1 - level) / 2);
  const z2 = z * z;
  const centre = (x + z2 / 2) / (n + z2);
  const half = (z / (n + z2)) * Math.sqrt((x * (n - x)) / n + z2 / 4);
  return [x === 0 ? 0 : Math.max(0, centre - half), x === n ? 1 : Math.min(1, centre + half)];
}

// -------------------------------------------------------------- Tango ----

function tangoT(b: number, c: number, n: number, d: number): number {
  const B = -b - c + (2 * n - b + c) * d;
  const disc = B * B + 8 * n * c * d * (1 - d);
  let q = (-B + Math.sqrt(Math.max(0, disc))) / (4 * n);
  q = Math.min(Math.max(q, Math.max(0, -d)), (1 - d) / 2);
  const num = b - c - n * d;
  const v = n * (2 * q + d * (1 - d));
  if (!(v > 0)) return num === 0 ? 0 : num > 0 ? Infinity : -Infinity;
  return num / Math.sqrt(v);
}

/** Tango score interval for D = (b − c)/n at `level`. */
export function tangoInterval(b: number, c: number, n: number, level: number): [number, number] {
  const z = zUpper((1 - level) / 2);
  const est = (b - c) / n;
  // T decreases in δ: the lower end solves T = z on [−1, est], the upper T = −z on [est, 1].
  const lower = c === n ? -1 : bisectIncreasing((d) => -tangoT(b, c, n, d), -z, -1, est);
  const upper = b === n ? 1 : bisectIncreasing((d) => -tangoT(b, c, n, d), z, est, 1);
  return [Math.min(lower, est), Math.max(upper, est)];
}

/** Newcombe method-10 interval on D from the paired table (a, b, c, d). */
export function newcombeInterval(a: number, b: number, c: number, d: number, level: number): [number, number] {
  const n = a + b + c + d;
  const p1 = (a + b) / n,
    p2 = (a + c) / n;
  const [l1, u1] = wilsonClosed(a + b, n, level);
  const [l2, u2] = wilsonClosed(a + c, n, level);
  const margins = [a + b, c + d, a + c, b + d];
  let r = 0;
  if (!margins.some((m) => m === 0)) {
    const A = a * d - b * c;
    const M = Math.sqrt(margins.reduce((x, y) => x * y, 1));
    r = A > n / 2 ? (A - n / 2) / M : A >= 0 ? 0 : A / M;
  }
  const est = (b - c) / n;
  const x1 = p1 - l1,
    y1 = u2 - p2,
    x2 = u1 - p1,
    y2 = p2 - l2;
  const lo = est - Math.sqrt(Math.max(0, x1 * x1 - 2 * r * x1 * y1 + y1 * y1));
  const hi = est + Math.sqrt(Math.max(0, x2 * x2 - 2 * r * x2 * y2 + y2 * y2));
  return [Math.max(-1, lo), Math.min(1, hi)];
}

// --------------------------------------------------------------- Holm ----

/** Holm step-down on p-values (null = unavailable, entered as 1, reported as null). */
export function holmStepDown(ps: readonly (number | null)[]): (number | null)[] {
  const m = ps.length;
  const vals = ps.map((p) => (p === null ? 1 : p));
  const order = vals.map((_, i) => i).sort((i, j) => (vals[i] as number) - (vals[j] as number) || i - j);
  const adj = new Array<number>(m).fill(1);
  let run = 0;
  for (let r = 0; r < m; r++) {
    const i = order[r] as number;
    run = Math.max(run, Math.min(1, (m - r) * (vals[i] as number)));
    adj[i] = run;
  }
  return ps.map((p, i) => (p === null ? null : (adj[i] as number)));
}

/** Hyndman–Fan type-7 quantile of an ascending array. */
export function type7(sorted: Float64Array, p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const a = sorted[lo] as number;
  return lo + 1 >= sorted.length ? a : a + (h - lo) * ((sorted[lo + 1] as number) - a);
}
