/**
 * The registered grid of the exact error-rate table (docs/error-rates.md, test/calibration/error-rates.test.ts):
 * n ∈ {50, 120, 300, 690}; discordance δ ∈ {0.02, 0.1, 0.3}; margins per family; every bound rule ×
 * every method the schema accepts for that estimand shape and the enumeration can evaluate exactly.
 * A scenario whose truth is infeasible (|θ| > δ) is left out. Not enumerated (stated in the doc): the
 * bootstraps (random resampling: their error is Monte-Carlo, not a sum over tables), Newcombe (it reads
 * all four cells of the 2×2 table, a three-parameter grid), θ̄ (bootstrap only) and companions
 * (aboveUpperBoundOf only raises the holds threshold; its error is bounded by the union bound).
 */
import type { BoundMethod } from '../protocol/index.js';
import type { BoundRule } from '../adjudication/index.js';
import { errorRate, mcnemarSize, type ErrorRate, type Family, type Scenario } from './error-rates.js';
import { fullRangeWorst, mcnemarFullRange, type RangeWorst } from './error-rate-range.js';
import type { McNemarRangeRow } from './error-rate-table.js';

export const GRID_N = [50, 120, 300, 690] as const;
export const GRID_DELTA = [0.02, 0.1, 0.3] as const;
const RULES: readonly BoundRule[] = ['lower-bound-above', 'upper-bound-below', 'equivalence'];

interface MethodSpec {
  readonly family: Family;
  readonly method: BoundMethod;
  readonly alphaPerComponent?: number;
  readonly level?: number;
}

/** Methods per family: α-methods at their registered α per component, level-methods at a two-sided level. */
export const GRID_METHODS: readonly MethodSpec[] = [
  { family: 'difference', method: 'exact-cp-difference', alphaPerComponent: 0.025 },
  { family: 'difference', method: 'exact-cp-difference', alphaPerComponent: 0.05 },
  { family: 'difference', method: 'tango', level: 0.95 },
  { family: 'theta', method: 'conditional-exact', alphaPerComponent: 0.025 },
  { family: 'theta', method: 'conditional-exact', alphaPerComponent: 0.05 },
  { family: 'theta', method: 'exact-cp-difference', alphaPerComponent: 0.05 },
  { family: 'proportion', method: 'clopper-pearson', alphaPerComponent: 0.05 },
  { family: 'proportion', method: 'wilson', level: 0.95 },
];

const MARGINS: Readonly<Record<Family, readonly number[]>> = {
  difference: [0, 0.01, 0.05, 0.1],
  theta: [0, 0.01, 0.05, 0.1],
  proportion: [0, 0.02, 0.1, 1 / 3],
};

/** Every scenario of the grid (equivalence at level 0.90, the TOST at 0.05 per side; the truth at +margin and −margin). */
export function gridScenarios(ns: readonly number[] = GRID_N): Scenario[] {
  const out: Scenario[] = [];
  for (const m of GRID_METHODS) {
    for (const rule of RULES) {
      for (const margin of MARGINS[m.family]) {
        if (rule === 'equivalence' && margin === 0) continue; // an equivalence margin is > 0
        const truths = rule === 'equivalence' && m.family !== 'proportion' ? [margin, -margin] : [margin];
        const reg =
          rule === 'equivalence'
            ? { level: 0.9 }
            : m.alphaPerComponent !== undefined
              ? { alphaPerComponent: m.alphaPerComponent }
              : { level: m.level };
        if (rule === 'equivalence' && m.alphaPerComponent === 0.025 && m.method !== 'conditional-exact') continue; // one equivalence row per method
        if (rule === 'equivalence' && m.method === 'conditional-exact' && m.alphaPerComponent === 0.025) continue;
        for (const n of ns) {
          const deltas = m.family === 'proportion' ? [0] : GRID_DELTA;
          for (const delta of deltas) {
            for (const truth of truths) {
              if (m.family !== 'proportion' && Math.abs(truth) > delta) continue;
              out.push({ family: m.family, rule, method: m.method, ...reg, n, delta, margin, truth });
            }
          }
        }
      }
    }
  }
  return out;
}

export function gridErrorRates(ns: readonly number[] = GRID_N): ErrorRate[] {
  return gridScenarios(ns).map(errorRate);
}

export interface McNemarRow {
  readonly n: number;
  readonly delta: number;
  readonly alpha: number;
  readonly direction: 'greater' | 'two-sided';
  readonly pHolds: number;
}

export function gridMcNemar(ns: readonly number[] = GRID_N): McNemarRow[] {
  const out: McNemarRow[] = [];
  for (const n of ns)
    for (const delta of GRID_DELTA)
      for (const direction of ['greater', 'two-sided'] as const) {
        out.push({ n, delta, alpha: 0.05, direction, pHolds: mcnemarSize(n, delta, 0.05, direction).pHolds });
      }
  return out;
}

/** One grid scenario's worst case over the whole discordance range δ ∈ [|truth|, 1] (error-rate-range.ts). */
export interface FullRangeRate {
  /** A grid row of the scenario (its δ is irrelevant here). */
  readonly base: ErrorRate;
  readonly holds: RangeWorst;
  readonly notDetected: RangeWorst;
}

/** Per (rule, method, margin, n, truth) of the two-count families: the worst case over the feasible δ range. */
export function fullRangeRates(rows: readonly ErrorRate[]): FullRangeRate[] {
  const seen = new Map<string, FullRangeRate>();
  for (const r of rows) {
    if (r.family === 'proportion') continue;
    const key = JSON.stringify([r.family, r.rule, r.method, r.alphaPerComponent, r.level, r.margin, r.n, r.truth]);
    if (seen.has(key)) continue;
    const w = fullRangeWorst(r);
    seen.set(key, { base: r, holds: w.holds, notDetected: w.notDetected });
  }
  return [...seen.values()];
}

/** p-below's worst size over δ ∈ [0, 1] per n and direction (α = 0.05). */
export function mcnemarRangeRows(ns: readonly number[] = GRID_N): McNemarRangeRow[] {
  const out: McNemarRangeRow[] = [];
  for (const n of ns)
    for (const direction of ['greater', 'two-sided'] as const)
      out.push({ n, alpha: 0.05, direction, worst: mcnemarFullRange(n, 0.05, direction) });
  return out;
}
