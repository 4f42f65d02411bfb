/**
 * The episode loop of one segment (wave × condition × task): units (scopes) run in batch slots in
 * lockstep through one BatchPolicy; each slot runs its unit's attempts one after the other, so the
 * slot's memory carries attempt 1 into attempt 2 when the bank persists across attempts. The loop
 * depends only on the SimEnvironment and RunnerPolicy contracts; everything it learns goes out to
 * subscribers.
 *
 * Per unit (in the lowest free slot, units in the given order):
 *   memory.beginScope(scopeId)               — unscoped clear: empty at the scope's start
 *   for each attempt:
 *     env.reset({ seed, options: { ...condition envKwargs, attempt } })   → split by the allowlists
 *     policy.resetSlot(slot, { episode: episodeId })                      — the policy sees nothing else
 *     at the registered attempt: handle.atPoint(slot bank)                — install / clear, before the first query
 *     loop: policy.inferBatch(method-visible obs of every stepping slot) → env.step(action)
 *           (bridged environments: every slot's step is sent before any is awaited — bridges/send-steps.ts — so
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
import { splitObservation, type Allowlists } from '../runtime/allowlist.js';
import { sendSteps } from '../runtime/send-steps.js';
import type { SimEnvironment, StepResult } from '../runtime/environment.js';
import type { ReadHook, RetrievedItem } from '../banks/record.js';
import { isImepError } from '../core/errors.js';
import type { InterventionHandle } from '../interventions/condition.js';
import type { BankWriteEvent, InstallTarget } from '../interventions/install-target.js';
import { TraceRecorder } from '../interventions/trace.js';
import type { PolicyOutput } from '../runtime/policy.js';
import type { PlannedEpisode } from '../protocol/plan.js';
import type { ConditionPlan } from './condition-plan.js';
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
}

export function failureOf(e: unknown): FailureInfo {
  if (isImepError(e)) return { code: e.code, message: e.oneLine() };
  return { code: 'E_INTERNAL', message: e instanceof Error ? e.message : String(e) };
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

const newClock = (): EpisodeClock & { otherMs: number } => ({ simMs: 0, policyMs: 0, bankMs: 0, totalMs: 0, otherMs: 0 });

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
    if (run === undefined || run.episode === null) throw new Error(`read of episode ${ctx.episode}, which no slot is running`);
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

  const endEpisode = async (run: SlotRun, failure: FailureInfo | null): Promise<void> => {
    const ep = run.episode as PlannedEpisode;
    const c = run.clock;
    c.totalMs = c.simMs + c.policyMs + c.bankMs + c.otherMs;
    const end = { status: failure === null ? ('ok' as const) : ('failed' as const), failure, last: run.current, steps: run.steps, clock: { simMs: c.simMs, policyMs: c.policyMs, bankMs: c.bankMs, totalMs: c.totalMs } };
    for (const s of subs) s.onEpisodeEnd?.(run.slot, ep, end);
    byEpisode.delete(ep.episodeId);
    run.episode = null;
    run.current = null;
    if (failure !== null) {
      run.failedTries.push({ ...failure, attempt: ep.attempt });
      if (run.tryNo < input.maxTries) {
        run.tryNo += 1;
        newTry(run);
        await startAttempt(run);
        return;
      }
      run.statuses.push('failed');
      const n = run.unit.episodes.length;
      const skipped = run.unit.episodes.map((_, i) => i > run.attemptIx);
      const statuses = run.unit.episodes.map((_, i) => (i < run.statuses.length ? (run.statuses[i] as 'ok' | 'failed') : 'failed'));
      finishUnit(run, { kind: 'ran', tries: run.tryNo, failedTries: run.failedTries, statuses: statuses.slice(0, n), skipped });
      await fillSlot(run.slot);
      return;
    }
    run.statuses.push('ok');
    run.attemptIx += 1;
    if (run.attemptIx < run.unit.episodes.length) {
      await startAttempt(run);
      return;
    }
    finishUnit(run, { kind: 'ran', tries: run.tryNo, failedTries: run.failedTries, statuses: run.statuses, skipped: run.statuses.map(() => false) });
    await fillSlot(run.slot);
  };

  const startAttempt = async (run: SlotRun): Promise<void> => {
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
      first = splitObservation(await input.envFor(run.slot).reset({ seed: ep.seed, options: { ...input.resetOptions, attempt: ep.attempt } }), input.allowlists);
      run.clock.simMs += performance.now() - t0;
      run.current = first;
      if (input.stopAt !== undefined && ep.attempt === input.stopAt.attempt) {
        input.stopAt.snapshot(run.slot, run.unit, first);
        byEpisode.delete(ep.episodeId);
        run.episode = null;
        finishUnit(run, { kind: 'ran', tries: run.tryNo, failedTries: run.failedTries, statuses: run.statuses, skipped: [] });
        await fillSlot(run.slot);
        return;
      }
      t0 = performance.now();
      await policy.resetSlot(run.slot, { episode: ep.episodeId });
      run.clock.policyMs += performance.now() - t0;
      if (plan.pointAttempt === ep.attempt) {
        t0 = performance.now();
        const target = policy.slotMemory(run.slot).target;
        if (target === null) throw new Error(`condition ${plan.condition.id} acts at a registered point, but the policy's bank is not installable`);
        const outcome = run.handle.atPoint(target);
        run.clock.bankMs += performance.now() - t0;
        for (const s of subs) s.onPoint?.(run.slot, ep, outcome);
        if (outcome.kind === 'donor-short') {
          finishUnit(run, {
            kind: 'removed',
            failure: { code: 'E_DONOR_SHORT', message: `donor ${outcome.donor} holds ${outcome.donorCount} records for ${outcome.recipientCount}; the swap failed closed` },
          });
          await fillSlot(run.slot);
          return;
        }
      }
    } catch (e) {
      await endEpisode(run, failureOf(e));
      return;
    }
    for (const s of subs) s.onEpisodeStart?.(run.slot, ep, first);
  };

  const fillSlot = async (slot: number): Promise<void> => {
    const unit = queue.shift();
    if (unit === undefined) return;
    const run = { slot, unit, tryNo: 1, failedTries: [], episode: null, current: null, steps: 0, marked: false, clock: newClock() } as unknown as SlotRun;
    slots.set(slot, run);
    newTry(run);
    await startAttempt(run);
  };

  for (const s of subs) s.onSegmentStart?.(segment, input.units);
  for (let slot = 0; slot < policy.maxBatch && queue.length > 0; slot++) await fillSlot(slot);

  while (slots.size > 0) {
    const aborted = input.abort?.();
    if (aborted !== undefined) throw aborted;
    const stepping = [...slots.values()].filter((r) => r.episode !== null && r.current !== null).sort((a, b) => a.slot - b.slot);
    if (stepping.length === 0) break;
    const tIter = performance.now();
    hookMs = 0;
    let outputs: readonly PolicyOutput[];
    try {
      outputs = await policy.inferBatch(stepping.map((r) => ({ slot: r.slot, obs: (r.current as StepResult).obs })));
      if (outputs.length !== stepping.length) throw new Error(`inferBatch answered ${outputs.length} of ${stepping.length} observations`);
    } catch (e) {
      const f = failureOf(e);
      for (const r of stepping) await endEpisode(r, f);
      continue;
    }
    const inferMs = performance.now() - tIter;
    const share = (inferMs - hookMs) / stepping.length;
    // Environments without a synchronous step (bridged simulators) are all sent their step before any is awaited, in
    // slot order, so simulators behind different servers step at the same time; every result is then taken in slot
    // order, so subscribers see the same calls in the same order as when each step was awaited in turn.
    const sent = sendSteps(stepping.map((r) => input.envFor(r.slot)), (i) => (outputs[i] as PolicyOutput).action);
    let simMs = 0;
    const ended: [SlotRun, FailureInfo | null][] = [];
    for (let i = 0; i < stepping.length; i++) {
      const run = stepping[i] as SlotRun;
      const output = outputs[i] as PolicyOutput;
      run.clock.policyMs += share;
      const before = run.current as StepResult;
      let after: StepResult;
      try {
        const t0 = performance.now();
        const inFlight = sent[i];
        if (inFlight === undefined) {
          after = splitObservation((input.envFor(run.slot).stepSync as NonNullable<SimEnvironment['stepSync']>)(output.action), input.allowlists);
          run.clock.simMs += performance.now() - t0;
        } else {
          const { result, ms } = await inFlight;
          after = splitObservation(result, input.allowlists);
          run.clock.simMs += ms; // this step's own round trip (the steps of a batch overlap)
        }
        simMs += performance.now() - t0; // the loop's time spent stepping or waiting for a step
      } catch (e) {
        ended.push([run, failureOf(e)]);
        continue;
      }
      run.current = after;
      run.steps += 1;
      for (const s of subs) s.onStep?.(run.slot, run.episode as PlannedEpisode, before, output, after);
      const limit = input.envFor(run.slot).spec.maxSteps;
      if (after.done) ended.push([run, null]);
      else if (limit > 0 && run.steps > limit) {
        ended.push([run, { code: 'E_SIM_UNAVAILABLE', message: `the environment did not end the episode within its ${limit} steps` }]);
      }
    }
    const other = Math.max(0, performance.now() - tIter - inferMs - simMs) / stepping.length;
    for (const r of stepping) r.clock.otherMs += other;
    for (const [run, failure] of ended) await endEpisode(run, failure);
  }
  for (const s of subs) s.onSegmentEnd?.(segment);
}
