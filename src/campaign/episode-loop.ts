/**
 * One segment (wave × condition × task) on the runtime's one lockstep loop (src/runtime/lockstep.ts runSlots):
 * this module is the loop's scheduler — units (scopes) run in batch slots through one BatchPolicy; each slot runs
 * its unit's attempts one after the other, so the slot's memory carries attempt 1 into attempt 2 when the bank
 * persists across attempts — and everything it learns goes out to subscribers. The loop itself steps the batch,
 * takes results in slot order and hands ended episodes back here.
 *
 * Per unit (in the lowest free slot, units in the given order):
 *   memory.beginScope(scopeId)               — unscoped clear: empty at the scope's start
 *   for each attempt:
 *     env.reset({ seed, options: { ...condition envKwargs, attempt } })   → split by the allowlists
 *     policy.resetSlot(slot, { episode: episodeId })                      — the policy sees nothing else
 *     at the registered attempt: handle.atPoint(slot bank)                — install / clear, before the first query
 *     loop: policy.inferBatch(method-visible obs of every stepping slot) → env.step(action)
 *           (under registered execution noise the executed action is the policy's plus its (episode, step)
 *           draw, executed-action.ts; subscribers see the executed action)
 *           (bridged environments: every slot's step is sent before any is awaited — runtime/send-steps.ts — so
 *           simulators on different servers step at once; results are taken in slot order)
 *   memory.endScope(scopeId)                 — scoped clear: empty at the scope's end
 *
 * Reads: the policy's read hook is one dispatcher that routes each read (by ReadContext.episode) to the
 * reading slot's intervention handle, wrapped by that slot's TraceRecorder; the trace entry goes to
 * subscribers (onRead). The recorder's registered point is marked at the first read of the episode
 * that starts at the point (or of every episode for conditions acting at every read).
 *
 * Failures: an exception from env.reset / env.step / resetSlot / the point fails that slot's episode;
 * one from inferBatch fails the episode of every slot in that batch call (the runtime cannot say which
 * slot caused it). A failed try is logged; under a retry policy the whole unit restarts from attempt 1
 * (memory cleared) until `maxTries`; then the failed attempt and any later attempts of the unit end as
 * failed. Nothing is retried silently. A donor-short point removes the unit (fail closed).
 *
 * Timing (EpisodeClock, ms): sim = reset + steps of this episode (a bridged step: its own round trip, which
 * overlaps the other slots' steps); policy = its share (1/B) of each batched
 * inferBatch call minus the read-hook time inside it, plus resetSlot; bank = read-hook + trace time of its
 * reads plus the point; total = those plus its share of the loop's remaining wall time.
 *
 * Files: this one runs a segment; segment-scheduler.ts is the scheduler (units, attempts, retries, the point, the
 * read dispatcher); trace-source.ts forwards a slot bank's writes to its recorder; row-failure.ts is a row's failure.
 */
import { splitObservation, runSlots } from '../runtime/index.js';
import type { PolicyOutput, SimEnvironment, StepResult, Allowlists } from '../runtime/index.js';
import type { InterventionHandle } from '../interventions/index.js';
import type { PlannedEpisode, ExecutionNoise } from '../protocol/index.js';
import type { ConditionPlan } from './condition-plan.js';
import { executedOutput } from './executed-action.js';
import { SegmentScheduler, type SlotRun } from './segment-scheduler.js';
import type { TraceSource } from './trace-source.js';
import type { RunnerPolicy, RunnerSubscriber, SegmentInfo, UnitJob } from './types.js';

export { failureOf, ROW_MESSAGE_MAX } from './row-failure.js';

export interface LoopInput {
  readonly segment: SegmentInfo;
  readonly plan: ConditionPlan;
  readonly policy: RunnerPolicy;
  readonly envFor: (slot: number) => SimEnvironment;
  readonly allowlists: Allowlists;
  /** Reset options of every episode besides `attempt` (the condition's envKwargs). */
  readonly resetOptions: Readonly<Record<string, unknown>>;
  readonly units: readonly UnitJob[];
  /** A fresh intervention handle for a unit (called at every try). */
  readonly handleFor: (unit: UnitJob) => InterventionHandle;
  /** 1 + registered retries. */
  readonly maxTries: number;
  readonly subscribers: readonly RunnerSubscriber[];
  /** Pre-pass mode: each unit ends at the start of this attempt (after its reset), with `snapshot`. */
  readonly stopAt?: { readonly attempt: number; snapshot(slot: number, unit: UnitJob, first: StepResult): void };
  /** Checked once per batched step: a returned error aborts the loop (e.g. the row sink failed). */
  readonly abort?: () => unknown;
  /** The protocol's registered execution noise (lite only): every executed action is perturbed by its draw. */
  readonly executionNoise?: ExecutionNoise;
}

export async function runSegmentLoop(input: LoopInput): Promise<void> {
  const sources = new Map<number, TraceSource>();
  try {
    await runSegment(input, sources);
  } finally {
    for (const s of sources.values()) s.close();
  }
}

/** The segment on the runtime's loop: the scheduler's units in the policy's slots, subscribers told of every step. */
async function runSegment(input: LoopInput, sources: Map<number, TraceSource>): Promise<void> {
  const { policy, segment, subscribers: subs } = input;
  const scheduler = new SegmentScheduler(input, sources);
  policy.setReadHook(scheduler.dispatch);
  for (const s of subs) s.onSegmentStart?.(segment, input.units);
  await runSlots(policy, input.envFor, scheduler, {
    subscribers: [
      {
        onStep: (slot, run, before, output, after) => {
          for (const s of subs) s.onStep?.(slot, run.episode as PlannedEpisode, before, output, after);
        },
      },
    ],
    enforceSpecLimit: true,
    observe: (r) => splitObservation(r, input.allowlists),
    hookMs: () => scheduler.hookMs,
    ...(input.executionNoise === undefined ? {} : { execute: executeWith(input.executionNoise) }),
    ...(input.abort === undefined ? {} : { abort: input.abort }),
  });
  for (const s of subs) s.onSegmentEnd?.(segment);
}

/** Under registered execution noise: the action the environment executes for the policy's output at `step` of `run`'s episode. */
function executeWith(noise: ExecutionNoise): (run: SlotRun, step: number, output: PolicyOutput) => PolicyOutput {
  return (run, step, output) => executedOutput(noise, run.episode as PlannedEpisode, step, output);
}
