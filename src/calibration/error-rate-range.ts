/**
 * The worst case of each error over the WHOLE feasible discordance range, by exact computation — not the
 * δ ≤ 0.3 grid. A scenario's verdict depends on the counts only (b, c; or b′, c′), so it is tabulated once per
 * (rule, method, margin, n): for every b the runs of c where the word is 'holds' / 'not detected'. At a truth t
 * and discordance δ (p_b = (δ + t)/2, p_c = (δ − t)/2) the probability of a word is then exact:
 *   P(word) = Σ_b Bin(b; n, p_b) · Σ_runs [F(hi) − F(lo − 1)],   F the Bin(n − b, p_c/(1 − p_b)) cdf,
 * b over its 1e-18 window (the left-out mass is below 1e-16 per δ). The maximum over δ ∈ [|t|, 1] is located
 * by a 41-point scan of the range followed by golden-section refinement around the largest point (the error is
 * a smooth function of δ between the scan points); the value reported at the located δ is exact. Pure.
 */
import { binomialCdf, binomialPmf, mcnemarExact } from '../stats/index.js';
import { logFactorials, verdictOn, window, type Scenario, type Word } from './error-rates.js';

/** Per b: flat [lo, hi, lo, hi, …] runs of c where the word holds. */
type Runs = readonly Int32Array[];

export interface VerdictTable {
  readonly n: number;
  readonly holds: Runs;
  readonly notDetected: Runs;
}

const tableCache = new Map<string, VerdictTable>();

function runsOf(n: number, b: number, is: (c: number) => boolean): Int32Array {
  const out: number[] = [];
  let start = -1;
  for (let c = 0; c <= n - b; c++) {
    if (is(c)) {
      if (start < 0) start = c;
    } else if (start >= 0) {
      out.push(start, c - 1);
      start = -1;
    }
  }
  if (start >= 0) out.push(start, n - b);
  return Int32Array.from(out);
}

/** The verdict table of a two-count scenario (difference, θ), memoised per rule × method × margin × n. */
export function verdictTable(s: Omit<Scenario, 'delta' | 'truth'>): VerdictTable {
  const key = JSON.stringify([s.family, s.rule, s.method, s.alphaPerComponent, s.level, s.margin, s.n]);
  let t = tableCache.get(key);
  if (t !== undefined) return t;
  const { decide } = verdictOn(s);
  const holds: Int32Array[] = [];
  const notDetected: Int32Array[] = [];
  for (let b = 0; b <= s.n; b++) {
    const words: Word[] = [];
    for (let c = 0; c <= s.n - b; c++) words.push(decide(b, c));
    holds.push(runsOf(s.n, b, (c) => words[c] === 'holds'));
    notDetected.push(runsOf(s.n, b, (c) => words[c] === 'not detected'));
  }
  t = { n: s.n, holds, notDetected };
  tableCache.set(key, t);
  return t;
}

/** P(word) at truth t and discordance δ, exactly (module comment). */
export function wordProbability(
  table: VerdictTable,
  runs: 'holds' | 'notDetected',
  truth: number,
  delta: number,
): number {
  const n = table.n;
  const pb = Math.max(0, (delta + truth) / 2),
    pc = Math.max(0, (delta - truth) / 2);
  const q = pb >= 1 ? 0 : Math.min(1, pc / (1 - pb));
  const [lo, hi] = window(n, pb, logFactorials(n));
  let p = 0;
  for (let b = lo; b <= hi; b++) {
    const r = table[runs][b] as Int32Array;
    if (r.length === 0) continue;
    let inner = 0;
    for (let j = 0; j < r.length; j += 2) {
      const a = r[j] as number,
        z = r[j + 1] as number;
      inner += binomialCdf(z, n - b, q) - (a > 0 ? binomialCdf(a - 1, n - b, q) : 0);
    }
    p += binomialPmf(b, n, pb) * inner;
  }
  return p;
}

export interface RangeWorst {
  readonly value: number;
  readonly delta: number;
}

const SCAN = 40;
const GOLDEN = 0.6180339887498949;

/** max over δ ∈ [|t|, 1] of f(δ): a scan of SCAN + 1 points, then golden-section search in the best bracket. */
export function maxOverDelta(truth: number, f: (delta: number) => number): RangeWorst {
  const lo = Math.abs(truth);
  const at = (i: number): number => lo + ((1 - lo) * i) / SCAN;
  let bestI = 0,
    best = -1;
  const vals: number[] = [];
  for (let i = 0; i <= SCAN; i++) {
    const v = f(at(i));
    vals.push(v);
    if (v > best) {
      best = v;
      bestI = i;
    }
  }
  let a = at(Math.max(0, bestI - 1)),
    z = at(Math.min(SCAN, bestI + 1));
  let result: RangeWorst = { value: best, delta: at(bestI) };
  let x1 = z - GOLDEN * (z - a),
    x2 = a + GOLDEN * (z - a);
  let f1 = f(x1),
    f2 = f(x2);
  for (let k = 0; k < 16; k++) {
    if (f1 > result.value) result = { value: f1, delta: x1 };
    if (f2 > result.value) result = { value: f2, delta: x2 };
    if (f1 >= f2) {
      z = x2;
      x2 = x1;
      f2 = f1;
      x1 = z - GOLDEN * (z - a);
      f1 = f(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + GOLDEN * (z - a);
      f2 = f(x2);
    }
  }
  return result;
}

export interface FullRangeWorst {
  readonly holds: RangeWorst;
  readonly notDetected: RangeWorst;
}

/** The worst P(holds | claim false) and P(not detected | claim true) of a two-count scenario over δ ∈ [|t|, 1]. */
export function fullRangeWorst(s: Omit<Scenario, 'delta'>): FullRangeWorst {
  const t = verdictTable(s);
  return {
    holds: maxOverDelta(s.truth, (d) => wordProbability(t, 'holds', s.truth, d)),
    notDetected: maxOverDelta(s.truth, (d) => wordProbability(t, 'notDetected', s.truth, d)),
  };
}

/**
 * p-below's size over the whole range: P(p < α | D = 0) = Σ_m Bin(m; n, δ) · P(reject | m), P(reject | m) the exact
 * McNemar test's rejection probability under b ~ Bin(m, ½); maximised over δ ∈ [0, 1] as above.
 */
export function mcnemarFullRange(n: number, alpha: number, direction: 'greater' | 'two-sided'): RangeWorst {
  const reject = new Float64Array(n + 1);
  for (let m = 0; m <= n; m++) {
    let r = 0;
    for (let b = 0; b <= m; b++) if (mcnemarExact(b, m - b, direction) < alpha) r += binomialPmf(b, m, 0.5);
    reject[m] = r;
  }
  return maxOverDelta(0, (delta) => {
    let p = 0;
    for (let m = 0; m <= n; m++) if ((reject[m] as number) > 0) p += binomialPmf(m, n, delta) * (reject[m] as number);
    return p;
  });
}
