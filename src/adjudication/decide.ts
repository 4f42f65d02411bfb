/**
 * The verdict word of a bound rule, from the bounds it routes on — one pure function shared by the
 * adjudicator (verdicts.ts), the retrospective readings (questions.ts) and the exact error-rate enumeration
 * (src/calibration/error-rates.ts), so the enumeration proves the routing the adjudicator runs.
 *
 * Every rule registers a CLAIM about the estimand θ; the verdict word answers that claim:
 *   lower-bound-above  claim θ > margin (and > every listed companion's upper bound: threshold τ ≥ margin)
 *                      holds ⇔ L > τ;   not detected ⇔ U < margin (the bound excludes the claim)
 *   upper-bound-below  claim θ < margin
 *                      holds ⇔ U < margin;   not detected ⇔ L > margin
 *   equivalence        claim −margin < θ < margin
 *                      holds ⇔ margin-strictly inside (TOST by interval inclusion);
 *                      not detected ⇔ U < −margin or L > margin
 * anything else is unresolved. With L, U one-sided bounds of coverage ≥ 1 − α each, P(holds | claim false)
 * ≤ α and P(not detected | claim true) ≤ α: "not detected" needs the bound on the far side of the margin,
 * never a threshold raised by a companion (a companion's UPPER bound says nothing against the claim).
 * Every comparison is strict — a bound touching the margin decides nothing — so a degenerate bound cannot
 * decide: a conditional θ bound of [0, 0] (b′ + c′ = 0) or a Clopper–Pearson lower bound of 0 (x = 0)
 * against a margin of 0 is unresolved on every rule (the exact enumeration found the non-strict
 * L ≥ margin saying "not detected" with probability 0.36 at n = 50, δ = 0.02).
 */
export type BoundRule = 'lower-bound-above' | 'upper-bound-below' | 'equivalence';
export type BoundWord = 'holds' | 'not detected' | 'unresolved';

export interface BoundInput {
  readonly lower: number;
  readonly upper: number;
  readonly margin: number;
  /** lower-bound-above only: max(margin, companions' upper bounds); defaults to the margin. */
  readonly threshold?: number;
}

export function decideBound(rule: BoundRule, x: BoundInput): BoundWord {
  const { lower: L, upper: U, margin: m } = x;
  switch (rule) {
    case 'lower-bound-above': {
      const tau = Math.max(m, x.threshold ?? m);
      if (L > tau) return 'holds';
      if (U < m) return 'not detected';
      return 'unresolved';
    }
    case 'upper-bound-below':
      if (U < m) return 'holds';
      if (L > m) return 'not detected';
      return 'unresolved';
    case 'equivalence':
      if (-m < L && U < m) return 'holds';
      if (U < -m || L > m) return 'not detected';
      return 'unresolved';
  }
}
