/**
 * EXACT error rates of every bound rule × method the schema accepts (no simulation): the probability of
 * each verdict word summed over every outcome table of IMEP's paired model, at a true parameter on the
 * margin, through the adjudicator's own routing (estimands.ts routingRequest) and verdict function
 * (decide.ts). Two errors per scenario:
 *   P(holds | claim false)  and  P(not detected | claim true)
 * each evaluated at the true value ON the margin — the supremum over the claim-false / claim-true side,
 * since every bound is monotone in the counts and the counts are stochastically monotone in the parameter.
 *
 * Models (n units):
 *   difference  (b, c, rest) ~ Multinomial(n; p_b, p_c) with δ = p_b + p_c, effect p_b − p_c: D and G on
 *               (b, c); θ on (b′, c′) (only-T flips, only-S flips).
 *   proportion  x ~ Binomial(n, p): ρ on x = b + c, a success rate on its successes.
 *   test        p-below: exact McNemar on (b, c) at D = 0 (every δ).
 * Outcome tables whose probability is below 1e-16 (each count beyond its marginal's 1e-18 tails) are
 * skipped; the skipped mass is bounded and reported (`skipped`), far below any difference asserted.
 * Pure; the costs are counted in `tables`.
 */
import type { BoundMethod, Criterion, Protocol } from '../protocol/index.js';
import { decideBound, type BoundRule, exactConfirmation, routingRequest, normalise } from '../adjudication/index.js';
import {
  clopperPearsonLower,
  clopperPearsonUpper,
  conditionalThetaBound,
  mcnemarExact,
  tango,
  wilson,
} from '../stats/index.js';

export type Family = 'difference' | 'theta' | 'proportion';

export interface Scenario {
  readonly family: Family;
  readonly rule: BoundRule;
  readonly method: BoundMethod;
  /** α per component (α-methods) or the two-sided level (the others), as the criterion registers it. */
  readonly alphaPerComponent?: number;
  readonly level?: number;
  readonly n: number;
  /** Discordance p_b + p_c (difference, theta); ignored for proportion. */
  readonly delta: number;
  readonly margin: number;
  /** The true value (on the margin; −margin for equivalence's lower side). */
  readonly truth: number;
}

export interface ErrorRate extends Scenario {
  /** P(holds) at the truth: an error (claim false at the margin's boundary). */
  readonly pHolds: number;
  /** P(not detected) at the truth: an error (claim true in the limit from its side). */
  readonly pNotDetected: number;
  /** The level the method states for one bound: the limit for both errors (exact methods). */
  readonly stated: number;
  /** True when the verdict's error is bounded by an exact method: the method is exact, or an exact bound confirms its word. */
  readonly exact: boolean;
  /** The interval id the adjudicator routes on. */
  readonly routedOn: string;
  readonly tables: number;
  readonly skipped: number;
}

const NO_BOOTSTRAP = { bootstrap: undefined } as unknown as Protocol;

/** The criterion this scenario registers, as the protocol would. */
export function criterionOf(s: Scenario): Criterion {
  const base = { id: 'X', estimand: 'E', role: 'primary', method: s.method, margin: s.margin } as const;
  if (s.rule === 'equivalence') return { ...base, rule: 'equivalence', level: s.level ?? 0.9 } as Criterion;
  const a = s.alphaPerComponent !== undefined ? { alphaPerComponent: s.alphaPerComponent } : { level: s.level };
  return { ...base, rule: s.rule, ...a } as Criterion;
}

/** One-sided error the method states for a bound it routes on at α / level (its documented coverage). */
function statedError(method: BoundMethod, alpha: number | null, level: number | null): number {
  if (method === 'exact-cp-difference') return 2 * (alpha as number); // Bonferroni: one tail per proportion
  if (alpha !== null) return alpha;
  return (1 - (level as number)) / 2;
}

const EXACT: readonly BoundMethod[] = ['exact-cp-difference', 'clopper-pearson', 'conditional-exact'];

export function logFactorials(n: number): Float64Array {
  const f = new Float64Array(n + 1);
  for (let k = 1; k <= n; k++) f[k] = (f[k - 1] as number) + Math.log(k);
  return f;
}

/** Smallest and largest k whose Binomial(n, p) tail beyond it is ≥ 1e-18 (a coarse, safe window). */
export function window(n: number, p: number, lf: Float64Array): [number, number] {
  if (p <= 0) return [0, 0];
  if (p >= 1) return [n, n];
  const lp = Math.log(p),
    lq = Math.log1p(-p);
  const logPmf = (k: number): number =>
    (lf[n] as number) - (lf[k] as number) - (lf[n - k] as number) + k * lp + (n - k) * lq;
  const mode = Math.floor((n + 1) * p);
  let lo = Math.min(mode, n),
    hi = Math.min(mode, n);
  while (lo > 0 && logPmf(lo - 1) > -46) lo--;
  while (hi < n && logPmf(hi + 1) > -46) hi++;
  return [lo, hi];
}

type Bounds = (x: number, y: number) => readonly [number, number];

const boundsCache = new Map<string, Bounds>();

/** The bounds of one method at one n, shared by every scenario that routes on it (memoised per table). */
function boundsFor(family: Family, method: BoundMethod, alpha: number | null, level: number | null, n: number): Bounds {
  const key = `${family}|${method}|${alpha}|${level}|${n}`;
  let f = boundsCache.get(key);
  if (f === undefined) boundsCache.set(key, (f = makeBounds(family, method, alpha, level, n)));
  return f;
}

function makeBounds(
  family: Family,
  method: BoundMethod,
  alpha: number | null,
  level: number | null,
  n: number,
): Bounds {
  const memo = new Map<number, readonly [number, number]>();
  const cached =
    (f: Bounds): Bounds =>
    (x, y) => {
      const key = x * (n + 1) + y;
      let v = memo.get(key);
      if (v === undefined) memo.set(key, (v = f(x, y)));
      return v;
    };
  switch (method) {
    case 'exact-cp-difference': {
      const a = alpha as number;
      const lo = Array.from({ length: n + 1 }, (_, k) => clopperPearsonLower(k, n, a));
      const up = Array.from({ length: n + 1 }, (_, k) => clopperPearsonUpper(k, n, a));
      return (b, c) => [(lo[b] as number) - (up[c] as number), (up[b] as number) - (lo[c] as number)];
    }
    case 'conditional-exact':
      return cached((b, c) => {
        const t = conditionalThetaBound(b, c, n, alpha as number);
        return [t.lower, t.upper];
      });
    case 'tango':
      return cached((b, c) => tango(b, c, n, level as number).interval);
    case 'clopper-pearson':
      return (x) => [clopperPearsonLower(x, n, alpha as number), clopperPearsonUpper(x, n, alpha as number)];
    case 'wilson':
      return (x) => wilson(x, n, level as number);
    default:
      throw new Error(`no exact enumeration for ${method} on ${family}`);
  }
}

export type Word = 'holds' | 'not detected' | 'unresolved';

/**
 * The scenario's verdict on counts (x, y) — (b, c) or (b′, c′); (x, 0) for a proportion — through the adjudicator's
 * routing and, for an approximate interval, its exact confirmation. Independent of the truth and δ.
 */
export function verdictOn(s: Omit<Scenario, 'delta' | 'truth'>): {
  decide: (x: number, y: number) => Word;
  confirmed: boolean;
  norm: ReturnType<typeof normalise>;
} {
  const criterion = criterionOf(s as Scenario);
  const req = routingRequest(criterion, NO_BOOTSTRAP)!;
  const norm = normalise(req);
  const bounds = boundsFor(s.family, norm.method, norm.alpha, norm.level, s.n);
  // an approximate interval's word stands only when the exact bound at the same level gives it (verdicts.ts)
  const confirm = exactConfirmation(criterion, s.family === 'proportion' ? 'proportion-flips' : s.family, NO_BOOTSTRAP);
  const exactBounds = confirm === null ? null : boundsFor(s.family, confirm.method, confirm.alpha, null, s.n);
  const decide = (x: number, y: number): Word => {
    const [lower, upper] = bounds(x, y);
    const w = decideBound(s.rule, { lower, upper, margin: s.margin });
    if (exactBounds === null || w === 'unresolved') return w;
    const [el, eu] = exactBounds(x, y);
    return decideBound(s.rule, { lower: el, upper: eu, margin: s.margin }) === w ? w : 'unresolved';
  };
  return { decide, confirmed: confirm !== null, norm };
}

/** The exact error rates of one scenario. */
export function errorRate(s: Scenario): ErrorRate {
  const { decide: decideOn, confirmed, norm } = verdictOn(s);
  const lf = logFactorials(s.n);
  let pHolds = 0,
    pNot = 0,
    mass = 0,
    tables = 0;
  if (s.family === 'proportion') {
    const [lo, hi] = window(s.n, s.truth, lf);
    for (let x = lo; x <= hi; x++) {
      const lp =
        s.truth <= 0
          ? x === 0
            ? 0
            : -Infinity
          : (lf[s.n] as number) -
            (lf[x] as number) -
            (lf[s.n - x] as number) +
            x * Math.log(s.truth) +
            (s.n - x) * Math.log1p(-s.truth);
      const p = Math.exp(lp);
      const w = decideOn(x, 0);
      tables++;
      mass += p;
      if (w === 'holds') pHolds += p;
      else if (w === 'not detected') pNot += p;
    }
  } else {
    const pb = (s.delta + s.truth) / 2,
      pc = (s.delta - s.truth) / 2;
    const [blo, bhi] = window(s.n, pb, lf);
    const [clo, chi] = window(s.n, pc, lf);
    const lpb = pb > 0 ? Math.log(pb) : 0,
      lpc = pc > 0 ? Math.log(pc) : 0,
      lrest = Math.log1p(-s.delta);
    for (let b = blo; b <= bhi; b++) {
      for (let c = clo; c <= chi && b + c <= s.n; c++) {
        const r = s.n - b - c;
        const p = Math.exp(
          (lf[s.n] as number) -
            (lf[b] as number) -
            (lf[c] as number) -
            (lf[r] as number) +
            b * lpb +
            c * lpc +
            r * lrest,
        );
        const w = decideOn(b, c);
        tables++;
        mass += p;
        if (w === 'holds') pHolds += p;
        else if (w === 'not detected') pNot += p;
      }
    }
  }
  const routedOn = `${norm.method}/${norm.alpha !== null ? `a${norm.alpha}` : `l${norm.level}`}`;
  // the routed bound's stated error: a conditional request re-routed keeps its α per endpoint
  const registered = normalise({ method: s.method, alpha: s.alphaPerComponent ?? null, level: s.level ?? null });
  const stated =
    s.method === 'conditional-exact' ? (registered.alpha as number) : statedError(norm.method, norm.alpha, norm.level);
  return {
    ...s,
    pHolds,
    pNotDetected: pNot,
    stated,
    exact: EXACT.includes(s.method) || confirmed,
    routedOn,
    tables,
    skipped: Math.max(0, 1 - mass),
  };
}

/** P(p < α) for the exact McNemar test at D = 0 and discordance δ (p-below's only error: it never says 'not detected'). */
export function mcnemarSize(
  n: number,
  delta: number,
  alpha: number,
  direction: 'greater' | 'two-sided',
): { pHolds: number; tables: number } {
  const lf = logFactorials(n);
  const [lo, hi] = window(n, delta, lf);
  let pHolds = 0,
    tables = 0;
  const lhalf = Math.log(0.5);
  for (let m = lo; m <= hi; m++) {
    const pm = Math.exp(
      (lf[n] as number) -
        (lf[m] as number) -
        (lf[n - m] as number) +
        m * Math.log(delta) +
        (n - m) * Math.log1p(-delta),
    );
    for (let b = 0; b <= m; b++) {
      tables++;
      if (mcnemarExact(b, m - b, direction) < alpha)
        pHolds += pm * Math.exp((lf[m] as number) - (lf[b] as number) - (lf[m - b] as number) + m * lhalf);
    }
  }
  return { pHolds, tables };
}
