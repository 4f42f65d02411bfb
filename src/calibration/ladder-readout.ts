/**
 * The ladder's fact-use readout of one campaign, from per-unit outcomes under A, S and T.
 *
 * A unit FLIPS under X when its X outcome differs from its A outcome. Over the n units with all three
 * outcomes: b′ = units that flip under T but not under S, c′ = units that flip under S but not under T,
 * so θ̂ = ρ̂_T − ρ̂_S = (b′ − c′)/n exactly (units flipping under both cancel). The detection rule is the
 * test the protocol's power analysis froze (src/stats/power.ts models exactly this pairing: b = "only T
 * flips", c = "only S flips"): one-sided exact McNemar P(X ≥ b′ | b′ + c′) ≤ α ('mcnemar-one-sided'), or
 * the two-sided exact p ≤ α with b′ > c′ ('mcnemar-two-sided': a θ > 0 claim needs the positive side).
 *
 * Empty input (n = 0): every count 0, p = 1, not detected. Pure, no I/O.
 */
import { mcnemarExact } from '../stats/index.js';
import type { PairedTest } from '../stats/index.js';

export interface LadderOutcome {
  readonly a: boolean;
  readonly s: boolean | null;
  readonly t: boolean | null;
}

export interface LadderCounts {
  /** Units with all three outcomes. */
  readonly n: number;
  /** Flip only under T (b′), only under S (c′), under both, under neither. */
  readonly bOnlyT: number;
  readonly cOnlyS: number;
  readonly both: number;
  readonly neither: number;
}

export interface LadderReadout extends LadderCounts {
  readonly rhoS: number;
  readonly rhoT: number;
  readonly theta: number;
  readonly p: number;
  readonly detected: boolean;
}

export function ladderCounts(units: readonly LadderOutcome[]): LadderCounts {
  let b = 0,
    c = 0,
    both = 0,
    neither = 0;
  for (const u of units) {
    if (u.s === null || u.t === null) continue;
    const fs = u.s !== u.a;
    const ft = u.t !== u.a;
    if (ft && !fs) b++;
    else if (fs && !ft) c++;
    else if (fs && ft) both++;
    else neither++;
  }
  return { n: b + c + both + neither, bOnlyT: b, cOnlyS: c, both, neither };
}

/** The detection rule on (b′, c′). */
export function detects(b: number, c: number, test: PairedTest, alpha: number): { p: number; detected: boolean } {
  if (b + c === 0) return { p: 1, detected: false };
  if (test === 'mcnemar-one-sided') {
    const p = mcnemarExact(b, c, 'greater');
    return { p, detected: p <= alpha };
  }
  const p = mcnemarExact(b, c, 'two-sided');
  return { p, detected: p <= alpha && b > c };
}

export function ladderReadout(counts: LadderCounts, test: PairedTest, alpha: number): LadderReadout {
  const { n, bOnlyT: b, cOnlyS: c, both } = counts;
  const { p, detected } = detects(b, c, test, alpha);
  return {
    ...counts,
    rhoS: n === 0 ? 0 : (c + both) / n,
    rhoT: n === 0 ? 0 : (b + both) / n,
    theta: n === 0 ? 0 : (b - c) / n,
    p,
    detected,
  };
}
