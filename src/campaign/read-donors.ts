/**
 * Donors for S / T swaps at READ time (src/interventions/read-swap.ts), on banks that cannot be installed into
 * (episode-local banks, hosted policies). As for installed swaps (donors.ts), a recipient's donor is another unit
 * of the same segment holding the same fact (S) or a different one (T), drawn by `assignDonors` from the
 * condition's registered seed, the fact read from the evaluator of the unit's first reset (the field its
 * environment declares). The donor's payloads are what its reads returned before its point in its reference run:
 * a deterministic pre-pass runs every unit of the segment, every attempt, whole, under the reference hook wrapped by
 * a capture, and writes no rows; it is run again on resume and on every shard, so assignments and donor payloads
 * never depend on where a run was interrupted or how it was split.
 *
 * Recipient episode ↔ donor episode: the same attempt; their pre-point records are paired by rank within each bank
 * (alignByRank). FAIL CLOSED: a unit whose pre-pass failed, with no eligible donor, or whose donor holds fewer
 * pre-point records in a bank than the unit's own reference run read, is REMOVED from the condition (E_DONOR_SHORT);
 * a pre-point record met only during the run, with no donor payload paired to it, fails that episode.
 */
import type { NdArray, ObsValue, StepResult } from '../runtime/index.js';
import { ImepError } from '../core/index.js';
import {
  assignDonors,
  type DonorAssignment,
  alignByRank,
  PrePointCapture,
  type PrePointItems,
} from '../interventions/index.js';
import type { PlannedEpisode } from '../protocol/index.js';
import { runReferencePrepass, type DonorInput } from './donors.js';
import type { FailureInfo, RunnerSubscriber, UnitJob, UnitOutcome } from './types.js';

export interface ReadDonorPlan {
  readonly assignment: DonorAssignment;
  /** recipient scope → its donor and, per recipient episode id, the paired donor episode's pre-point items. */
  readonly donors: ReadonlyMap<
    string,
    { readonly scope: string; readonly itemsOf: (episode: string) => PrePointItems | undefined }
  >;
  readonly removed: ReadonlyMap<string, FailureInfo>;
}

/** Reads each unit's fact at its first reset and which units ran every attempt ok. */
class FactsAndOutcomes implements RunnerSubscriber {
  readonly facts = new Map<string, ObsValue | NdArray | undefined>();
  readonly ranOk = new Set<string>();
  constructor(private readonly field: string) {}
  onEpisodeStart(_slot: number, episode: PlannedEpisode, first: StepResult): void {
    if (!this.facts.has(episode.scopeId)) this.facts.set(episode.scopeId, first.evaluator[this.field]);
  }
  onUnitEnd(_slot: number, unit: UnitJob, outcome: UnitOutcome): void {
    if (outcome.kind === 'ran' && outcome.statuses.every((s) => s === 'ok')) this.ranOk.add(unit.scopeId);
  }
}

export async function prepareReadDonors(
  input: DonorInput,
  factOf: (value: ObsValue | NdArray | undefined, unit: UnitJob) => number | string,
): Promise<ReadDonorPlan> {
  const { plan, segment } = input;
  const mode = plan.donorMode;
  const field = segment.task.facts.factField;
  if (mode === null || plan.donorInstallation !== 'read' || plan.seed === undefined || field === null) {
    throw new ImepError(
      'E_INTERNAL',
      `condition ${plan.condition.id} has no read-time donor swap on a task with a fact`,
    );
  }
  const capture = new PrePointCapture();
  const seen = new FactsAndOutcomes(field);
  await runReferencePrepass(input, { wrap: (hook) => capture.wrap(hook), subscribers: [seen] });
  const byScope = new Map(input.units.map((u) => [u.scopeId, u]));
  const facts = new Map<string, string>();
  for (const u of input.units)
    if (seen.ranOk.has(u.scopeId)) facts.set(u.scopeId, JSON.stringify(factOf(seen.facts.get(u.scopeId), u)));
  const assignment = assignDonors({
    units: [...facts].map(([scope, fact]) => ({ scope, fact })),
    mode,
    seed: plan.seed,
  });
  const donors = new Map<string, { scope: string; itemsOf: (episode: string) => PrePointItems | undefined }>();
  const removed = new Map<string, FailureInfo>();
  for (const u of input.units) {
    if (!facts.has(u.scopeId)) {
      removed.set(u.scopeId, {
        code: 'E_DONOR_SHORT',
        message: "the donor pre-pass could not run this unit's reference episodes; removed (fail closed)",
      });
      continue;
    }
    const donorScope = assignment.donors.get(u.scopeId);
    const donorUnit = donorScope === undefined ? undefined : byScope.get(donorScope);
    if (donorScope === undefined || donorUnit === undefined) {
      removed.set(u.scopeId, {
        code: 'E_DONOR_SHORT',
        message: `no eligible ${mode} donor among ${facts.size} units; removed (fail closed)`,
      });
      continue;
    }
    const paired = new Map<string, PrePointItems>();
    let short: string | null = null;
    for (const [i, ep] of u.episodes.entries()) {
      const dEp = donorUnit.episodes[i];
      if (dEp === undefined) {
        short = `donor ${donorScope} has no attempt ${ep.attempt}; the swap failed closed`;
        break;
      }
      const aligned = alignByRank(capture.of(ep.episodeId), capture.of(dEp.episodeId));
      if (aligned.kind === 'short') {
        short = `donor ${donorScope} holds ${aligned.donorCount} pre-point records of bank ${aligned.bank} in attempt ${ep.attempt} for ${aligned.recipientCount}; the swap failed closed (never padded)`;
        break;
      }
      paired.set(ep.episodeId, aligned.items);
    }
    if (short !== null) {
      removed.set(u.scopeId, { code: 'E_DONOR_SHORT', message: short });
      continue;
    }
    donors.set(u.scopeId, { scope: donorScope, itemsOf: (episode) => paired.get(episode) });
  }
  return { assignment, donors, removed };
}
