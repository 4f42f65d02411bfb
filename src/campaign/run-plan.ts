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
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { assertDisjointAllowlists, factsOf } from '../runtime/index.js';
import type { EnvSpec, SimEnvironment } from '../runtime/index.js';
import { canonicalJson, ImepError, simulatorFaces } from '../core/index.js';
import { readJsonLines, arrivalOrder } from '../evidence/index.js';
import { interventionHook } from '../interventions/index.js';
import type { PlannedEpisode, Protocol, ProtocolCondition } from '../protocol/index.js';
import { conditionPlan, type ConditionPlan } from './condition-plan.js';
import { declaredFact, prepareDonors } from './donors.js';
import { prepareReadDonors } from './read-donors.js';
import { runSegmentLoop } from './episode-loop.js';
import { RowRecorder } from './row-recorder.js';
import type { RowSink } from './row-sink.js';
import { FrameRecorder, recordedSeeds } from './frame-recorder.js';
import type {
  EnvProvider,
  PolicyProvider,
  RunnerPolicy,
  RunnerSubscriber,
  SegmentInfo,
  SpecSource,
  TaskContext,
  TaskEntry,
  UnitJob,
} from './types.js';

export interface Segment {
  readonly wave: number;
  readonly condition: string;
  readonly task: string;
  readonly units: readonly UnitJob[];
}

/** Splits plan episodes (in seq order) into segments and units. */
export function segmentsOf(episodes: readonly PlannedEpisode[]): Segment[] {
  const out: {
    wave: number;
    condition: string;
    task: string;
    units: { task: string; seed: number; scopeId: string; episodes: PlannedEpisode[] }[];
  }[] = [];
  for (const ep of episodes) {
    let seg = out.at(-1);
    if (seg === undefined || seg.wave !== ep.wave || seg.condition !== ep.condition || seg.task !== ep.task) {
      seg = { wave: ep.wave, condition: ep.condition, task: ep.task, units: [] };
      out.push(seg);
    }
    let unit = seg.units.at(-1);
    if (unit === undefined || unit.scopeId !== ep.scopeId) {
      unit = { task: ep.task, seed: ep.seed, scopeId: ep.scopeId, episodes: [] };
      seg.units.push(unit);
    }
    unit.episodes.push(ep);
  }
  return out;
}

/** The tasks of a protocol, by plan task name. */
export function taskEntries(protocol: Protocol): Map<string, TaskEntry> {
  return new Map(
    protocol.envs.map((e) => {
      const task = e.task ?? e.id;
      return [task, { task, envId: e.id, kwargs: { ...(e.kwargs ?? {}) } }];
    }),
  );
}

/** A task with the facts its environment's spec declares. */
export function taskContext(entry: TaskEntry, spec: EnvSpec): TaskContext {
  return { ...entry, facts: factsOf(spec) };
}

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
}

function conditionOf(protocol: Protocol, id: string): ProtocolCondition {
  const c = protocol.conditions.find((x) => x.id === id);
  if (c === undefined)
    throw new ImepError('E_PROTOCOL_INVALID', `the plan names condition ${id}, which the protocol does not define`, {
      field: 'waves',
    });
  return c;
}

/**
 * Refuses, before anything runs, a condition the runtime cannot carry out on a task: O without an oracle source, a
 * point-acting condition on a bank that cannot be installed into (checkRuntime), an S/T swap on a task whose
 * environment declares no fact (checkFacts).
 */
export function checkCondition(
  condition: ProtocolCondition,
  task: TaskContext,
  policy: RunnerPolicy,
  runtime: string,
): ConditionPlan {
  const plan = checkRuntime(condition, installable(policy), runtime);
  checkFacts(plan, task);
  return plan;
}

/** Whether the runtime's bank can be installed into (a structured bank): what point-acting conditions need. */
export const installable = (policy: RunnerPolicy): boolean => policy.slotMemory(0).target !== null;

/**
 * What the policy runtime must offer the condition: `installable` says whether its bank can be installed into (known
 * before any policy is made: a structured-pcmb checkpoint only; precommit-checks.ts asks without loading it).
 */
export function checkRuntime(condition: ProtocolCondition, installable: boolean, runtime: string): ConditionPlan {
  const plan = conditionPlan(condition);
  if (plan.oracle) {
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `condition "${condition.id}" (${condition.kind}) needs an oracle source, which this policy runtime does not provide`,
      { field: `conditions.${condition.id}` },
    );
  }
  if (plan.pointAttempt !== null && !installable) {
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `condition "${condition.id}" acts at a registered point, but the policy's bank (${runtime}) cannot be installed into`,
      {
        field: `conditions.${condition.id}.installAt`,
        hint: 'point-acting conditions (U install, N clear, S, T) need a structured bank that persists across attempts',
      },
    );
  }
  return plan;
}

/** What the task's environment must declare for the condition (a fact, for S/T). */
export function checkFacts(plan: ConditionPlan, task: TaskContext): void {
  if (plan.donorMode !== null && task.facts.factField === null) throw noFactError(plan.condition.id, task);
}

/** S/T on a task whose environment declares no fact. */
export function noFactError(conditionId: string, task: TaskEntry): ImepError {
  return new ImepError(
    'E_PROTOCOL_INVALID',
    `condition "${conditionId}" swaps donors by fact, but the environment ${task.envId} (task ${task.task}) declares no fact`,
    {
      field: `conditions.${conditionId}`,
      hint: 'S/T donor swaps run on environments whose spec declares the evaluator-only field holding the task\'s fact (EnvSpec.fact; sim-bridge/PROTOCOL.md "Facts"): declare it in the simulator\'s adapter, or drop the condition',
    },
  );
}

/**
 * Checks every (condition, task) of a plan against the runtime (policyFor once per task). A task whose spec is not
 * known yet (`specs` gives undefined: a bridged simulator) is checked against its environment's declared facts
 * when the simulator's servers start (bridge-envs.ts, checkDeclaredFacts), before any row is written.
 */
export async function preflightPlan(
  protocol: Protocol,
  episodes: readonly PlannedEpisode[],
  policies: PolicyProvider,
  batchSize: number,
  specs: SpecSource,
): Promise<void> {
  assertDisjointAllowlists(protocol.allowlists, 'allowlists');
  const tasks = taskEntries(protocol);
  const seen = new Set<string>();
  const made = new Map<string, { policy: RunnerPolicy; task: TaskContext | null }>();
  for (const seg of segmentsOf(episodes)) {
    const key = `${seg.condition}\u001f${seg.task}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = tasks.get(seg.task);
    if (entry === undefined)
      throw new ImepError('E_PROTOCOL_INVALID', `the plan names task ${seg.task}, which no env defines`, {
        field: 'envs',
      });
    let m = made.get(seg.task);
    if (m === undefined) {
      const spec = specs(entry);
      const task = spec === undefined ? null : taskContext(entry, spec);
      // a spec not known yet: the policy is made for the runtime checks alone (its decision-step rule is unused)
      const policy = await policies.policyFor(task ?? { ...entry, facts: factsOf(undefined) }, batchSize);
      made.set(seg.task, (m = { policy, task }));
    }
    const plan = checkRuntime(conditionOf(protocol, seg.condition), installable(m.policy), policies.description);
    if (m.task !== null) checkFacts(plan, m.task);
  }
}

/**
 * The donor-assignment trace lines of a resumed run or shard (`traces/donors.jsonl` in `tracesDir`), canonical JSON
 * by seq; complete lines only (a torn tail is cut before the run resumes).
 */
export async function readDurableDonors(tracesDir: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const file = join(tracesDir, 'donors.jsonl');
  if (!existsSync(file)) return out;
  for (const line of (await readJsonLines(file)).lines) {
    const seq = (line as { seq?: unknown } | null)?.seq;
    if (typeof seq === 'number') out.set(seq, canonicalJson(line));
  }
  return out;
}

/** Refuses a resumed segment whose recomputed donor assignment is not the one its durable rows were run with. */
function assertSameDonors(
  durable: string | undefined,
  entry: Readonly<Record<string, unknown>>,
  seg: { wave: number; condition: string; task: string },
): void {
  if (durable === canonicalJson(entry)) return;
  const what = `the donor assignment of wave ${seg.wave} × ${seg.condition} × ${seg.task} (first row ${String(entry['seq'])})`;
  throw new ImepError(
    'E_OUT_OF_ORDER',
    durable === undefined
      ? `${what} is missing from traces/donors.jsonl although the segment's first row is durable`
      : `${what}, recomputed by this run's donor pre-pass, differs from the one in traces/donors.jsonl that the durable rows were run with (a unit's pre-pass failed in one of the two runs): resuming would build the later rows on another assignment; nothing was written`,
    {
      file: 'traces/donors.jsonl',
      hint: 'start the run again: `imep campaign fail-run UNIT --reason …` for a formal run (a shard: remove its folder UNIT.shards/shard-I-of-N), then run it',
    },
  );
}

export async function runPlan(input: RunPlanInput): Promise<void> {
  const { protocol, sink } = input;
  assertDisjointAllowlists(protocol.allowlists, 'allowlists');
  const startSeq = input.startSeq ?? 0;
  const include = input.include ?? (() => true);
  const tasks = taskEntries(protocol);
  const contexts = new Map<string, TaskContext>();
  const maxTries = protocol.executionFailures.policy === 'retry' ? 1 + protocol.executionFailures.maxRetries : 1;
  const noiseSpec = simulatorFaces.get(protocol.simulator.kind)?.executionNoise?.(protocol.simulator);
  const noise = noiseSpec === undefined ? {} : { executionNoise: noiseSpec };
  const policies = new Map<string, RunnerPolicy>();
  const envs = new Map<string, SimEnvironment[]>();
  const extra = input.subscribers ?? [];
  const frameSeeds = protocol.frames === undefined ? null : recordedSeeds(protocol.frames, input.episodes);
  const envsOf = (entry: TaskEntry): ((slot: number) => SimEnvironment) => {
    let list = envs.get(entry.task);
    if (list === undefined) envs.set(entry.task, (list = []));
    const slots = list;
    return (slot) => (slots[slot] ??= input.envs(entry, slot));
  };
  const segments = segmentsOf(input.episodes)
    .map((seg) => ({ seg, run: seg.units.filter((u) => include(u) && u.episodes.some((e) => e.seq >= startSeq)) }))
    .filter((s) => s.run.length > 0);
  try {
    // Before any row: each task's facts are what its environment declares (slot 0's spec; every slot makes the same
    // environment), and every condition this run carries out must find what it needs in them (S/T: a fact).
    for (const { seg } of segments) {
      const entry = tasks.get(seg.task);
      if (entry === undefined)
        throw new ImepError('E_PROTOCOL_INVALID', `the plan names task ${seg.task}, which no env defines`, {
          field: 'envs',
        });
      let task = contexts.get(seg.task);
      if (task === undefined) contexts.set(seg.task, (task = taskContext(entry, envsOf(entry)(0).spec)));
      checkFacts(conditionPlan(conditionOf(protocol, seg.condition)), task);
    }
    for (const { seg, run } of segments) {
      const condition = conditionOf(protocol, seg.condition);
      const task = contexts.get(seg.task) as TaskContext;
      const envFor = envsOf(task);
      let policy = policies.get(seg.task);
      if (policy === undefined)
        policies.set(seg.task, (policy = await input.policies.policyFor(task, input.batchSize)));
      const plan = checkCondition(condition, task, policy, input.policies.description);
      const segment: SegmentInfo = { wave: seg.wave, condition, task, phase: 'main' };
      const resetOptions = { ...(condition.envKwargs ?? {}) };
      const arrival = (list: readonly UnitJob[]): UnitJob[] =>
        arrivalOrder(input.arrivalKey ?? null, { wave: seg.wave, condition: condition.id, task: seg.task }, list);
      // the frame recorder hands its trace line to the sink before the row recorder puts the episode's row
      const frames = frameSeeds === null ? [] : [new FrameRecorder(protocol.frames!, frameSeeds, sink)];
      const subscribers: RunnerSubscriber[] = [...frames, new RowRecorder(plan, sink), ...extra];
      let donors: Awaited<ReturnType<typeof prepareDonors>> | Awaited<ReturnType<typeof prepareReadDonors>> | null =
        null;
      if (plan.donorMode !== null) {
        const donorInput = {
          segment,
          plan,
          policy,
          envFor,
          allowlists: protocol.allowlists,
          resetOptions,
          units: seg.units,
          maxTries,
          arrival,
          ...noise,
        };
        donors =
          plan.donorInstallation === 'read'
            ? await prepareReadDonors(donorInput, (value, unit) =>
                declaredFact(segment, task.facts.factField as string, value, unit),
              )
            : await prepareDonors(donorInput);
        // written once, just before the segment's first row this run (or shard) owns
        const first = seg.units.find((u) => include(u))?.episodes[0];
        if (first !== undefined) {
          const entry = {
            seq: first.seq,
            wave: seg.wave,
            condition: condition.id,
            task: seg.task,
            mode: donors.assignment.mode,
            seed: donors.assignment.seed,
            entries: donors.assignment.entries,
          };
          if (first.seq >= startSeq) sink.trace(first.seq, { stream: 'donors', entry });
          else if (input.durableDonors !== undefined) assertSameDonors(input.durableDonors.get(first.seq), entry, seg);
        }
      }
      const removed = donors?.removed ?? new Map();
      const units = arrival(run.filter((u) => !removed.has(u.scopeId)));
      for (const u of run) {
        const failure = removed.get(u.scopeId);
        if (failure !== undefined) for (const s of subscribers) s.onUnitEnd?.(-1, u, { kind: 'removed', failure });
      }
      const d = donors;
      await runSegmentLoop({
        segment,
        plan,
        policy,
        envFor,
        allowlists: protocol.allowlists,
        resetOptions,
        units,
        handleFor: (u) => {
          const donor = d?.donors.get(u.scopeId);
          return interventionHook(plan.spec, {
            scope: u.scopeId,
            point: plan.pointLabel,
            ...(plan.seed === undefined ? {} : { seed: plan.seed }),
            ...(donor === undefined ? {} : 'records' in donor ? { donor } : { donorReads: donor }),
          });
        },
        maxTries,
        subscribers,
        abort: () => sink.error,
        ...noise,
      });
      // the segment's rows are written before the next segment starts, so a write error or a stop the row target
      // raised (the execution-failure budget) ends the run here instead of after another segment's episodes
      await sink.settle();
      if (sink.error !== undefined) throw sink.error;
    }
  } finally {
    for (const list of envs.values()) for (const e of list) await e?.close().catch(() => undefined);
  }
}
