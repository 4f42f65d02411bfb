/**
 * Exact decision bounds on D = (b − c)/n built from the two discordance proportions b/n and c/n.
 *
 * Definition (paper, "Tests and bounds"): with CP₊(x; α) / CP₋(x; α) the one-sided (1 − α) upper /
 * lower Clopper–Pearson bounds on x/n,
 *   UB = CP₊(b; α) − CP₋(c; α),   LB = CP₋(b; α) − CP₊(c; α).
 * Each bound spends one α-tail on each proportion, so by Bonferroni it has coverage ≥ 1 − 2α; the
 * interval [LB, UB] spends four tails and has coverage ≥ 1 − 4α. Every bound is labelled at the
 * coverage of the quantity bounded (D), never at a component's: α = 0.05 per component gives
 * "≥90% (Bonferroni, one-sided bound)" and a "≥80%" interval; α = 0.025 gives ≥95% and ≥90%.
 *
 * Degenerate input: b = c = 0 still gives a non-trivial bound (n = 200: UB = 1 − 0.05^{1/200} =
 * 1.49 pp), which is the point of reporting the exact bound where a bootstrap collapses to [0, 0].
 * b, c, n integers with b + c ≤ n and n ≥ 1; α in (0, ½). Violations throw E_STATS_DOMAIN. Pure.
 */
import { domainError } from '../core/index.js';
import { clopperPearsonLower, clopperPearsonUpper } from './clopper-pearson.js';

export interface DecisionBound {
  readonly b: number;
  readonly c: number;
  readonly n: number;
  /** The point estimate D = (b − c)/n. */
  readonly estimate: number;
  readonly alphaPerComponent: number;
  /** LB = CP₋(b; α) − CP₊(c; α). */
  readonly lower: number;
  /** UB = CP₊(b; α) − CP₋(c; α). */
  readonly upper: number;
  /** oneBound = 1 − 2α (each of LB, UB alone); twoSided = 1 − 4α (the interval [LB, UB]), floored at 0. */
  readonly coverage: { readonly oneBound: number; readonly twoSided: number };
  /** Label of each one-sided bound, e.g. "≥90% (Bonferroni, one-sided bound)". */
  readonly label: string;
  /** Label of the interval [LB, UB], e.g. "≥80% (Bonferroni, two-sided interval)". */
  readonly intervalLabel: string;
}

function checkArgs(b: number, c: number, n: number, alpha: number): void {
  if (!Number.isSafeInteger(n) || n < 1) domainError('n', `n must be an integer ≥ 1, got ${n}`);
  if (!Number.isSafeInteger(b) || b < 0) domainError('b', `b must be an integer ≥ 0, got ${b}`);
  if (!Number.isSafeInteger(c) || c < 0) domainError('c', `c must be an integer ≥ 0, got ${c}`);
  if (b + c > n) domainError('n', `b + c = ${b + c} exceeds the number of paired units n = ${n}`);
  if (!(alpha > 0 && alpha < 0.5)) domainError('alpha', `alpha per component must lie in (0, 0.5), got ${alpha}`);
}

/** Formats a coverage as a percentage without floating-point noise: 0.9 → "90", 0.975 → "97.5". */
export function formatCoveragePercent(coverage: number): string {
  return String(Number((100 * coverage).toPrecision(10)));
}

/** UB = CP₊(b; α) − CP₋(c; α): a ≥ 1 − 2α (Bonferroni) upper bound on D = (b − c)/n. */
export function decisionUpperBound(b: number, c: number, n: number, alpha = 0.05): number {
  checkArgs(b, c, n, alpha);
  return clopperPearsonUpper(b, n, alpha) - clopperPearsonLower(c, n, alpha);
}

/** LB = CP₋(b; α) − CP₊(c; α): a ≥ 1 − 2α (Bonferroni) lower bound on D = (b − c)/n. */
export function decisionLowerBound(b: number, c: number, n: number, alpha = 0.05): number {
  checkArgs(b, c, n, alpha);
  return clopperPearsonLower(b, n, alpha) - clopperPearsonUpper(c, n, alpha);
}

/** Both decision bounds with their Bonferroni coverage labels. */
export function decisionBound(b: number, c: number, n: number, alpha = 0.05): DecisionBound {
  checkArgs(b, c, n, alpha);
  const oneBound = 1 - 2 * alpha;
  const twoSided = Math.max(0, 1 - 4 * alpha);
  return {
    b,
    c,
    n,
    estimate: (b - c) / n,
    alphaPerComponent: alpha,
    lower: decisionLowerBound(b, c, n, alpha),
    upper: decisionUpperBound(b, c, n, alpha),
    coverage: { oneBound, twoSided },
    label: `≥${formatCoveragePercent(oneBound)}% (Bonferroni, one-sided bound)`,
    intervalLabel: `≥${formatCoveragePercent(twoSided)}% (Bonferroni, two-sided interval)`,
  };
}
