/**
 * The decision-level C/U/S/T ladder on curated records (IMEP paper §3.2, Appendix B.2), applied to the
 * full-memory nearest-centroid readout. Only the evaluated event feature changes; for every chain and
 * every condition the presence gate, the stage-2 record and the leave-one-chain-out centroids are
 * recomputed from the curated records and asserted identical to C's (else E_INTERNAL) — the selection
 * path and the centroids are the same across conditions by check, not by assumption.
 *
 *  - C: the selected record's own feature, copied (installs nothing). Must reproduce every archived
 *    full-memory decision.
 *  - U: every element of that feature stepped by one ULP (`stepTensorUlp`, float32, direction 'away').
 *  - S: the deciding feature of another chain with the same K and the same final drawer (same fact).
 *  - T: the deciding feature of another chain with the same K and a different final drawer.
 * Donors follow `assignDonors`' rule (src/interventions/donor-assignment.ts; computed by donors.ts in
 * O(n log n)) per K group, seeded with `<seed>/K=<K>`; a chain with no eligible donor is not run under
 * that condition.
 *
 * Chains enter the ladder when their archived full-memory decision went through the readout
 * (path 'readout'); others are counted as excluded.
 */
import { ImepError } from '../core/index.js';
import type { Seed } from '../core/index.js';
import type { DonorAssignmentEntry } from '../interventions/index.js';
import { assignDonorsFast } from './donors.js';
import { stepTensorUlp } from '../interventions/index.js';
import { centroidDigest } from './centroids.js';
import { centroidsOf, type ConditionDecisions } from './conditions.js';
import type { Chain, ChainManifest } from './manifest-schema.js';
import { chainEvents, chainMemory, type ChainRecordSet } from './records.js';
import { nearestCentroid, selectDecidingRecord } from './readout.js';

export const LADDER_CONDITIONS = ['C', 'U', 'S', 'T'] as const;
export type LadderCondition = (typeof LADDER_CONDITIONS)[number];

export interface LadderRow {
  readonly chainId: string;
  /** The chain whose feature was evaluated (S, T), else null. */
  readonly donorChainId: string | null;
  readonly recordId: string;
  readonly centroidDigest: string;
  readonly choice: number;
  readonly archivedChoice: number;
  /** choice ≠ archived full-memory choice. */
  readonly changed: boolean;
  readonly correct: boolean;
}

export interface LadderResult {
  readonly seed: string;
  /** Chains in the ladder (archived decision through the readout). */
  readonly chains: number;
  readonly excluded: readonly string[];
  readonly rows: Readonly<Record<LadderCondition, readonly LadderRow[]>>;
  readonly donors: { readonly S: readonly DonorAssignmentEntry[]; readonly T: readonly DonorAssignmentEntry[] };
  /** Every U feature element changed by one ULP (none non-finite). */
  readonly ulpElementsStepped: number;
  /** Selection path and centroids were identical to C's for every chain and condition (else it threw). */
  readonly pathIdentical: true;
}

interface Base {
  readonly chain: Chain;
  readonly recordId: string;
  readonly feature: Float32Array;
  readonly archived: number;
}

function selectionOf(chain: Chain, records: ChainRecordSet): { recordId: string; feature: Float32Array } | null {
  const events = chainEvents(records, chain.id);
  const sel = selectDecidingRecord(chainMemory(chain, events, 'latest-write'), chain);
  if (sel.record === null) return null;
  const id = sel.record.id;
  const feature = events.find((ev) => ev.record.id === id)?.feature;
  return feature === undefined ? null : { recordId: id, feature };
}

export function runDecisionLadder(
  manifest: ChainManifest,
  records: ChainRecordSet,
  opts: { readonly seed: Seed; readonly archived: ConditionDecisions },
): LadderResult {
  const seed = String(opts.seed);
  const centroids = centroidsOf(records);
  const archived = new Map(opts.archived.map((d) => [d.chainId, d]));
  const bases = new Map<string, Base>();
  const excluded: string[] = [];
  for (const chain of manifest.chains) {
    const a = archived.get(chain.id);
    const sel = a?.path === 'readout' ? selectionOf(chain, records) : null;
    if (a === undefined || sel === null) excluded.push(chain.id);
    else bases.set(chain.id, { chain, recordId: sel.recordId, feature: sel.feature, archived: a.choice });
  }

  const donorMaps = { S: new Map<string, string>(), T: new Map<string, string>() };
  const donorEntries: { S: DonorAssignmentEntry[]; T: DonorAssignmentEntry[] } = { S: [], T: [] };
  for (const K of [...new Set([...bases.values()].map((b) => b.chain.K))].sort((x, y) => x - y)) {
    const units = [...bases.values()]
      .filter((b) => b.chain.K === K)
      .map((b) => ({ scope: b.chain.id, fact: b.chain.drawers[b.chain.finalFact.drawer] as string }));
    for (const [cond, mode] of [
      ['S', 'same-fact'],
      ['T', 'different-fact'],
    ] as const) {
      const a = assignDonorsFast({ units, mode, seed: `${seed}/K=${K}` });
      for (const [r, d] of a.donors) donorMaps[cond].set(r, d);
      donorEntries[cond].push(...a.entries);
    }
  }

  const rows: Record<LadderCondition, LadderRow[]> = { C: [], U: [], S: [], T: [] };
  let ulpElementsStepped = 0;
  for (const base of bases.values()) {
    const { chain } = base;
    let reference: { recordId: string; digest: string } | undefined;
    for (const cond of LADDER_CONDITIONS) {
      let feature: Float32Array;
      let donor: string | null = null;
      if (cond === 'C') feature = base.feature.slice();
      else if (cond === 'U') {
        const r = stepTensorUlp({ dtype: 'float32', shape: [base.feature.length], data: base.feature }, 'away');
        if (r.nonFinite !== 0 || r.tensor.dtype !== 'float32') {
          throw new ImepError('E_INTERNAL', `ladder U: chain ${chain.id}: ${r.nonFinite} non-finite feature elements`);
        }
        feature = r.tensor.data;
        ulpElementsStepped += feature.length;
      } else {
        donor = donorMaps[cond].get(chain.id) ?? null;
        if (donor === null) continue;
        feature = (bases.get(donor) as Base).feature.slice();
      }
      // Recompute the selection path and the centroids for this condition, then hold them to C's.
      const sel = selectionOf(chain, records);
      const cents = centroids.forChain(chain.id, chain.drawers);
      const digest = centroidDigest(cents);
      if (sel === null || sel.recordId !== base.recordId) {
        throw new ImepError('E_INTERNAL', `ladder ${cond}: chain ${chain.id}: the selected record differs from C's`);
      }
      reference ??= { recordId: sel.recordId, digest };
      if (reference.digest !== digest || reference.recordId !== sel.recordId) {
        throw new ImepError(
          'E_INTERNAL',
          `ladder ${cond}: chain ${chain.id}: centroids or selection path differ from C's`,
        );
      }
      const { choice } = nearestCentroid(feature, cents);
      if (choice === null)
        throw new ImepError('E_INTERNAL', `ladder ${cond}: chain ${chain.id}: no centroid to read out`);
      rows[cond].push({
        chainId: chain.id,
        donorChainId: donor,
        recordId: sel.recordId,
        centroidDigest: digest,
        choice,
        archivedChoice: base.archived,
        changed: choice !== base.archived,
        correct: choice === chain.finalFact.drawer,
      });
    }
  }
  return {
    seed,
    chains: bases.size,
    excluded,
    rows,
    donors: donorEntries,
    ulpElementsStepped,
    pathIdentical: true,
  };
}
