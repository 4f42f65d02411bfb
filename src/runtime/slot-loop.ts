/**
 * The lockstep loop's body (lockstep.ts runSlots): one run's slots and their episodes, each part of a batched step
 * a named method — gather the running slots, one inferBatch, every bridged step sent, each slot stepped or its step
 * taken in slot order, the ended episodes handed to the scheduler. Capabilities (capabilities.ts) are asked once per
 * environment and once for the policy.
 */
import { performance } from 'node:perf_hooks';
import { sendSteps, type SentStep } from './send-steps.js';
import {
  drawsFramesInto,
  lendsInputRows,
  stepsSynchronously,
  takesBackObservations,
  type DrawsFramesInto,
  type LendsInputRows,
  type StepsSynchronously,
  type TakesBackObservations,
} from './capabilities.js';
import type { SimEnvironment, StepResult } from './environment.js';
import type {
  EpisodeStop,
  SlotClock,
  SlotLoopOptions,
  SlotScheduler,
  StartedEpisode,
  StepSubscriber,
} from './lockstep.js';
import type { BatchPolicy, PolicyOutput, SlotObservation } from './policy.js';

interface Running<E> {
  readonly started: StartedEpisode<E>;
  current: StepResult;
  steps: number;
  /** Whether current's frame was drawn into a row of the policy's input (recycling only). */
  inPolicyRow: boolean;
}

/** What the loop knows of a slot's environment: the environment and the capabilities it offers (asked once). */
interface SlotEnv {
  readonly env: SimEnvironment;
  /** Its synchronous step, or null (a bridged environment: its step is sent with the others', send-steps.ts). */
  readonly sync: StepsSynchronously | null;
  /** Where results are given back when recycling, or null. */
  readonly taker: TakesBackObservations | null;
  /** Where a frame may be drawn into the policy's next input when recycling, or null. */
  readonly drawer: DrawsFramesInto | null;
}

function slotEnvOf(env: SimEnvironment): SlotEnv {
  return {
    env,
    sync: stepsSynchronously(env) ? env : null,
    taker: takesBackObservations(env) ? env : null,
    drawer: drawsFramesInto(env) ? env : null,
  };
}

/** One run of runSlots: its slots and their episodes, and each part of a batched step as a named method. */
export class SlotLoop<E> {
  private readonly subs: readonly StepSubscriber<E>[];
  private readonly cap: number;
  private readonly recycle: boolean;
  private readonly width: number;
  /** The policy's input rows a frame may be drawn into (recycling only), or null. */
  private readonly rows: LendsInputRows | null;
  private readonly envs: (SlotEnv | undefined)[];
  /** Slots whose environment steps asynchronously (then a step's steps are sent before any is awaited). */
  private asyncEnvs = 0;
  private readonly running: (Running<E> | undefined)[];
  private active = 0;
  // this step's stepping slots, in slot order: their episodes, slot numbers and why each stopped (if it did)
  private readonly stepping: (Running<E> | undefined)[];
  private readonly slots: number[];
  private readonly stopped: (EpisodeStop | undefined)[];

  constructor(
    private readonly policy: BatchPolicy,
    private readonly envFor: (slot: number) => SimEnvironment,
    private readonly scheduler: SlotScheduler<E>,
    private readonly options: SlotLoopOptions<E>,
  ) {
    this.subs = options.subscribers ?? [];
    this.cap = options.maxSteps ?? Infinity;
    this.recycle = options.recycleObservations === true;
    this.width = policy.maxBatch;
    this.rows = this.recycle && lendsInputRows(policy) ? policy : null;
    this.envs = new Array<SlotEnv | undefined>(this.width).fill(undefined);
    this.running = new Array<Running<E> | undefined>(this.width).fill(undefined);
    this.stepping = new Array<Running<E> | undefined>(this.width).fill(undefined);
    this.slots = new Array<number>(this.width).fill(0);
    this.stopped = new Array<EpisodeStop | undefined>(this.width).fill(undefined);
  }

  /**
   * Fills the slots, then runs batched steps while any episode runs: one inferBatch over the stepping slots, one step
   * of each slot's environment, then the ended episodes out. Its awaits are the policy's call, bridged steps and the
   * scheduler's: a batch of in-process environments is stepped without a promise of the loop's own.
   */
  async run(): Promise<void> {
    // a start that found nothing leaves the later slots unasked until one frees
    for (let slot = 0; slot < this.width; slot++) {
      await this.fill(slot);
      if (this.running[slot] === undefined) break;
    }
    while (this.active > 0) {
      const aborted = this.options.abort?.();
      if (aborted !== undefined) throw aborted;
      const requests = this.gather();
      const n = requests.length;
      const tIter = performance.now();
      const hook0 = this.options.hookMs?.() ?? 0;
      let outputs: readonly PolicyOutput[];
      try {
        outputs = this.executed(await this.policy.inferBatch(requests), n);
      } catch (error) {
        await this.failAll(n, error);
        continue;
      }
      const inferMs = performance.now() - tIter;
      const share = (inferMs - ((this.options.hookMs?.() ?? 0) - hook0)) / n;
      const sent = this.sendAsyncSteps(n, outputs);
      const simMs =
        sent === null ? this.stepAllInProcess(n, outputs, share) : await this.stepAll(n, outputs, share, sent);
      this.chargeOther(n, performance.now() - tIter - inferMs - simMs);
      for (let i = 0; i < n; i++) {
        const stop = this.stopped[i];
        if (stop !== undefined) await this.end(this.slots[i] as number, this.stepping[i] as Running<E>, stop);
      }
    }
  }

  /** The slot's environment, made on first use. */
  private slotEnv(slot: number): SlotEnv {
    let e = this.envs[slot];
    if (e === undefined) {
      e = slotEnvOf(this.envFor(slot));
      this.envs[slot] = e;
      if (e.sync === null) this.asyncEnvs += 1;
    }
    return e;
  }

  /** Asks the scheduler for the slot's next episode. */
  private async fill(slot: number): Promise<void> {
    const started = await this.scheduler.start(slot, () => this.slotEnv(slot).env);
    if (started === null) return;
    this.running[slot] = { started, current: started.first, steps: 0, inPolicyRow: false };
    this.active += 1;
  }

  /** The slot's episode left it: handed to the scheduler, and the slot refilled. */
  private async end(slot: number, r: Running<E>, stop: EpisodeStop): Promise<void> {
    this.running[slot] = undefined;
    this.active -= 1;
    const { episode, first } = r.started;
    await this.scheduler.end(slot, { episode, first, last: r.current, steps: r.steps, stop });
    await this.fill(slot);
  }

  /** The running slots (ascending) become this step's stepping slots; returns their observations. */
  private gather(): SlotObservation[] {
    const requests: SlotObservation[] = [];
    let n = 0;
    for (let slot = 0; slot < this.width; slot++) {
      const r = this.running[slot];
      if (r === undefined) continue;
      this.stepping[n] = r;
      this.slots[n] = slot;
      this.stopped[n] = undefined;
      n += 1;
      requests.push({ slot, obs: r.current.obs });
    }
    return requests;
  }

  /** The policy's outputs, checked (one per request) and as executed (registered execution noise). */
  private executed(outputs: readonly PolicyOutput[], n: number): readonly PolicyOutput[] {
    if (outputs.length !== n) throw new Error(`inferBatch answered ${outputs.length} of ${n} observations`);
    const execute = this.options.execute;
    if (execute === undefined) return outputs;
    return outputs.map((o, i) =>
      execute((this.stepping[i] as Running<E>).started.episode, (this.stepping[i] as Running<E>).steps, o),
    );
  }

  /** The batched call failed: so did the episode of every stepping slot (the runtime cannot say which caused it). */
  private async failAll(n: number, error: unknown): Promise<void> {
    for (let i = 0; i < n; i++)
      await this.end(this.slots[i] as number, this.stepping[i] as Running<E>, { kind: 'failed', error });
  }

  /** Steps every stepping slot in process, in slot order; returns the loop's time stepping (ms). */
  private stepAllInProcess(n: number, outputs: readonly PolicyOutput[], share: number): number {
    let simMs = 0;
    for (let i = 0; i < n; i++) simMs += this.stepInProcess(i, n, outputs[i] as PolicyOutput, share);
    return simMs;
  }

  /** Steps or takes the sent step of every stepping slot, in slot order; returns the loop's time on them (ms). */
  private async stepAll(
    n: number,
    outputs: readonly PolicyOutput[],
    share: number,
    sent: readonly (SentStep | undefined)[],
  ): Promise<number> {
    let simMs = 0;
    for (let i = 0; i < n; i++) {
      const output = outputs[i] as PolicyOutput;
      const inFlight = sent[i];
      simMs +=
        inFlight === undefined
          ? this.stepInProcess(i, n, output, share)
          : await this.takeSent(i, output, share, inFlight);
    }
    return simMs;
  }

  /** Each stepping episode's share of the step's wall time that was neither the policy's nor stepping. */
  private chargeOther(n: number, restMs: number): void {
    const other = Math.max(0, restMs) / n;
    for (let i = 0; i < n; i++) {
      const clock = (this.stepping[i] as Running<E>).started.clock;
      if (clock !== undefined) clock.otherMs += other;
    }
  }

  /** Every asynchronous environment's step sent before any is awaited (null: every environment steps in process). */
  private sendAsyncSteps(n: number, outputs: readonly PolicyOutput[]): readonly (SentStep | undefined)[] | null {
    if (this.asyncEnvs === 0) return null;
    const envs = this.slots.slice(0, n).map((slot) => (this.envs[slot] as SlotEnv).env);
    return sendSteps(envs, (i) => (outputs[i] as PolicyOutput).action);
  }

  /** Steps the i-th stepping slot's in-process environment with `output`; returns the loop's time on it (ms). */
  private stepInProcess(i: number, n: number, output: PolicyOutput, share: number): number {
    const slot = this.slots[i] as number;
    const r = this.stepping[i] as Running<E>;
    const e = this.envs[slot] as SlotEnv;
    const clock = this.chargePolicy(r, share);
    const view = this.lendRow(e, r, i, n);
    let after: StepResult;
    const t0 = performance.now();
    try {
      after = (e.sync as StepsSynchronously).stepSync(output.action);
      if (clock !== undefined) clock.simMs += performance.now() - t0;
      after = this.observed(after);
    } catch (error) {
      this.stopped[i] = { kind: 'failed', error };
      return performance.now() - t0;
    }
    const ms = performance.now() - t0; // the loop's time spent stepping
    this.advance(i, output, view, after);
    return ms;
  }

  /** Takes the i-th stepping slot's step in flight (sent with the others'); returns the loop's time waiting (ms). */
  private async takeSent(i: number, output: PolicyOutput, share: number, inFlight: SentStep): Promise<number> {
    const clock = this.chargePolicy(this.stepping[i] as Running<E>, share);
    let after: StepResult;
    const t0 = performance.now();
    try {
      const { result, ms } = await inFlight;
      if (clock !== undefined) clock.simMs += ms; // this step's own round trip (the steps of a batch overlap)
      after = this.observed(result);
    } catch (error) {
      this.stopped[i] = { kind: 'failed', error };
      return performance.now() - t0;
    }
    const ms = performance.now() - t0; // the loop's time spent waiting for the step
    this.advance(i, output, null, after);
    return ms;
  }

  /** Adds the episode's share of the batched call to its policy time; returns its clock. */
  private chargePolicy(r: Running<E>, share: number): SlotClock | undefined {
    const clock = r.started.clock;
    if (clock !== undefined) clock.policyMs += share;
    return clock;
  }

  private observed(result: StepResult): StepResult {
    const observe = this.options.observe;
    return observe === undefined ? result : observe(result);
  }

  /** The i-th stepping slot reached `after`: subscribers told, `before` given back, whether it stops decided. */
  private advance(i: number, output: PolicyOutput, view: Uint8Array | null, after: StepResult): void {
    const slot = this.slots[i] as number;
    const r = this.stepping[i] as Running<E>;
    const e = this.envs[slot] as SlotEnv;
    const before = r.current;
    r.current = after;
    r.steps += 1;
    for (const s of this.subs) s.onStep?.(slot, r.started.episode, before, output, after);
    this.giveBack(e, r, before, view, after);
    this.stopped[i] = this.stopOf(e, r, after);
  }

  /**
   * Recycling: a step that does not end the episode may draw its frame straight into the row the next call packs it
   * into (assuming the same slots run then; otherwise the policy copies it, as any frame). Only an environment
   * stepped here: a step already sent cannot be asked to draw into anything. Returns the row drawn into, or null.
   */
  private lendRow(e: SlotEnv, r: Running<E>, i: number, n: number): Uint8Array | null {
    const rows = this.rows;
    if (rows === null || n <= 1 || r.steps + 1 >= this.cap || e.sync === null || e.drawer === null) return null;
    const view = rows.nextInputRow(e.drawer.frameField, n, i);
    return view !== null && e.drawer.drawNextInto(view) ? view : null;
  }

  /** Recycling: `before` back to its environment, unless its frame sits in the policy's row (the policy's memory). */
  private giveBack(e: SlotEnv, r: Running<E>, before: StepResult, view: Uint8Array | null, after: StepResult): void {
    if (!this.recycle) return;
    if (before !== r.started.first && !r.inPolicyRow) e.taker?.releaseObservation(before);
    r.inPolicyRow =
      view !== null &&
      (after.obs[(e.drawer as DrawsFramesInto).frameField] as { data?: unknown } | undefined)?.data === view;
  }

  /** Why the episode stops after reaching `after` (done, over the spec's limit, the cap), or undefined. */
  private stopOf(e: SlotEnv, r: Running<E>, after: StepResult): EpisodeStop | undefined {
    const limit = this.options.enforceSpecLimit === true ? e.env.spec.maxSteps : 0;
    if (after.done) return { kind: 'done' };
    if (limit > 0 && r.steps > limit) return { kind: 'over-limit', limit };
    if (r.steps >= this.cap) return { kind: 'cap' };
    return undefined;
  }
}
