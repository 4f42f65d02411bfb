/**
 * The runner core: runs (part of) a plan, segment by segment, into a RowSink.
 *
 * A SEGMENT is one (wave, condition, task) run of the plan; with the canonical order wave → condition →
 * task → seed → attempt (src/protocol/plan.ts, PLAN_VERSION 2) every segment is contiguous, so its units
 * can be stepped together through one batched policy and their rows still leave in seq order through
 * the sink's reorder buffer (at most one unit per slot is ever waiting).
 *
 * Which units run: those the run selects (`include`, e.g. a shard) that still have a row at or after
 * `startSeq` (resume). A unit straddling `startSeq` is run whole — its durable rows are recomputed and
 * checked byte for byte by the sink, never written twice.
 *
 * Beside it: plan-segments.ts (segments, tasks), plan-checks.ts (what the runtime must offer, checked before
 * anything runs), durable-donors.ts (resume and the donor pre-pass).
 */
import { assertDisjointAllowlists } from '../runtime/index.js';
import type { SimEnvironment } from '../runtime/index.js';
import { ImepError, simulatorFaces } from '../core/index.js';
import { arrivalOrder } from '../evidence/index.js';
import { interventionHook, type InterventionHandle } from '../interventions/index.js';
import type { ExecutionNoise, PlannedEpisode, Protocol } from '../protocol/index.js';
import { conditionPlan, type ConditionPlan } from './condition-plan.js';
import { declaredFact, prepareDonors } from './donors.js';
import { assertSameDonors } from './durable-donors.js';
import { prepareReadDonors } from './read-donors.js';
import { runSegmentLoop } from './episode-loop.js';
import { checkCondition, checkFacts } from './plan-checks.js';
import { conditionOf, segmentsOf, taskContext, taskEntries, type Segment } from './plan-segments.js';
import { RowRecorder } from './row-recorder.js';
import type { RowSink } from './row-sink.js';
import { FrameRecorder, recordedSeeds, renderOnRequest, toolTrackField } from './frame-recorder.js';
import type {
  EnvProvider,
  PolicyProvider,
  RunnerPolicy,
  RunnerSubscriber,
  SegmentInfo,
  TaskContext,
  TaskEntry,
  UnitJob,
} from './types.js';

export { segmentsOf, taskContext, taskEntries, type Segment } from './plan-segments.js';
export { checkCondition, checkFacts, checkRuntime, installable, noFactError, preflightPlan } from './plan-checks.js';
export { readDurableDonors } from './durable-donors.js';

export interface RunPlanInput {
  readonly protocol: Protocol;
  /** Plan episodes in seq order (the full plan, or a small run's renumbered subset). */
  readonly episodes: readonly PlannedEpisode[];
  readonly policies: PolicyProvider;
  readonly envs: EnvProvider;
  readonly batchSize: number;
  readonly sink: RowSink;
  /** Rows below this seq are durable already (resume). */
  readonly startSeq?: number;
  /**
   * Resume: the donor-assignment trace lines already durable (traces/donors.jsonl), canonical JSON by seq. A segment
   * whose first row is durable has its assignment recomputed by the pre-pass; it must equal the durable one, or
   * rows after the resume would be built on another assignment than the rows before it (readDurableDonors).
   */
  readonly durableDonors?: ReadonlyMap<number, string>;
  /**
   * The unit's arrival-order key (arrival-order.ts; hosted policies): each segment's units reach the policy in the
   * keyed order, rows still leave in seq order. Null or absent: plan order.
   */
  readonly arrivalKey?: string | null;
  /** Units this run executes (default: all), e.g. one shard. */
  readonly include?: (unit: UnitJob) => boolean;
  readonly subscribers?: readonly RunnerSubscriber[];
  /** The progress display of a segment's donor pre-pass (S/T), given its label and units (none: silent). */
  readonly prepassSubscribers?: (units: readonly UnitJob[]) => readonly RunnerSubscriber[];
  /** Checked once per batched step, main loop and pre-pass: a returned error ends the run (a clean stop, run-stop.ts). */
  readonly abort?: () => unknown;
}

export async function runPlan(input: RunPlanInput): Promise<void> {
  assertDisjointAllowlists(input.protocol.allowlists, 'allowlists');
  const run = new PlanRun(input);
  const segments = run.segmentsToRun();
  try {
    run.checkFacts(segments);
    for (const { seg, run: units } of segments) await run.runSegment(seg, units);
  } finally {
    await run.closeEnvs();
  }
}

/** How many tasks keep their slot environments open at once (PlanRun.envsOf). */
export const OPEN_TASK_ENVS = 4;

type Donors = Awaited<ReturnType<typeof prepareDonors>> | Awaited<ReturnType<typeof prepareReadDonors>>;

/** What a segment's donor pre-pass and loop share. */
interface SegmentRun {
  readonly seg: Segment;
  readonly segment: SegmentInfo;
  readonly task: TaskContext;
  readonly plan: ConditionPlan;
  readonly policy: RunnerPolicy;
  readonly envFor: (slot: number) => SimEnvironment;
  readonly resetOptions: Readonly<Record<string, unknown>>;
  readonly arrival: (list: readonly UnitJob[]) => UnitJob[];
}

/** One runPlan call: its tasks' contexts, policies and environments (made once each), and each step of a segment. */
class PlanRun {
  private readonly startSeq: number;
  private readonly include: (unit: UnitJob) => boolean;
  private readonly tasks: Map<string, TaskEntry>;
  private readonly contexts = new Map<string, TaskContext>();
  private readonly maxTries: number;
  private readonly noise: { executionNoise?: ExecutionNoise };
  private readonly policies = new Map<string, RunnerPolicy>();
  private readonly envs = new Map<string, SimEnvironment[]>();
  /** The tasks whose segments ran, least recently used first (keepOpen). */
  private readonly inUse = new Set<string>();
  private readonly frameSeeds: ReturnType<typeof recordedSeeds> | null;

  constructor(private readonly input: RunPlanInput) {
    const { protocol } = input;
    this.startSeq = input.startSeq ?? 0;
    this.include = input.include ?? (() => true);
    this.tasks = taskEntries(protocol);
    this.maxTries = protocol.executionFailures.policy === 'retry' ? 1 + protocol.executionFailures.maxRetries : 1;
    const noiseSpec = simulatorFaces.get(protocol.simulator.kind)?.executionNoise?.(protocol.simulator);
    this.noise = noiseSpec === undefined ? {} : { executionNoise: noiseSpec };
    this.frameSeeds = protocol.frames === undefined ? null : recordedSeeds(protocol.frames, input.episodes);
  }

  /** The segments with units this run executes (selected, with a row at or after startSeq), each with those units. */
  segmentsToRun(): { seg: Segment; run: UnitJob[] }[] {
    return segmentsOf(this.input.episodes)
      .map((seg) => ({
        seg,
        run: seg.units.filter((u) => this.include(u) && u.episodes.some((e) => e.seq >= this.startSeq)),
      }))
      .filter((s) => s.run.length > 0);
  }

  /**
   * Before any row: each task's facts are what its environment declares (slot 0's spec; every slot makes the same
   * environment), and every condition this run carries out must find what it needs in them (S/T: a fact).
   */
  checkFacts(segments: readonly { seg: Segment }[]): void {
    for (const { seg } of segments) {
      const entry = this.tasks.get(seg.task);
      if (entry === undefined)
        throw new ImepError('E_PROTOCOL_INVALID', `the plan names task ${seg.task}, which no env defines`, {
          field: 'envs',
        });
      let task = this.contexts.get(seg.task);
      if (task === undefined) this.contexts.set(seg.task, (task = taskContext(entry, this.envsOf(entry)(0).spec)));
      checkFacts(conditionPlan(conditionOf(this.input.protocol, seg.condition)), task);
    }
  }

  /** One segment: its donor pre-pass (S/T), its units in the loop, its rows settled before the next segment. */
  async runSegment(seg: Segment, run: readonly UnitJob[]): Promise<void> {
    const { protocol, sink } = this.input;
    const s = await this.segmentRun(seg);
    // the frame recorder hands its trace line to the sink before the row recorder puts the episode's row
    const frames =
      this.frameSeeds === null
        ? []
        : [
            new FrameRecorder(
              protocol.frames!,
              this.frameSeeds,
              sink,
              renderOnRequest(protocol),
              toolTrackField(this.envsOf(this.contexts.get(seg.task) as TaskContext)(0).spec),
            ),
          ];
    const subscribers: RunnerSubscriber[] = [
      ...frames,
      new RowRecorder(s.plan, sink),
      ...(this.input.subscribers ?? []),
    ];
    const donors = s.plan.donorMode === null ? null : await this.prepareSegmentDonors(s);
    const removed = donors?.removed ?? new Map();
    const units = s.arrival(run.filter((u) => !removed.has(u.scopeId)));
    for (const u of run) {
      const failure = removed.get(u.scopeId);
      if (failure !== undefined) for (const sub of subscribers) sub.onUnitEnd?.(-1, u, { kind: 'removed', failure });
    }
    await runSegmentLoop({
      segment: s.segment,
      plan: s.plan,
      policy: s.policy,
      envFor: s.envFor,
      allowlists: protocol.allowlists,
      resetOptions: s.resetOptions,
      units,
      handleFor: handlesOf(s.plan, donors),
      maxTries: this.maxTries,
      subscribers,
      abort: () => sink.error ?? this.input.abort?.(),
      ...this.noise,
    });
    // the segment's rows are written before the next segment starts, so a write error or a stop the row target
    // raised (the execution-failure budget) ends the run here instead of after another segment's episodes
    await sink.settle();
    if (sink.error !== undefined) throw sink.error;
  }

  async closeEnvs(): Promise<void> {
    for (const list of this.envs.values()) for (const e of list) await e?.close().catch(() => undefined);
  }

  /** The segment's condition, task, policy (made once per task) and environments, its plan checked. */
  private async segmentRun(seg: Segment): Promise<SegmentRun> {
    const condition = conditionOf(this.input.protocol, seg.condition);
    const task = this.contexts.get(seg.task) as TaskContext;
    const envFor = this.envsOf(task);
    await this.keepOpen(task.task);
    let policy = this.policies.get(seg.task);
    if (policy === undefined)
      this.policies.set(seg.task, (policy = await this.input.policies.policyFor(task, this.input.batchSize)));
    const plan = checkCondition(condition, task, policy, this.input.policies.description);
    const segment: SegmentInfo = { wave: seg.wave, condition, task, phase: 'main' };
    const resetOptions = { ...(condition.envKwargs ?? {}) };
    const key = { wave: seg.wave, condition: condition.id, task: seg.task };
    const arrival = (list: readonly UnitJob[]): UnitJob[] => arrivalOrder(this.input.arrivalKey ?? null, key, list);
    return { seg, segment, task, plan, policy, envFor, resetOptions, arrival };
  }

  /**
   * Before a segment of `task`: at most OPEN_TASK_ENVS tasks keep their slot environments open. A suite's segments go
   * condition by condition over every task, and a real simulator's env holds its whole scene (a LIBERO env ~850 MB:
   * libero-90's 90 tasks would need ~77 GB), so the least recently used task's environments are closed; they are made
   * again when its next segment comes (a reset depends on its seed only, never on the env's history).
   */
  private async keepOpen(task: string): Promise<void> {
    this.inUse.delete(task);
    this.inUse.add(task); // re-inserted last: the set's order is the use order
    for (const other of this.inUse) {
      if (this.inUse.size <= OPEN_TASK_ENVS) break;
      this.inUse.delete(other);
      const envs = this.envs.get(other) ?? [];
      this.envs.delete(other);
      for (const e of envs) await e?.close().catch(() => undefined);
    }
  }

  /** The slot environments of a task (each made on first use). */
  private envsOf(entry: TaskEntry): (slot: number) => SimEnvironment {
    let list = this.envs.get(entry.task);
    if (list === undefined) this.envs.set(entry.task, (list = []));
    const slots = list;
    return (slot) => (slots[slot] ??= this.input.envs(entry, slot));
  }

  /**
   * S/T: the donor pre-pass over the segment's units, and its assignment line, written once just before the
   * segment's first row this run (or shard) owns — or, where that row is durable already, checked against the line
   * the durable rows were run with.
   */
  private async prepareSegmentDonors(s: SegmentRun): Promise<Donors> {
    const { seg, segment, plan, task } = s;
    const donorInput = {
      segment,
      plan,
      policy: s.policy,
      envFor: s.envFor,
      allowlists: this.input.protocol.allowlists,
      resetOptions: s.resetOptions,
      units: seg.units,
      maxTries: this.maxTries,
      arrival: s.arrival,
      subscribers: this.input.prepassSubscribers?.(seg.units) ?? [],
      ...(this.input.abort === undefined ? {} : { abort: this.input.abort }),
      ...this.noise,
    };
    const donors =
      plan.donorInstallation === 'read'
        ? await prepareReadDonors(donorInput, (value, unit) =>
            declaredFact(segment, task.facts.factField as string, value, unit),
          )
        : await prepareDonors(donorInput);
    const first = seg.units.find((u) => this.include(u))?.episodes[0];
    if (first !== undefined) {
      const entry = {
        seq: first.seq,
        wave: seg.wave,
        condition: segment.condition.id,
        task: seg.task,
        mode: donors.assignment.mode,
        seed: donors.assignment.seed,
        entries: donors.assignment.entries,
      };
      if (first.seq >= this.startSeq) this.input.sink.trace(first.seq, { stream: 'donors', entry });
      else if (this.input.durableDonors !== undefined)
        assertSameDonors(this.input.durableDonors.get(first.seq), entry, seg);
    }
    return donors;
  }
}

/** A fresh intervention handle per unit try: the plan's condition, with the unit's donor where it has one. */
function handlesOf(plan: ConditionPlan, donors: Donors | null): (u: UnitJob) => InterventionHandle {
  return (u) => {
    const donor = donors?.donors.get(u.scopeId);
    return interventionHook(plan.spec, {
      scope: u.scopeId,
      point: plan.pointLabel,
      ...(plan.seed === undefined ? {} : { seed: plan.seed }),
      ...(donor === undefined ? {} : 'records' in donor ? { donor } : { donorReads: donor }),
    });
  };
}
