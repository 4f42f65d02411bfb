/**
 * S/T donor assignment for the ChainBench ladder: the exact rule of `assignDonors`
 * (src/interventions/donor-assignment.ts) — eligible donors sorted by scope, recipient r takes
 * eligible[Prng(seed).fork(`donor/<r>`).nextInt(|eligible|)], no self-donation, null when none is
 * eligible — computed in O(n log n) instead of O(n²) by keeping one sorted list per fact and one per
 * "every fact but f". A test holds it to assignDonors on the same units.
 */
import { ImepError, Prng, type Seed } from '../core/index.js';
import type { DonorAssignmentEntry, DonorMode, DonorUnit } from '../interventions/index.js';

const byScope = (a: DonorUnit, b: DonorUnit): number => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0);

export function assignDonorsFast(options: { units: readonly DonorUnit[]; mode: DonorMode; seed: Seed }): {
  readonly donors: ReadonlyMap<string, string>;
  readonly entries: readonly DonorAssignmentEntry[];
} {
  const { units, mode, seed } = options;
  const seen = new Set<string>();
  for (const u of units) {
    if (seen.has(u.scope))
      throw new ImepError('E_INTERVENTION_INVALID', `donor assignment: scope ${u.scope} is listed twice`, {
        field: 'units',
      });
    seen.add(u.scope);
  }
  const sorted = [...units].sort(byScope);
  const facts = [...new Set(sorted.map((u) => u.fact))];
  const sameFact = new Map(facts.map((f) => [f, sorted.filter((u) => u.fact === f)]));
  const otherFact =
    mode === 'different-fact' ? new Map(facts.map((f) => [f, sorted.filter((u) => u.fact !== f)])) : undefined;
  const position = new Map<string, number>();
  for (const list of sameFact.values()) list.forEach((u, i) => position.set(u.scope, i));
  const base = new Prng(seed);
  const donors = new Map<string, string>();
  const entries: DonorAssignmentEntry[] = [];
  for (const r of sorted) {
    let eligible: number;
    let pick: (j: number) => DonorUnit;
    if (otherFact !== undefined) {
      const list = otherFact.get(r.fact) as DonorUnit[];
      eligible = list.length;
      pick = (j) => list[j] as DonorUnit;
    } else {
      const list = sameFact.get(r.fact) as DonorUnit[];
      const self = position.get(r.scope) as number;
      eligible = list.length - 1;
      pick = (j) => list[j < self ? j : j + 1] as DonorUnit;
    }
    if (eligible === 0) {
      entries.push({ recipient: r.scope, recipientFact: r.fact, donor: null, donorFact: null, eligible: 0 });
      continue;
    }
    const d = pick(base.fork(`donor/${r.scope}`).nextInt(eligible));
    donors.set(r.scope, d.scope);
    entries.push({ recipient: r.scope, recipientFact: r.fact, donor: d.scope, donorFact: d.fact, eligible });
  }
  return { donors, entries };
}
