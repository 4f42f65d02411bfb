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
 */
import { performance } from 'node:perf_hooks';
import {
  splitObservation,
  type Allowlists,
  runSlots,
  type EpisodeStop,
  type SlotScheduler,
  type StartedEpisode,
} from '../runtime/index.js';
import type { SimEnvironment, StepResult, PolicyOutput } from '../runtime/index.js';
import type { ReadHook, RetrievedItem } from '../banks/index.js';
import { isImepError, outsideText } from '../core/index.js';
import type { InterventionHandle, BankWriteEvent, InstallTarget } from '../interventions/index.js';
import { TraceRecorder } from '../interventions/index.js';
import type { PlannedEpisode, ExecutionNoise } from '../protocol/index.js';
import type { ConditionPlan } from './condition-plan.js';
import { executedOutput } from './executed-action.js';
import type {
  EpisodeClock,
  FailureInfo,
  RunnerPolicy,
  RunnerSubscriber,
  SegmentInfo,
  UnitJob,
  UnitOutcome,
} from './types.js';

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

/** The most a row's failure message keeps (a policy's or simulator's words may be in it). */
export const ROW_MESSAGE_MAX = 2048;

/**
 * The row's record of a failed try. Its message may carry a policy's or a simulator's own words (an exception's
 * text), and rows are sealed and reported: one line, controls and escape sequences removed, capped (outside-text.ts).
 */
export function failureOf(e: unknown): FailureInfo {
  if (isImepError(e)) return { code: e.code, message: outsideText(e.oneLine(), ROW_MESSAGE_MAX) };
  return { code: 'E_INTERNAL', message: outsideText(e instanceof Error ? e.message : String(e), ROW_MESSAGE_MAX) };
}

/**
 * Forwards the slot bank's write events to the current unit try's recorder, for one segment: `close()` takes its
 * listener off the bank (the slot's bank outlives the segment; a listener left behind would keep the segment's
 * last recorder alive and running on every later write).
 */
class TraceSource {
  private listener: ((e: BankWriteEvent) => void) | null = null;
  private readonly remove: (() => void) | null;
  constructor(private readonly target: InstallTarget | null) {
    this.remove = target?.onWrite((e) => this.listener?.(e)) ?? null;
  }
  records(scope: string): ReturnType<InstallTarget['records']> {
    return this.target?.records(scope) ?? [];
  }
  onWrite(listener: (e: BankWriteEvent) => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = null;
    };
  }
  close(): void {
    this.listener = null;
    this.remove?.();
  }
}

interface SlotRun {
  readonly slot: number;
  readonly unit: UnitJob;
  tryNo: number;
  readonly failedTries: (FailureInfo & { attempt: number })[];
  attemptIx: number;
  handle: InterventionHandle;
  hook: ReadHook;
  recorder: TraceRecorder;
  episode: PlannedEpisode | null;
  current: StepResult | null;
  steps: number;
  marked: boolean;
  clock: EpisodeClock & { otherMs: number };
  statuses: ('ok' | 'failed')[];
}

const newClock = (): EpisodeClock & { otherMs: number } => ({
  simMs: 0,
  policyMs: 0,
  bankMs: 0,
  totalMs: 0,
  otherMs: 0,
});

export async function runSegmentLoop(input: LoopInput): Promise<void> {
  const sources = new Map<number, TraceSource>();
  try {
    await runSegment(input, sources);
  } finally {
    for (const s of sources.values()) s.close();
  }
}

async function runSegment(input: LoopInput, sources: Map<number, TraceSource>): Promise<void> {
  const { policy, plan, segment, subscribers: subs } = input;
  const queue = [...input.units];
  /** The unit each slot is running (until it ends). */
  const slots = new Map<number, SlotRun>();
  const byEpisode = new Map<string, SlotRun>();
  let hookMs = 0;

  const sourceOf = (slot: number): TraceSource => {
    let s = sources.get(slot);
    if (s === undefined) sources.set(slot, (s = new TraceSource(policy.slotMemory(slot).target)));
    return s;
  };

  const dispatch: ReadHook = (items: readonly RetrievedItem[], ctx) => {
    const run = byEpisode.get(ctx.episode);
    if (run === undefined || run.episode === null)
      throw new Error(`read of episode ${ctx.episode}, which no slot is running`);
    const t0 = performance.now();
    try {
      if (!run.marked && (plan.pointAttempt === null || run.episode.attempt === plan.pointAttempt)) {
        run.recorder.markPoint(ctx.scope);
        run.marked = true;
      }
      return run.hook(items, ctx);
    } finally {
      const dt = performance.now() - t0;
      run.clock.bankMs += dt;
      hookMs += dt;
    }
  };
  policy.setReadHook(dispatch);

  const newTry = (run: SlotRun): void => {
    run.handle = input.handleFor(run.unit);
    const source = sourceOf(run.slot);
    run.recorder = new TraceRecorder(source, {
      mode: plan.mode,
      sink: (entry) => {
        if (run.episode !== null) for (const s of subs) s.onRead?.(run.slot, run.episode, entry);
      },
    });
    run.hook = run.recorder.wrap(run.handle.hook);
    run.attemptIx = 0;
    run.statuses = [];
    policy.slotMemory(run.slot).beginScope(run.unit.scopeId);
    for (const s of subs) s.onUnitStart?.(run.slot, run.unit, run.tryNo);
  };

  const finishUnit = (run: SlotRun, outcome: UnitOutcome): void => {
    if (run.episode !== null) byEpisode.delete(run.episode.episodeId);
    run.episode = null;
    slots.delete(run.slot);
    policy.slotMemory(run.slot).endScope(run.unit.scopeId);
    for (const s of subs) s.onUnitEnd?.(run.slot, run.unit, outcome);
  };

  /** The episode of `run` ended: rows and retries are decided here; the loop then asks the slot for its next one. */
  const endEpisode = (run: SlotRun, failure: FailureInfo | null): void => {
    const ep = run.episode as PlannedEpisode;
    const c = run.clock;
    c.totalMs = c.simMs + c.policyMs + c.bankMs + c.otherMs;
    const end = {
      status: failure === null ? ('ok' as const) : ('failed' as const),
      failure,
      last: run.current,
      steps: run.steps,
      clock: { simMs: c.simMs, policyMs: c.policyMs, bankMs: c.bankMs, totalMs: c.totalMs },
    };
    for (const s of subs) s.onEpisodeEnd?.(run.slot, ep, end);
    byEpisode.delete(ep.episodeId);
    run.episode = null;
    run.current = null;
    if (failure !== null) {
      run.failedTries.push({ ...failure, attempt: ep.attempt });
      if (run.tryNo < input.maxTries) {
        run.tryNo += 1;
        newTry(run); // the unit restarts from attempt 1 (memory cleared) at the slot's next start
        return;
      }
      run.statuses.push('failed');
      const n = run.unit.episodes.length;
      const skipped = run.unit.episodes.map((_, i) => i > run.attemptIx);
      const statuses = run.unit.episodes.map((_, i) =>
        i < run.statuses.length ? (run.statuses[i] as 'ok' | 'failed') : 'failed',
      );
      finishUnit(run, {
        kind: 'ran',
        tries: run.tryNo,
        failedTries: run.failedTries,
        statuses: statuses.slice(0, n),
        skipped,
      });
      return;
    }
    run.statuses.push('ok');
    run.attemptIx += 1;
    if (run.attemptIx < run.unit.episodes.length) return;
    finishUnit(run, {
      kind: 'ran',
      tries: run.tryNo,
      failedTries: run.failedTries,
      statuses: run.statuses,
      skipped: run.statuses.map(() => false),
    });
  };

  /** Starts the current attempt of `run`: its first result, or null when the attempt did not start (handled here). */
  const startAttempt = async (run: SlotRun, env: SimEnvironment): Promise<StartedEpisode<SlotRun> | null> => {
    const ep = run.unit.episodes[run.attemptIx] as PlannedEpisode;
    run.episode = ep;
    run.current = null;
    run.steps = 0;
    run.marked = false;
    run.clock = newClock();
    byEpisode.set(ep.episodeId, run);
    let first: StepResult;
    try {
      let t0 = performance.now();
      first = splitObservation(
        await env.reset({ seed: ep.seed, options: { ...input.resetOptions, attempt: ep.attempt } }),
        input.allowlists,
      );
      run.clock.simMs += performance.now() - t0;
      run.current = first;
      if (input.stopAt !== undefined && ep.attempt === input.stopAt.attempt) {
        input.stopAt.snapshot(run.slot, run.unit, first);
        byEpisode.delete(ep.episodeId);
        run.episode = null;
        finishUnit(run, {
          kind: 'ran',
          tries: run.tryNo,
          failedTries: run.failedTries,
          statuses: run.statuses,
          skipped: [],
        });
        return null;
      }
      t0 = performance.now();
      await policy.resetSlot(run.slot, { episode: ep.episodeId });
      run.clock.policyMs += performance.now() - t0;
      if (plan.pointAttempt === ep.attempt) {
        t0 = performance.now();
        const target = policy.slotMemory(run.slot).target;
        if (target === null)
          throw new Error(
            `condition ${plan.condition.id} acts at a registered point, but the policy's bank is not installable`,
          );
        const outcome = run.handle.atPoint(target);
        run.clock.bankMs += performance.now() - t0;
        for (const s of subs) s.onPoint?.(run.slot, ep, outcome);
        if (outcome.kind === 'donor-short') {
          finishUnit(run, {
            kind: 'removed',
            failure: {
              code: 'E_DONOR_SHORT',
              message: `donor ${outcome.donor} holds ${outcome.donorCount} records for ${outcome.recipientCount}; the swap failed closed`,
            },
          });
          return null;
        }
      }
    } catch (e) {
      endEpisode(run, failureOf(e));
      return null;
    }
    for (const s of subs) s.onEpisodeStart?.(run.slot, ep, first);
    return { episode: run, first, clock: run.clock };
  };

  /** Per slot: its unit's next attempt (or the retry from attempt 1), else the next unit in the queue. */
  const units: SlotScheduler<SlotRun> = {
    async start(slot, env) {
      for (;;) {
        let run = slots.get(slot);
        if (run === undefined) {
          const unit = queue.shift();
          if (unit === undefined) return null;
          run = {
            slot,
            unit,
            tryNo: 1,
            failedTries: [],
            episode: null,
            current: null,
            steps: 0,
            marked: false,
            clock: newClock(),
          } as unknown as SlotRun;
          slots.set(slot, run);
          newTry(run);
        }
        const started = await startAttempt(run, env());
        if (started !== null) return started;
      }
    },
    end(_slot, ended) {
      const run = ended.episode;
      run.current = ended.last;
      run.steps = ended.steps;
      endEpisode(run, failureOfStop(ended.stop));
    },
  };

  for (const s of subs) s.onSegmentStart?.(segment, input.units);
  await runSlots(policy, input.envFor, units, {
    subscribers: [
      {
        onStep: (slot, run, before, output, after) => {
          for (const s of subs) s.onStep?.(slot, run.episode as PlannedEpisode, before, output, after);
        },
      },
    ],
    enforceSpecLimit: true,
    observe: (r) => splitObservation(r, input.allowlists),
    hookMs: () => hookMs,
    ...(input.executionNoise === undefined ? {} : { execute: executeWith(input.executionNoise) }),
    ...(input.abort === undefined ? {} : { abort: input.abort }),
  });
  for (const s of subs) s.onSegmentEnd?.(segment);
}

/** Under registered execution noise: the action the environment executes for the policy's output at `step` of `run`'s episode. */
function executeWith(noise: ExecutionNoise): (run: SlotRun, step: number, output: PolicyOutput) => PolicyOutput {
  return (run, step, output) => executedOutput(noise, run.episode as PlannedEpisode, step, output);
}

function failureOfStop(stop: EpisodeStop): FailureInfo | null {
  switch (stop.kind) {
    case 'done':
    case 'cap':
      return null;
    case 'over-limit':
      return {
        code: 'E_SIM_UNAVAILABLE',
        message: `the environment did not end the episode within its ${stop.limit} steps`,
      };
    case 'failed':
      return failureOf(stop.error);
  }
}
