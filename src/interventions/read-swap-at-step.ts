/**
 * The S/T read-time swap at a registered ELAPSED STEP — the operator version `imep calibrate`'s ladder names (its
 * designs register `pointStep` per task; src/calibration/ladder-run.ts). The campaign's read-time swap
 * (read-swap.ts) acts at the first DECISION query the environment declares and pairs records by rank per bank;
 * this one acts from a fixed step and pairs the donor's write at the same timestep, one leaf. Both live here, each
 * named by what it does, so an operator a supported design can name has exactly one implementation.
 *
 * Same-fact (S) and different-fact (T) donor swaps for episode-local banks, at read time.
 *
 * The campaign runner's S/T install donor records once at a registered point into a structured bank;
 * the lite checkpoints keep an episode-local bank that cannot be installed into
 * (src/campaign/checkpoint-policy.ts). The swap here is the read-time equivalent of that point
 * installation (and of scripts/checkpoints/competence.ts's different-fact condition): from the registered
 * point `pointStep` on (every read at elapsed step ≥ pointStep), each retrieved item written BEFORE the
 * point (timestep < pointStep — the records an installation at the point would replace) has its `leaf`
 * replaced by the donor episode's write at the same timestep; the item's identity is kept, and items
 * written after the point are the recipient's own. Donor writes come from the donor's reference (A) run.
 *
 * FAIL CLOSED: a donor lacking any pre-point timestep of its recipient is refused up front
 * (`checkDonorWrites`), so no unit runs partly unsubstituted.
 */
import type { ReadHook, RetrievedItem } from '../banks/index.js';
import type { FloatTensor } from '../core/index.js';

/** Pre-point writes of one episode: timestep → written leaf. */
export type PrePointWrites = ReadonlyMap<number, FloatTensor>;

export interface SwapCounters {
  /** Reads at or after the point. */
  reads: number;
  /** Of those, reads with ≥ 1 substituted item. */
  substitutedReads: number;
  /** Items replaced in all. */
  substitutedItems: number;
}

/** True when the donor holds a write at every timestep the recipient wrote before the point. */
export function checkDonorWrites(recipient: PrePointWrites, donor: PrePointWrites): boolean {
  for (const t of recipient.keys()) if (!donor.has(t)) return false;
  return true;
}

/**
 * The swap hook. `donorOf(episode)` gives the donor's pre-point writes for a recipient episode (undefined:
 * the episode is not swapped — never the case for a unit that runs under S or T).
 */
export function readSwapAtStepHook(options: {
  readonly pointStep: number;
  readonly leaf: string;
  readonly donorOf: (episode: string) => PrePointWrites | undefined;
  readonly counters?: SwapCounters;
}): ReadHook {
  const { pointStep, leaf, donorOf, counters } = options;
  return (items, ctx) => {
    // queryIndex counts the episode's reads from 1: the read at elapsed step t has queryIndex t + 1
    if (ctx.queryIndex - 1 < pointStep) return items;
    const donor = donorOf(ctx.episode);
    if (counters) counters.reads += 1;
    if (donor === undefined) return items;
    let swapped = 0;
    const out = items.map((it): RetrievedItem => {
      if (it.identity.timestep >= pointStep) return it;
      const f = donor.get(it.identity.timestep);
      if (f === undefined) return it;
      swapped += 1;
      return { identity: it.identity, leaves: { ...it.leaves, [leaf]: f } };
    });
    if (counters && swapped > 0) {
      counters.substitutedReads += 1;
      counters.substitutedItems += swapped;
    }
    return out;
  };
}
