/**
 * An exact (provably conservative) bound on the task-averaged θ̄ = Σ_k w_k θ_k over the K tasks with
 * positive weight, θ_k = p(only T flips) − p(only S flips) in task k:
 *   per task, the exact difference bound on (b′_k, c′_k) of n_k at α/K per proportion
 *     LB_k = CP₋(b′_k; α/K) − CP₊(c′_k; α/K),   UB_k = CP₊(b′_k; α/K) − CP₋(c′_k; α/K),
 *   then LB = Σ_k w_k LB_k and UB = Σ_k w_k UB_k.
 * Coverage (union bound): the lower bound errs only if some LB_k > θ_k, and each does with probability
 * ≤ 2α/K (one α/K tail per proportion), so P(LB > θ̄) ≤ 2α; likewise the upper bound. Each bound is a
 * ≥ 1 − 2α one-sided bound on θ̄ — the same statement as the exact difference bound on θ at α per
 * component — and [LB, UB] a ≥ 1 − 4α interval, whatever the per-task discordances. The weights are
 * registered (fixed before the data), so averaging the bounds keeps the coverage.
 *
 * b′_k = c′_k = 0 in every task still gives a non-trivial interval (n_k = 10, K = 2, α = 0.025:
 * ±35.5 pp per task), which is the point: a bootstrap collapses to [0, 0] there.
 * Weights are normalised (taskWeights); a positive-weight task with no unit throws E_STATS_DOMAIN. Pure.
 */
import { domainError } from '../core/index.js';
import { clopperPearsonLower, clopperPearsonUpper } from './clopper-pearson.js';
import { formatCoveragePercent } from './decision-bound.js';

export interface TaskFlips {
  readonly n: number;
  readonly bPrime: number;
  readonly cPrime: number;
  /** Normalised weight (Σ = 1 over the tasks). */
  readonly weight: number;
}

export interface ThetaBarBound {
  readonly lower: number;
  readonly upper: number;
  /** The number of tasks with positive weight (the union bound's K). */
  readonly tasks: number;
  /** α per proportion in each task: α / K. */
  readonly alphaPerTask: number;
  readonly label: string;
  readonly intervalLabel: string;
}

/** The exact union bound on θ̄ at α per component (module comment). */
export function thetaBarExactBound(tasks: readonly TaskFlips[], alpha: number): ThetaBarBound {
  if (!(alpha > 0 && alpha < 0.5)) domainError('alpha', `alpha per component must lie in (0, 0.5), got ${alpha}`);
  const used = tasks.filter((t) => t.weight > 0);
  if (used.length === 0) domainError('weights', 'must give at least one task a positive weight');
  const k = used.length;
  const a = alpha / k;
  let lower = 0,
    upper = 0;
  for (const t of used) {
    if (!Number.isSafeInteger(t.n) || t.n < 1) domainError('n', `a task with positive weight has n = ${t.n} units`);
    if (t.bPrime < 0 || t.cPrime < 0 || t.bPrime + t.cPrime > t.n)
      domainError('n', `b′ + c′ = ${t.bPrime + t.cPrime} exceeds the task's ${t.n} units`);
    lower += t.weight * (clopperPearsonLower(t.bPrime, t.n, a) - clopperPearsonUpper(t.cPrime, t.n, a));
    upper += t.weight * (clopperPearsonUpper(t.bPrime, t.n, a) - clopperPearsonLower(t.cPrime, t.n, a));
  }
  const per = `per task exact difference bound at α/K = ${Number(a.toPrecision(6))} per proportion, K = ${k}, weighted`;
  return {
    lower,
    upper,
    tasks: k,
    alphaPerTask: a,
    label: `≥${formatCoveragePercent(1 - 2 * alpha)}% (exact union bound on θ̄: ${per}; one-sided bound)`,
    intervalLabel: `≥${formatCoveragePercent(Math.max(0, 1 - 4 * alpha))}% (exact union bound on θ̄: ${per}; two-sided interval)`,
  };
}
