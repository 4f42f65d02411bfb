/**
 * The runner's contracts. The episode loop (episode-loop.ts) depends on nothing but these, the
 * SimEnvironment contract (src/runtime/environment.ts) and the BatchPolicy contract
 * (src/runtime/policy.ts); rows, traces and the progress display are SUBSCRIBERS (after openpi's
 * runtime), never code inside the loop.
 */
import type {
  EnvSpec,
  SimEnvironment,
  StepResult,
  TaskEntry,
  BatchPolicy,
  DeclaredConventions,
  MemoryReadable,
  PolicyOutput,
  TaskFacts,
} from '../runtime/index.js';
import type { InstallTarget, PointOutcome, TraceEntry } from '../interventions/index.js';
import type { PlannedEpisode, ProtocolCondition } from '../protocol/index.js';
import type { HostedPolicyRecord, PolicyServerRecord } from '../evidence/index.js';

/** The task, environment and spec contracts a simulator kind meets (src/runtime/simulator-kind.ts). */
export type { EnvProvider, SpecSource, TaskEntry } from '../runtime/index.js';

/** The memory of one batch slot, as the runner sees it. */
export interface SlotMemory {
  /**
   * The slot's bank as an installation target (records, replaceRecords, clearScope, clock, onWrite),
   * for conditions that act at a registered point (U install, N clear, S, T); null for episode-local
   * banks, which a protocol cannot register such conditions on (src/protocol/cross-check.ts).
   */
  readonly target: InstallTarget | null;
  /**
   * A scope starts in this slot: the slot's memory is cleared (unscoped), and its reads and writes
   * belong to `scope` (the plan's scopeId) until endScope — so a bank that persists across attempts
   * keeps attempt 1's records for attempt 2 of the same scope, and never beyond it.
   */
  beginScope(scope: string): void;
  /** The scope's last attempt ended: the memory of the scope is cleared (scoped). */
  endScope(scope: string): void;
}

/** A batched policy whose reads the runner can intercept and whose per-slot memory it can reach. */
export interface RunnerPolicy extends BatchPolicy, MemoryReadable {
  slotMemory(slot: number): SlotMemory;
}

/** Builds the runner policy of one task (policies differ by task in their decision-step rule). */
export interface PolicyProvider {
  /** One line naming the runtime (recorded nowhere in rows; printed). */
  readonly description: string;
  /** A hosted policy's frozen identity (precommit records it; every later run must report the same). */
  readonly record?: HostedPolicyRecord;
  /** A policy server's endpoint and metadata (precommit records it; every later run must report the same). */
  readonly serverRecord?: PolicyServerRecord;
  /** How a started policy host was isolated, one line (recorded with the run session). */
  readonly isolation?: string;
  /** The resource limits in force on a started policy host, one line (recorded with the run session). */
  readonly limits?: string;
  /**
   * The action/observation conventions the started policy declares itself (a vla-eval server's HELLO action_spec /
   * observation_spec, src/policies/servers/vla-eval-conventions.ts), named by source; the convention preflight
   * (convention-preflight.ts) checks them against each environment's before any row.
   */
  readonly conventions?: DeclaredConventions;
  policyFor(task: TaskContext, batchSize: number): Promise<RunnerPolicy>;
  release(): Promise<void>;
}

/** What the runner knows about a task: its protocol entry and the facts its environment declares. */
export interface TaskContext extends TaskEntry {
  readonly facts: TaskFacts;
}

/** A unit (scope) of one segment: its attempts in plan order. */
export interface UnitJob {
  readonly task: string;
  readonly seed: number;
  readonly scopeId: string;
  readonly episodes: readonly PlannedEpisode[];
}

/** The segment the loop is running: one (wave, condition, task) of the plan. */
export interface SegmentInfo {
  readonly wave: number;
  readonly condition: ProtocolCondition;
  readonly task: TaskContext;
  /** 'main' writes rows; 'donor-prepass' only snapshots donor records (no rows). */
  readonly phase: 'main' | 'donor-prepass';
}

/** Wall-clock split of one episode (milliseconds), see timing notes in episode-loop.ts. */
export interface EpisodeClock {
  simMs: number;
  policyMs: number;
  bankMs: number;
  totalMs: number;
}

export interface FailureInfo {
  readonly code: string;
  readonly message: string;
}

export interface EpisodeEnd {
  readonly status: 'ok' | 'failed';
  readonly failure: FailureInfo | null;
  /** The last (allowlist-split) step result, null when the reset itself failed. */
  readonly last: StepResult | null;
  readonly steps: number;
  readonly clock: EpisodeClock;
}

/** How a unit ended: ran (each attempt ok or failed), or removed by a fail-closed rule. */
export type UnitOutcome =
  | {
      readonly kind: 'ran';
      readonly tries: number;
      /** Every failed try, in order (attempt it failed at, code, message). */
      readonly failedTries: readonly (FailureInfo & { readonly attempt: number })[];
      /** Per attempt (job.episodes order): the final try's status. */
      readonly statuses: readonly ('ok' | 'failed')[];
      /** For attempts never run because an earlier attempt of the scope failed. */
      readonly skipped: readonly boolean[];
    }
  | { readonly kind: 'removed'; readonly failure: FailureInfo };

/**
 * Subscribers of the episode loop (openpi's on-episode-start / on-step / on-episode-end, plus what an
 * intervention campaign needs: reads, the registered point, unit ends). Calls are synchronous and in
 * loop order; a subscriber must not throw (a throw aborts the run).
 */
export interface RunnerSubscriber {
  onSegmentStart?(segment: SegmentInfo, units: readonly UnitJob[]): void;
  /**
   * Reset options this subscriber asks for on `episode` (merged over the condition's envKwargs): the frame recorder
   * asks an adapter to render its evaluator-only `frame` only in the episodes it records.
   */
  resetOptions?(episode: PlannedEpisode): Readonly<Record<string, unknown>> | undefined;
  /** A (re)start of a unit in a slot; `tryNo` counts from 1. */
  onUnitStart?(slot: number, unit: UnitJob, tryNo: number): void;
  onEpisodeStart?(slot: number, episode: PlannedEpisode, first: StepResult): void;
  /** The registered point ran (installation, clear, or donor-short) at the start of `episode`. */
  onPoint?(slot: number, episode: PlannedEpisode, outcome: PointOutcome): void;
  /** One bank read of `episode`, as the substitution trace recorded it. */
  onRead?(slot: number, episode: PlannedEpisode, entry: TraceEntry): void;
  onStep?(slot: number, episode: PlannedEpisode, before: StepResult, output: PolicyOutput, after: StepResult): void;
  onEpisodeEnd?(slot: number, episode: PlannedEpisode, end: EpisodeEnd): void;
  /** A unit is done (slot −1 for a unit removed without running). */
  onUnitEnd?(slot: number, unit: UnitJob, outcome: UnitOutcome): void;
  onSegmentEnd?(segment: SegmentInfo): void;
}
