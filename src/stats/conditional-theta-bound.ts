/**
 * Conditional exact bound for θ = ρ_T − ρ_S (blackout ladders, paper appendix on the T_μ/S_π ladder).
 *
 * Definition. Among n units, b′ = #units where only T flips its outcome, c′ = #units where only S
 * flips; m = b′ + c′ singly discordant units. Conditional on m, b′ ~ Bin(m, π) with
 * θ = (2π − 1)·m/n. The bound is the exact Clopper–Pearson bound on π = b′/m (each endpoint
 * one-sided 1 − α; default α = 0.05, i.e. each endpoint one-sided 95%), mapped to θ:
 *   θ-bound = (2π-bound − 1)·m/n,   estimate = (b′ − c′)/n.
 * It is conditional on the observed m and is NOT an unconditional interval for θ; the label says so.
 *
 * Degenerate input: m = 0 gives estimate 0 and bounds [0, 0] with `degenerate: true` (no singly
 * discordant unit: the conditional bound carries no information, it does not show θ = 0).
 * b′, c′, n integers, b′ + c′ ≤ n, n ≥ 1; α in (0, ½). Violations throw E_STATS_DOMAIN. Pure.
 */
import { domainError } from '../core/index.js';
import { clopperPearsonLower, clopperPearsonUpper } from './clopper-pearson.js';
import { formatCoveragePercent } from './decision-bound.js';

export interface ConditionalThetaBound {
  /** (b′ − c′)/n. */
  readonly estimate: number;
  /** (2·CP₋(b′; m, α) − 1)·m/n. */
  readonly lower: number;
  /** (2·CP₊(b′; m, α) − 1)·m/n. */
  readonly upper: number;
  /** m = b′ + c′, the number of singly discordant units the bound conditions on. */
  readonly discordant: number;
  readonly n: number;
  readonly alpha: number;
  readonly conditional: true;
  /** True when m = 0: the bounds are [0, 0] by convention and carry no information. */
  readonly degenerate: boolean;
  readonly label: string;
}

/** The conditional exact bound on θ from b′ (only T flips), c′ (only S flips) among n units. */
export function conditionalThetaBound(bPrime: number, cPrime: number, n: number, alpha = 0.05): ConditionalThetaBound {
  if (!Number.isSafeInteger(n) || n < 1) domainError('n', `n must be an integer ≥ 1, got ${n}`);
  if (!Number.isSafeInteger(bPrime) || bPrime < 0) domainError('bPrime', `b′ must be an integer ≥ 0, got ${bPrime}`);
  if (!Number.isSafeInteger(cPrime) || cPrime < 0) domainError('cPrime', `c′ must be an integer ≥ 0, got ${cPrime}`);
  if (bPrime + cPrime > n) domainError('n', `b′ + c′ = ${bPrime + cPrime} exceeds the number of units n = ${n}`);
  if (!(alpha > 0 && alpha < 0.5)) domainError('alpha', `alpha must lie in (0, 0.5), got ${alpha}`);
  const m = bPrime + cPrime;
  const each = formatCoveragePercent(1 - alpha);
  if (m === 0) {
    return {
      estimate: 0,
      lower: 0,
      upper: 0,
      discordant: 0,
      n,
      alpha,
      conditional: true,
      degenerate: true,
      label: `conditional exact bound, degenerate: b′+c′=0 singly discordant units (no information; not an unconditional interval for θ)`,
    };
  }
  const scale = m / n;
  return {
    estimate: (bPrime - cPrime) / n,
    lower: (2 * clopperPearsonLower(bPrime, m, alpha) - 1) * scale,
    upper: (2 * clopperPearsonUpper(bPrime, m, alpha) - 1) * scale,
    discordant: m,
    n,
    alpha,
    conditional: true,
    degenerate: false,
    label:
      `conditional exact bound given b′+c′=${m} (Clopper–Pearson, each endpoint one-sided ${each}%; ` +
      `not an unconditional interval for θ)`,
  };
}
