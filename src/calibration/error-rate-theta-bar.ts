/**
 * EXACT error rates of θ̄'s equivalence verdict as the adjudicator now issues it (issue 31 §1): the
 * task-stratified bootstrap's word stands only when the exact union bound gives it too, so
 *   P(holds by bootstrap ∧ union bound) ≤ P(holds by the union bound),
 * and the union bound's probability is summed here over every pair of per-task outcome tables — no simulation.
 * Setup (the issue's): K = 2 tasks, equal weights, n units per task, the same truth θ_k = t and discordance δ in
 * each task ((b′_k, c′_k, rest) ~ Multinomial(n; (δ + t)/2, (δ − t)/2)), the criterion `rule: equivalence`,
 * margin m, level L; the confirming bound is exact-cp-difference at α = (1 − L)/4 per component
 * (estimands.ts exactConfirmation), i.e. per task CP bounds at α/K per proportion (stats/theta-bar-bound.ts):
 *   holds ⇔ −m < (LB₁ + LB₂)/2 and (UB₁ + UB₂)/2 < m;  not detected ⇔ (UB₁ + UB₂)/2 < −m or (LB₁ + LB₂)/2 > m.
 * For a task-1 table and each b₂ the task-2 tables that decide a word form one run of c₂ (LB and UB fall as c₂
 * grows), summed from prefix sums. Both errors at the truth on the margin (t = +m; −m is the mirror image:
 * swapping b′ and c′ negates both bounds), maximised over δ ∈ [m, 1] as in error-rate-range.ts. Pure.
 */
import { normalise } from '../adjudication/index.js';
import { clopperPearsonLower, clopperPearsonUpper } from '../stats/index.js';
import { maxOverDelta, type RangeWorst } from './error-rate-range.js';
import { logFactorials, window } from './error-rates.js';

export interface ThetaBarScenario {
  readonly n: number;
  readonly margin: number;
  readonly level: number;
  readonly truth: number;
  readonly delta: number;
}

interface TaskTables {
  /** Per b: the probability of (b, c) for c = 0…n − b, and its prefix sums (pre[c] = Σ_{c' < c}). */
  readonly pre: Float64Array[];
  readonly bLo: number;
  readonly bHi: number;
}

function taskTables(n: number, truth: number, delta: number): TaskTables {
  const lf = logFactorials(n);
  const pb = (delta + truth) / 2,
    pc = (delta - truth) / 2,
    pr = 1 - delta;
  const [bLo, bHi] = window(n, pb, lf);
  const lg = (p: number, k: number): number => (k === 0 ? 0 : p <= 0 ? -Infinity : k * Math.log(p));
  const pre: Float64Array[] = [];
  for (let b = 0; b <= n; b++) {
    const row = new Float64Array(n - b + 2);
    if (b >= bLo && b <= bHi) {
      for (let c = 0; c <= n - b; c++) {
        const r = n - b - c;
        const lp =
          (lf[n] as number) -
          (lf[b] as number) -
          (lf[c] as number) -
          (lf[r] as number) +
          lg(pb, b) +
          lg(pc, c) +
          lg(pr, r);
        row[c + 1] = (row[c] as number) + Math.exp(lp);
      }
    }
    pre.push(row);
  }
  return { pre, bLo, bHi };
}

/** The first index i in [0, len) with arr[i] > x (arr non-decreasing), len when none. */
function firstAbove(arr: Float64Array, x: number, len: number): number {
  let lo = 0,
    hi = len;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((arr[mid] as number) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The first index i with arr[i] ≥ x. */
function firstAtLeast(arr: Float64Array, x: number, len: number): number {
  let lo = 0,
    hi = len;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((arr[mid] as number) >= x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** P(holds) and P(not detected) of the union-bound equivalence rule at one (t, δ), exactly. */
export function thetaBarErrorRate(s: ThetaBarScenario): { pHolds: number; pNotDetected: number } {
  const { n, margin: m } = s;
  // the confirming bound's α per component for this level (estimands.ts exactConfirmation), α/K per task, K = 2
  const a = (normalise({ method: 'exact-cp-difference', alpha: null, level: s.level }).alpha as number) / 2;
  const lo = Float64Array.from({ length: n + 1 }, (_, k) => clopperPearsonLower(k, n, a));
  const up = Float64Array.from({ length: n + 1 }, (_, k) => clopperPearsonUpper(k, n, a));
  const t = taskTables(n, s.truth, s.delta);
  // mass of task-2 tables in row b₂ with c₂ in [from, to] (clipped)
  const mass = (b2: number, from: number, to: number): number => {
    const row = t.pre[b2] as Float64Array;
    const f = Math.max(0, from),
      z = Math.min(n - b2, to);
    return z < f ? 0 : (row[z + 1] as number) - (row[f] as number);
  };
  let pHolds = 0,
    pNot = 0;
  for (let b1 = t.bLo; b1 <= t.bHi; b1++) {
    const row1 = t.pre[b1] as Float64Array;
    for (let c1 = 0; c1 <= n - b1; c1++) {
      const p1 = (row1[c1 + 1] as number) - (row1[c1] as number);
      if (p1 === 0) continue;
      const L1 = (lo[b1] as number) - (up[c1] as number),
        U1 = (up[b1] as number) - (lo[c1] as number);
      let h = 0,
        nd = 0;
      for (let b2 = t.bLo; b2 <= t.bHi; b2++) {
        const len = n - b2 + 1;
        // holds: LB₂ = lo[b₂] − up[c₂] > −2m − L1 ⇔ up[c₂] < lo[b₂] + 2m + L1; UB₂ = up[b₂] − lo[c₂] < 2m − U1 ⇔ lo[c₂] > up[b₂] − 2m + U1
        const cMax = firstAtLeast(up, (lo[b2] as number) + 2 * m + L1, len) - 1;
        const cMin = firstAbove(lo, (up[b2] as number) - 2 * m + U1, len);
        h += mass(b2, cMin, cMax);
        // not detected: LB₂ > 2m − L1 ⇔ up[c₂] < lo[b₂] − 2m + L1;  or UB₂ < −2m − U1 ⇔ lo[c₂] > up[b₂] + 2m + U1
        nd += mass(b2, 0, firstAtLeast(up, (lo[b2] as number) - 2 * m + L1, len) - 1);
        nd += mass(b2, firstAbove(lo, (up[b2] as number) + 2 * m + U1, len), n - b2);
      }
      pHolds += p1 * h;
      pNot += p1 * nd;
    }
  }
  return { pHolds, pNotDetected: pNot };
}

export interface ThetaBarRow {
  readonly n: number;
  readonly margin: number;
  readonly level: number;
  /** (1 − level)/2: the one-sided error the confirmed rule states. */
  readonly stated: number;
  readonly holds: RangeWorst;
  readonly notDetected: RangeWorst;
}

/** The worst case over δ ∈ [m, 1] at t = +m, for each n (the setup: m = 7.5 pp, level 0.90). */
export function thetaBarRows(ns: readonly number[] = [10, 30, 50, 100], margin = 0.075, level = 0.9): ThetaBarRow[] {
  return ns.map((n) => {
    const at = (d: number) => thetaBarErrorRate({ n, margin, level, truth: margin, delta: d });
    return {
      n,
      margin,
      level,
      stated: (1 - level) / 2,
      holds: maxOverDelta(margin, (d) => at(d).pHolds),
      notDetected: maxOverDelta(margin, (d) => at(d).pNotDetected),
    };
  });
}
