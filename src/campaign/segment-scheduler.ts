/**
 * The episode loop's scheduler for one segment (episode-loop.ts has the walk-through): which unit a slot runs, its
 * attempts one after the other, retries from attempt 1, the registered point, and the read dispatcher that routes
 * each bank read to the reading slot's intervention handle. Each step of a unit's life is a named method.
 */
import { performance } from 'node:perf_hooks';
import { splitObservation, type EndedEpisode, type SlotScheduler, type StartedEpisode } from '../runtime/index.js';
import type { SimEnvironment, StepResult } from '../runtime/index.js';
import type { ReadHook, RetrievedItem } from '../banks/index.js';
import type { InterventionHandle } from '../interventions/index.js';
import { TraceRecorder } from '../interventions/index.js';
import type { PlannedEpisode } from '../protocol/index.js';
import type { LoopInput } from './episode-loop.js';
import { failureOf, failureOfStop } from './row-failure.js';
import { TraceSource } from './trace-source.js';
import type { EpisodeClock, FailureInfo, UnitJob, UnitOutcome } from './types.js';

/** A unit running in a slot: its try, its current attempt and episode, and what that episode reached so far. */
export interface SlotRun {
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

export class SegmentScheduler implements SlotScheduler<SlotRun> {
  private readonly queue: UnitJob[];
  /** The unit each slot is running (until it ends). */
  private readonly slots = new Map<number, SlotRun>();
  private readonly byEpisode = new Map<string, SlotRun>();
  /** Time spent in read hooks so far (ms): inside inferBatch, but not the policy's. */
  hookMs = 0;

  /** `sources`: each slot's trace source, made on first use and closed by the caller when the segment ends. */
  constructor(
    private readonly input: LoopInput,
    private readonly sources: Map<number, TraceSource>,
  ) {
    this.queue = [...input.units];
  }

  /** The policy's read hook: each read (by ReadContext.episode) to its slot's handle, through the slot's recorder. */
  readonly dispatch: ReadHook = (items: readonly RetrievedItem[], ctx) => {
    const run = this.byEpisode.get(ctx.episode);
    if (run === undefined || run.episode === null)
      throw new Error(`read of episode ${ctx.episode}, which no slot is running`);
    const t0 = performance.now();
    try {
      const pointAttempt = this.input.plan.pointAttempt;
      if (!run.marked && (pointAttempt === null || run.episode.attempt === pointAttempt)) {
        run.recorder.markPoint(ctx.scope);
        run.marked = true;
      }
      return run.hook(items, ctx);
    } finally {
      const dt = performance.now() - t0;
      run.clock.bankMs += dt;
      this.hookMs += dt;
    }
  };

  /** Per slot: its unit's next attempt (or the retry from attempt 1), else the next unit in the queue. */
  async start(slot: number, env: () => SimEnvironment): Promise<StartedEpisode<SlotRun> | null> {
    for (;;) {
      let run = this.slots.get(slot);
      if (run === undefined) {
        const unit = this.queue.shift();
        if (unit === undefined) return null;
        run = this.newRun(slot, unit);
      }
      const started = await this.startAttempt(run, env());
      if (started !== null) return started;
    }
  }

  /** The slot's episode left the loop (done, capped, over its limit or failed). */
  end(_slot: number, ended: EndedEpisode<SlotRun>): void {
    const run = ended.episode;
    run.current = ended.last;
    run.steps = ended.steps;
    this.endEpisode(run, failureOfStop(ended.stop));
  }

  /** A unit starts in a slot: its first try. */
  private newRun(slot: number, unit: UnitJob): SlotRun {
    const run = {
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
    this.slots.set(slot, run);
    this.newTry(run);
    return run;
  }

  private sourceOf(slot: number): TraceSource {
    let s = this.sources.get(slot);
    if (s === undefined) this.sources.set(slot, (s = new TraceSource(this.input.policy.slotMemory(slot).target)));
    return s;
  }

  /** A try of the unit starts (from attempt 1, memory cleared): a fresh handle and recorder. */
  private newTry(run: SlotRun): void {
    const { plan, subscribers: subs } = this.input;
    run.handle = this.input.handleFor(run.unit);
    run.recorder = new TraceRecorder(this.sourceOf(run.slot), {
      mode: plan.mode,
      sink: (entry) => {
        if (run.episode !== null) for (const s of subs) s.onRead?.(run.slot, run.episode, entry);
      },
    });
    run.hook = run.recorder.wrap(run.handle.hook);
    run.attemptIx = 0;
    run.statuses = [];
    this.input.policy.slotMemory(run.slot).beginScope(run.unit.scopeId);
    for (const s of subs) s.onUnitStart?.(run.slot, run.unit, run.tryNo);
  }

  private finishUnit(run: SlotRun, outcome: UnitOutcome): void {
    if (run.episode !== null) this.byEpisode.delete(run.episode.episodeId);
    run.episode = null;
    this.slots.delete(run.slot);
    this.input.policy.slotMemory(run.slot).endScope(run.unit.scopeId);
    for (const s of this.input.subscribers) s.onUnitEnd?.(run.slot, run.unit, outcome);
  }

  /** The episode of `run` ended: rows and retries are decided here; the loop then asks the slot for its next one. */
  private endEpisode(run: SlotRun, failure: FailureInfo | null): void {
    const ep = this.reportEnd(run, failure);
    if (failure === null) this.attemptDone(run);
    else this.tryFailed(run, ep, failure);
  }

  /** Subscribers told of the episode's end (its clock totalled); the slot runs no episode until its next start. */
  private reportEnd(run: SlotRun, failure: FailureInfo | null): PlannedEpisode {
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
    for (const s of this.input.subscribers) s.onEpisodeEnd?.(run.slot, ep, end);
    this.byEpisode.delete(ep.episodeId);
    run.episode = null;
    run.current = null;
    return ep;
  }

  /** A try failed at `ep`: the unit restarts from attempt 1 while tries are left, else it ends with this attempt failed. */
  private tryFailed(run: SlotRun, ep: PlannedEpisode, failure: FailureInfo): void {
    run.failedTries.push({ ...failure, attempt: ep.attempt });
    if (run.tryNo < this.input.maxTries) {
      run.tryNo += 1;
      this.newTry(run); // the unit restarts from attempt 1 (memory cleared) at the slot's next start
      return;
    }
    run.statuses.push('failed');
    const n = run.unit.episodes.length;
    const skipped = run.unit.episodes.map((_, i) => i > run.attemptIx);
    const statuses = run.unit.episodes.map((_, i) =>
      i < run.statuses.length ? (run.statuses[i] as 'ok' | 'failed') : 'failed',
    );
    this.finishUnit(run, {
      kind: 'ran',
      tries: run.tryNo,
      failedTries: run.failedTries,
      statuses: statuses.slice(0, n),
      skipped,
    });
  }

  /** An attempt ended normally: the unit goes on with its next attempt, or ends after its last. */
  private attemptDone(run: SlotRun): void {
    run.statuses.push('ok');
    run.attemptIx += 1;
    if (run.attemptIx < run.unit.episodes.length) return;
    this.finishUnit(run, {
      kind: 'ran',
      tries: run.tryNo,
      failedTries: run.failedTries,
      statuses: run.statuses,
      skipped: run.statuses.map(() => false),
    });
  }

  /** Starts the current attempt of `run`: its first result, or null when the attempt did not start (handled here). */
  private async startAttempt(run: SlotRun, env: SimEnvironment): Promise<StartedEpisode<SlotRun> | null> {
    const ep = this.beginAttempt(run);
    let first: StepResult;
    try {
      first = await this.resetEnvironment(run, ep, env);
      if (this.stopsAt(run, ep, first)) return null;
      const t0 = performance.now();
      await this.input.policy.resetSlot(run.slot, { episode: ep.episodeId });
      run.clock.policyMs += performance.now() - t0;
      if (this.input.plan.pointAttempt === ep.attempt && !this.actAtPoint(run, ep)) return null;
    } catch (e) {
      this.endEpisode(run, failureOf(e));
      return null;
    }
    for (const s of this.input.subscribers) s.onEpisodeStart?.(run.slot, ep, first);
    return { episode: run, first, clock: run.clock };
  }

  /** The slot's episode becomes the unit's current attempt, with a fresh clock. */
  private beginAttempt(run: SlotRun): PlannedEpisode {
    const ep = run.unit.episodes[run.attemptIx] as PlannedEpisode;
    run.episode = ep;
    run.current = null;
    run.steps = 0;
    run.marked = false;
    run.clock = newClock();
    this.byEpisode.set(ep.episodeId, run);
    return ep;
  }

  /** What the subscribers ask the reset of `ep` for (e.g. a render only in recorded episodes). */
  private subscriberOptions(ep: PlannedEpisode): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const s of this.input.subscribers) Object.assign(out, s.resetOptions?.(ep));
    return out;
  }

  /** The environment reset for `ep` (split by the allowlists). */
  private async resetEnvironment(run: SlotRun, ep: PlannedEpisode, env: SimEnvironment): Promise<StepResult> {
    const t0 = performance.now();
    const first = splitObservation(
      await env.reset({
        seed: ep.seed,
        options: { ...this.input.resetOptions, ...this.subscriberOptions(ep), attempt: ep.attempt },
      }),
      this.input.allowlists,
    );
    run.clock.simMs += performance.now() - t0;
    run.current = first;
    return first;
  }

  /** Pre-pass mode: the unit ends at the start of the stop attempt, with its snapshot (true then). */
  private stopsAt(run: SlotRun, ep: PlannedEpisode, first: StepResult): boolean {
    const stopAt = this.input.stopAt;
    if (stopAt === undefined || ep.attempt !== stopAt.attempt) return false;
    stopAt.snapshot(run.slot, run.unit, first);
    this.byEpisode.delete(ep.episodeId);
    run.episode = null;
    this.finishUnit(run, {
      kind: 'ran',
      tries: run.tryNo,
      failedTries: run.failedTries,
      statuses: run.statuses,
      skipped: [],
    });
    return true;
  }

  /** The registered point acts on the slot's bank; false when a donor fell short (the unit is removed, fail closed). */
  private actAtPoint(run: SlotRun, ep: PlannedEpisode): boolean {
    const t0 = performance.now();
    const target = this.input.policy.slotMemory(run.slot).target;
    if (target === null)
      throw new Error(
        `condition ${this.input.plan.condition.id} acts at a registered point, but the policy's bank is not installable`,
      );
    const outcome = run.handle.atPoint(target);
    run.clock.bankMs += performance.now() - t0;
    for (const s of this.input.subscribers) s.onPoint?.(run.slot, ep, outcome);
    if (outcome.kind !== 'donor-short') return true;
    this.finishUnit(run, {
      kind: 'removed',
      failure: {
        code: 'E_DONOR_SHORT',
        message: `donor ${outcome.donor} holds ${outcome.donorCount} records for ${outcome.recipientCount}; the swap failed closed`,
      },
    });
    return false;
  }
}
