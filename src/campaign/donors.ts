/**
 * Donors for S / T swaps. A recipient's donor is another unit of the same segment (same condition and
 * task) holding the same fact (S) or a different one (T), drawn by `assignDonors` from the condition's
 * registered seed. Its records are the donor's own bank records at the registered point, BEFORE any
 * installation: a deterministic pre-pass runs every unit of the segment up to the start of the point's
 * attempt under the reference hook (before the point, S and T are the reference) and snapshots the
 * scope's records and the unit's fact (the task's evaluator-only fact field, read at that reset).
 * The pre-pass writes no rows; it is run again on resume and on every shard, so assignments and donor
 * records never depend on where a run was interrupted or how it was split.
 *
 * FAIL CLOSED: a unit with no eligible donor, or whose donor holds fewer records than it does, is
 * REMOVED from the condition (its rows 'removed', E_DONOR_SHORT) — never padded, never run unsubstituted.
 */
import type { BankRecord, ReadHook } from '../banks/index.js';
import { ImepError } from '../core/index.js';
import { interventionHook, assignDonors, type DonorAssignment, snapshotRecords } from '../interventions/index.js';
import type { Allowlists, NdArray, ObsValue, SimEnvironment } from '../runtime/index.js';
import { isNdArray } from '../bridges/index.js';
import type { ConditionPlan } from './condition-plan.js';
import { runSegmentLoop, type LoopInput } from './episode-loop.js';
import type { FailureInfo, RunnerPolicy, RunnerSubscriber, SegmentInfo, UnitJob } from './types.js';

export interface DonorPlan {
  readonly assignment: DonorAssignment;
  /** recipient scope → its donor and the donor's records at the point. */
  readonly donors: ReadonlyMap<string, { readonly scope: string; readonly records: readonly BankRecord[] }>;
  /** Units removed before running, with why. */
  readonly removed: ReadonlyMap<string, FailureInfo>;
}

export interface DonorInput {
  readonly segment: SegmentInfo;
  readonly plan: ConditionPlan;
  readonly policy: RunnerPolicy;
  readonly envFor: (slot: number) => SimEnvironment;
  readonly allowlists: Allowlists;
  readonly resetOptions: Readonly<Record<string, unknown>>;
  /** Every unit of the segment (not only those this run writes). */
  readonly units: readonly UnitJob[];
  readonly maxTries: number;
  /** The order the pre-pass runs `units` in (arrival-order.ts; default: as given). The assignment never depends on it. */
  readonly arrival?: (units: readonly UnitJob[]) => readonly UnitJob[];
  /** The registered execution noise: the pre-pass executes the same actions the segment's own run will. */
  readonly executionNoise?: LoopInput['executionNoise'];
  /** Told of the pre-pass's units as they end (its progress line), besides the pre-pass's own subscribers. */
  readonly subscribers?: readonly RunnerSubscriber[];
  /** Checked once per batched step: a returned error ends the pre-pass (a clean stop). */
  readonly abort?: () => unknown;
}

/**
 * The unit's fact as its reset reported it: a number or string (a one-element array counts as its element), and one
 * of the values the environment declares. Anything else means the environment broke its declaration: the run stops
 * (donors paired on a wrong fact would make S and T mean nothing).
 */
export function declaredFact(
  segment: SegmentInfo,
  field: string,
  value: ObsValue | NdArray | undefined,
  unit: UnitJob,
): number | string {
  const v = isNdArray(value) && value.data.length === 1 ? Number(value.data[0]) : value;
  const domain = segment.task.facts.domain;
  if ((typeof v === 'number' || typeof v === 'string') && (domain === null || domain.includes(v))) return v;
  const shown = isNdArray(value) ? `an array of shape [${value.shape.join(',')}]` : JSON.stringify(value ?? null);
  throw new ImepError(
    'E_INTERVENTION_INVALID',
    `${segment.task.envId} reported its fact ${field} = ${shown} at the reset of unit ${unit.scopeId}, which is not one of the values it declares (${JSON.stringify(domain)})`,
    {
      field: `envs (${segment.task.envId}).fact`,
      hint: "the simulator's adapter must report the fact as one of its declared domain's values (EnvSpec.fact.domain)",
    },
  );
}

/**
 * The donor pre-pass both swaps share: every unit of the segment under the reference hook (optionally wrapped, e.g.
 * by a capture), writing no rows; `stopAt` ends each unit at the start of an attempt.
 */
export function runReferencePrepass(
  input: DonorInput,
  options: {
    readonly wrap?: (hook: ReadHook) => ReadHook;
    readonly subscribers?: readonly RunnerSubscriber[];
    readonly stopAt?: LoopInput['stopAt'];
  },
): Promise<void> {
  const { plan, segment } = input;
  return runSegmentLoop({
    segment: { ...segment, phase: 'donor-prepass' },
    plan,
    policy: input.policy,
    envFor: input.envFor,
    allowlists: input.allowlists,
    resetOptions: input.resetOptions,
    units: input.arrival === undefined ? input.units : input.arrival(input.units),
    handleFor: (u) => {
      const h = interventionHook({ kind: 'A' }, { scope: u.scopeId, point: plan.pointLabel });
      return options.wrap === undefined ? h : { ...h, hook: options.wrap(h.hook) };
    },
    maxTries: input.maxTries,
    subscribers: [...(options.subscribers ?? []), ...(input.subscribers ?? [])],
    ...(options.stopAt === undefined ? {} : { stopAt: options.stopAt }),
    ...(input.abort === undefined ? {} : { abort: input.abort }),
    ...(input.executionNoise === undefined ? {} : { executionNoise: input.executionNoise }),
  });
}

export async function prepareDonors(input: DonorInput): Promise<DonorPlan> {
  const { plan, segment } = input;
  const mode = plan.donorMode;
  const point = plan.pointAttempt;
  const field = segment.task.facts.factField;
  if (mode === null || point === null || plan.seed === undefined || plan.donorInstallation !== 'install')
    throw new ImepError('E_INTERNAL', `condition ${plan.condition.id} has no donor swap`);
  // run-plan's checkFacts refused S/T on an environment without a fact before any row
  if (field === null)
    throw new ImepError('E_INTERNAL', `condition ${plan.condition.id}: task ${segment.task.task} declares no fact`);
  const snapshots = new Map<string, { records: readonly BankRecord[]; fact: string }>();
  await runReferencePrepass(input, {
    stopAt: {
      attempt: point,
      snapshot: (slot, unit, first) => {
        const target = input.policy.slotMemory(slot).target;
        const records = target === null ? [] : (snapshotRecords(target, [unit.scopeId]).get(unit.scopeId) ?? []);
        snapshots.set(unit.scopeId, {
          records,
          fact: JSON.stringify(declaredFact(segment, field, first.evaluator[field], unit)),
        });
      },
    },
  });
  const assignment = assignDonors({
    units: [...snapshots].map(([scope, s]) => ({ scope, fact: s.fact })),
    mode,
    seed: plan.seed,
  });
  const donors = new Map<string, { scope: string; records: readonly BankRecord[] }>();
  const removed = new Map<string, FailureInfo>();
  for (const u of input.units) {
    const own = snapshots.get(u.scopeId);
    if (own === undefined) {
      removed.set(u.scopeId, {
        code: 'E_DONOR_SHORT',
        message: 'the donor pre-pass could not run this unit up to the registered point; removed (fail closed)',
      });
      continue;
    }
    const donor = assignment.donors.get(u.scopeId);
    if (donor === undefined) {
      removed.set(u.scopeId, {
        code: 'E_DONOR_SHORT',
        message: `no eligible ${mode} donor among ${snapshots.size} units; removed (fail closed)`,
      });
      continue;
    }
    const records = snapshots.get(donor)?.records ?? [];
    if (records.length < own.records.length) {
      removed.set(u.scopeId, {
        code: 'E_DONOR_SHORT',
        message: `donor ${donor} holds ${records.length} records for ${own.records.length}; the swap failed closed (never padded)`,
      });
      continue;
    }
    donors.set(u.scopeId, { scope: donor, records });
  }
  return { assignment, donors, removed };
}
