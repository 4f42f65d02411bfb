/**
 * The standard summary of one seed-paired binary contrast (reference A against intervention X), as
 * `imep stats paired` prints it and as adjudication reports it: D = (b − c)/n, ρ = (b + c)/n, the
 * exact two-sided McNemar p, the exact Clopper–Pearson decision bounds on D (α per component, each
 * labelled with its Bonferroni coverage) and the Tango score interval.
 *
 * b counts pairs where the reference succeeds and the intervention fails, c the reverse; intervals
 * for D are oriented the same way (positive D: the intervention lowers success). Pure.
 */
import { decisionBound, type DecisionBound } from './decision-bound.js';
import { mcnemarExact } from './mcnemar.js';
import { tango } from './tango.js';

export interface PairedSummaryInput {
  readonly b: number;
  readonly c: number;
  readonly n: number;
  /** α per Clopper–Pearson component of the decision bounds (default 0.05). */
  readonly alpha?: number;
  /** Two-sided level of the Tango interval (default 0.95). */
  readonly level?: number;
}

export interface PairedSummary {
  readonly b: number;
  readonly c: number;
  readonly n: number;
  readonly D: number;
  readonly rho: number;
  readonly mcnemarP: number;
  readonly bound: DecisionBound;
  readonly tango: { readonly level: number; readonly lower: number; readonly upper: number };
}

export function pairedSummary(input: PairedSummaryInput): PairedSummary {
  const { b, c, n } = input;
  const alpha = input.alpha ?? 0.05;
  const level = input.level ?? 0.95;
  const bound = decisionBound(b, c, n, alpha);
  const t = tango(b, c, n, level);
  return {
    b,
    c,
    n,
    D: (b - c) / n,
    rho: (b + c) / n,
    mcnemarP: mcnemarExact(b, c, 'two-sided'),
    bound,
    tango: { level, lower: t.interval[0], upper: t.interval[1] },
  };
}
