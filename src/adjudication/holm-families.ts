/**
 * Holm families frozen in the protocol. Each contrast (D: on b, c; θ / θ̄: on b′, c′) gets its exact
 * McNemar p (two-sided, or one-sided 'greater' when the family registers mcnemar-exact-one-sided). A
 * contrast that is unavailable or invalid keeps its slot with p = 1 in the computation (src/stats holm
 * 'unavailable') — it counts toward m, no member gains from its absence — and reports no number.
 */
import type { Protocol } from '../protocol/index.js';
import { holm, mcnemarExact, type MaybePValue } from '../stats/index.js';
import type { EstimandResult, GateResult, HolmFamilyResult, HolmMember } from './types.js';
import { invalidBecause } from './validity.js';

export function discordantPair(e: EstimandResult): [number, number] | null {
  if (e.status !== 'available') return null;
  const { b, c, bPrime, cPrime } = e.counts;
  if (b !== undefined && c !== undefined) return [b, c];
  if (bPrime !== undefined && cPrime !== undefined) return [bPrime, cPrime];
  return null;
}

export function holmFamilyResults(
  protocol: Protocol,
  estimands: readonly EstimandResult[],
  gates: readonly GateResult[],
): HolmFamilyResult[] {
  return protocol.holmFamilies.map((f) => {
    const slots = f.contrasts.map((id) => {
      const e = estimands.find((x) => x.id === id);
      if (e === undefined) return { estimand: id, status: 'unavailable' as const, p: null };
      if (e.status === 'unavailable') return { estimand: id, status: 'unavailable' as const, p: null };
      if (invalidBecause(e, gates).length > 0) return { estimand: id, status: 'invalid' as const, p: null };
      const pair = discordantPair(e);
      if (pair === null) return { estimand: id, status: 'unavailable' as const, p: null };
      const p = mcnemarExact(pair[0], pair[1], f.test === 'mcnemar-exact-one-sided' ? 'greater' : 'two-sided');
      return { estimand: id, status: 'available' as const, p };
    });
    const adjusted = holm(slots.map((s): MaybePValue => (s.p === null ? 'unavailable' : s.p)));
    const members: HolmMember[] = slots.map((s, i) => {
      const adj = adjusted[i];
      const value = typeof adj === 'number' ? adj : null;
      // Rejected when the adjusted p lies below α: the rule a p-below criterion registers (the paper's "p < 0.05"),
      // so the family table and a verdict on the same member cannot disagree at a p equal to α.
      return { ...s, adjusted: value, rejected: value === null ? null : value < f.alpha };
    });
    return { id: f.id, alpha: f.alpha, test: f.test, repairBudget: f.repairBudget, members };
  });
}

/** The Holm-adjusted p of an estimand when it is in a family (the first family listing it), else undefined. */
export function holmAdjusted(
  families: readonly HolmFamilyResult[],
  estimand: string,
): { family: string; adjusted: number | null } | undefined {
  for (const f of families) {
    const m = f.members.find((x) => x.estimand === estimand);
    if (m !== undefined) return { family: f.id, adjusted: m.adjusted };
  }
  return undefined;
}
