/**
 * Donor assignment for S (same-fact) and T (different-fact) swaps. Deterministic in the registered seed:
 * each recipient draws its donor from its own Prng stream `Prng(seed).fork("donor/" + scope)` among the
 * eligible scopes sorted by name, so the assignment of one unit does not depend on which other units are
 * listed before it. No unit is its own donor; a donor may serve several recipients; a recipient with no
 * eligible donor is recorded with donor `null` (and is not run under that condition).
 */
import { ImepError, Prng, type PrngSpec, type Seed } from '../core/index.js';

export type DonorMode = 'same-fact' | 'different-fact';

export interface DonorUnit {
  readonly scope: string;
  /** The target fact under test (e.g. the cue colour), compared by equality. */
  readonly fact: string;
}

export interface DonorAssignmentEntry {
  readonly recipient: string;
  readonly recipientFact: string;
  readonly donor: string | null;
  readonly donorFact: string | null;
  /** How many scopes were eligible. */
  readonly eligible: number;
}

export interface DonorAssignment {
  readonly mode: DonorMode;
  readonly seed: Seed;
  readonly prng: PrngSpec;
  /** recipient scope → donor scope (recipients without an eligible donor are absent). */
  readonly donors: ReadonlyMap<string, string>;
  /** The recorded assignment, sorted by recipient scope (JSON-serialisable). */
  readonly entries: readonly DonorAssignmentEntry[];
}

export function assignDonors(options: { units: readonly DonorUnit[]; mode: DonorMode; seed: Seed }): DonorAssignment {
  const { units, mode, seed } = options;
  const byScope = new Map<string, DonorUnit>();
  for (const u of units) {
    if (byScope.has(u.scope)) {
      throw new ImepError('E_INTERVENTION_INVALID', `donor assignment: scope ${u.scope} is listed twice`, {
        field: 'units',
      });
    }
    byScope.set(u.scope, u);
  }
  const sorted = [...byScope.values()].sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0));
  const base = new Prng(seed);
  const donors = new Map<string, string>();
  const entries: DonorAssignmentEntry[] = [];
  for (const r of sorted) {
    const eligible = sorted.filter(
      (d) => d.scope !== r.scope && (mode === 'same-fact' ? d.fact === r.fact : d.fact !== r.fact),
    );
    if (eligible.length === 0) {
      entries.push({ recipient: r.scope, recipientFact: r.fact, donor: null, donorFact: null, eligible: 0 });
      continue;
    }
    const d = eligible[base.fork(`donor/${r.scope}`).nextInt(eligible.length)] as DonorUnit;
    donors.set(r.scope, d.scope);
    entries.push({
      recipient: r.scope,
      recipientFact: r.fact,
      donor: d.scope,
      donorFact: d.fact,
      eligible: eligible.length,
    });
  }
  return { mode, seed, prng: base.spec, donors, entries };
}
