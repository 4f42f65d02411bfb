/**
 * THE lockstep loop: up to `policy.maxBatch` episodes run at once, one per slot, and every step is one
 * `inferBatch` over all running slots (ascending) followed by one step of each slot's environment. Bridged
 * environments are all sent their step before any result is taken (send-steps.ts); results are taken in slot
 * order. When a step's results are all taken, each episode that ended (done, the step cap, or a failure) is handed
 * to the scheduler and its slot refilled, in slot order, before the next batched step.
 *
 * What runs in a slot is the scheduler's business (`SlotScheduler`): the flat queue below (`runLockstep`), or the
 * campaign runner's units with their attempts, retries and registered points (src/campaign/episode-loop.ts).
 * Everything else — rows, traces, progress, timing — is a subscriber or the scheduler's, never code in the loop
 * (after openpi's runtime). Episodes are independent: each slot has its own environment and its own bank, and the
 * policy's per-slot results do not depend on which other slots share the batch (README.md).
 */
import { performance } from 'node:perf_hooks';
import { sendSteps, type SentStep } from './send-steps.js';
import type { ResetRequest, SimEnvironment, StepResult } from './environment.js';
import type { BatchPolicy, EpisodeInfo, PolicyOutput, SlotObservation } from './policy.js';

/** Time an episode spent, by part (ms); the loop adds the parts it sees, the scheduler the rest. */
export interface SlotClock {
  simMs: number;
  policyMs: number;
  bankMs: number;
  otherMs: number;
}

/** An episode a scheduler started in a slot: reset, the policy's slot reset, ready for its first inference. */
export interface StartedEpisode<E> {
  readonly episode: E;
  readonly first: StepResult;
  /** Where the loop adds the episode's step time (sim, policy share, other share); omit to keep none. */
  readonly clock?: SlotClock;
}

/** Why an episode left its slot. */
export type EpisodeStop =
  | { readonly kind: 'done' }
  | { readonly kind: 'cap' }
  /** The environment's own step budget (`SimEnvironment.spec.maxSteps`) passed without the episode ending. */
  | { readonly kind: 'over-limit'; readonly limit: number }
  /** A step of this slot threw, or the batched inference it was part of did. */
  | { readonly kind: 'failed'; readonly error: unknown };

export interface EndedEpisode<E> {
  readonly episode: E;
  readonly first: StepResult;
  /** The last result the episode reached (its first when it failed before a step). */
  readonly last: StepResult;
  /** Steps taken (policy calls answered and stepped). */
  readonly steps: number;
  readonly stop: EpisodeStop;
}

export interface SlotScheduler<E> {
  /**
   * The slot's next episode, started on `env()` (the slot's environment, made on first use), or null when the slot
   * has nothing more to run. A failure while starting is the scheduler's to handle (retry, move on, or throw to
   * stop the loop).
   */
  start(slot: number, env: () => SimEnvironment): Promise<StartedEpisode<E> | null>;
  /** The slot's episode left it. Throwing stops the loop. */
  end(slot: number, ended: EndedEpisode<E>): Promise<void> | void;
}

export interface StepSubscriber<E> {
  /** After the environment stepped with the policy's action for `before`. */
  onStep?(slot: number, episode: E, before: StepResult, output: PolicyOutput, after: StepResult): void;
}

export interface SlotLoopOptions<E> {
  readonly subscribers?: readonly StepSubscriber<E>[];
  /** Hard cap on steps per episode: an episode that reaches it ends as 'cap' (default: none). */
  readonly maxSteps?: number;
  /** Enforce each environment's `spec.maxSteps`: an episode still running past it ends as 'over-limit'. */
  readonly enforceSpecLimit?: boolean;
  /** Applied to every step result before anyone sees it (e.g. the allowlists' split of the observation). */
  readonly observe?: (result: StepResult) => StepResult;
  /** Checked once per batched step: a returned value is thrown and stops the loop (e.g. the row sink failed). */
  readonly abort?: () => unknown;
  /**
   * What the environment executes for the policy's output at `step` (the steps the episode took before it), e.g.
   * the action plus registered execution noise; applied right after inferBatch, so a throw fails the batch and
   * subscribers see what was executed. Default: the output as it is.
   */
  readonly execute?: (episode: E, step: number, output: PolicyOutput) => PolicyOutput;
  /** Time spent inside inferBatch that is not the policy's (e.g. memory read hooks), so far (ms). */
  readonly hookMs?: () => number;
  /**
   * The caller's promise that the policy and every subscriber copy what they keep of an observation: none holds a
   * StepResult's buffers past the call that handed it over. The loop then gives each step's `before` back to its
   * environment (SimEnvironment.releaseObservation) once the policy answered and every onStep ran, so the
   * environment can draw a later frame into it. With a policy that has nextInputRow and environments that have
   * drawNextInto, a step that does not end its episode draws its `rgb` frame straight into the row of the policy's
   * next input (no copy when the same slots run next); such a frame stays valid until the call after next. An
   * episode's first and last results are never given back. Default false: every result stays valid for good.
   */
  readonly recycleObservations?: boolean;
}

interface Running<E> {
  readonly started: StartedEpisode<E>;
  current: StepResult;
  steps: number;
  /** Whether current's frame was drawn into a row of the policy's input (recycling only). */
  inPolicyRow: boolean;
}

/** The observation field of the frames drawn straight into the policy's input when recycling. */
const FRAME_FIELD = 'rgb';

/** Runs the scheduler's episodes in `policy.maxBatch` slots, slot `s` on the environment `envFor(s)` (made once). */
export async function runSlots<E>(
  policy: BatchPolicy,
  envFor: (slot: number) => SimEnvironment,
  scheduler: SlotScheduler<E>,
  options: SlotLoopOptions<E> = {},
): Promise<void> {
  const subs = options.subscribers ?? [];
  const cap = options.maxSteps ?? Infinity;
  const recycle = options.recycleObservations === true;
  const observe = options.observe;
  const width = policy.maxBatch;
  const envs: (SimEnvironment | undefined)[] = new Array<SimEnvironment | undefined>(width).fill(undefined);
  let asyncEnvs = 0;
  const env = (slot: number): SimEnvironment => {
    let e = envs[slot];
    if (e === undefined) {
      e = envFor(slot);
      envs[slot] = e;
      if (e.stepSync === undefined) asyncEnvs += 1;
    }
    return e;
  };
  const running: (Running<E> | undefined)[] = new Array<Running<E> | undefined>(width).fill(undefined);
  let active = 0;
  let idle = false; // true once a start found nothing: later slots are not asked again until one frees
  const fill = async (slot: number): Promise<void> => {
    const started = await scheduler.start(slot, () => env(slot));
    if (started === null) return;
    running[slot] = { started, current: started.first, steps: 0, inPolicyRow: false };
    active += 1;
  };
  const end = async (slot: number, r: Running<E>, stop: EpisodeStop): Promise<void> => {
    running[slot] = undefined;
    active -= 1;
    await scheduler.end(slot, {
      episode: r.started.episode,
      first: r.started.first,
      last: r.current,
      steps: r.steps,
      stop,
    });
    await fill(slot);
  };
  for (let slot = 0; slot < width && !idle; slot++) {
    await fill(slot);
    if (running[slot] === undefined) idle = true;
  }
  const stepping: (Running<E> | undefined)[] = new Array<Running<E> | undefined>(width).fill(undefined);
  const slots: number[] = new Array<number>(width).fill(0);
  const stopped: (EpisodeStop | undefined)[] = new Array<EpisodeStop | undefined>(width).fill(undefined);
  while (active > 0) {
    const aborted = options.abort?.();
    if (aborted !== undefined) throw aborted;
    const requests: SlotObservation[] = [];
    let n = 0;
    for (let slot = 0; slot < width; slot++) {
      const r = running[slot];
      if (r === undefined) continue;
      stepping[n] = r;
      slots[n] = slot;
      stopped[n] = undefined;
      n += 1;
      requests.push({ slot, obs: r.current.obs });
    }
    const tIter = performance.now();
    const hook0 = options.hookMs?.() ?? 0;
    let outputs: readonly PolicyOutput[];
    try {
      outputs = await policy.inferBatch(requests);
      if (outputs.length !== n) throw new Error(`inferBatch answered ${outputs.length} of ${n} observations`);
      const execute = options.execute;
      if (execute !== undefined)
        outputs = outputs.map((o, i) =>
          execute((stepping[i] as Running<E>).started.episode, (stepping[i] as Running<E>).steps, o),
        );
    } catch (error) {
      for (let i = 0; i < n; i++) await end(slots[i] as number, stepping[i] as Running<E>, { kind: 'failed', error });
      continue;
    }
    const inferMs = performance.now() - tIter;
    const share = (inferMs - ((options.hookMs?.() ?? 0) - hook0)) / n;
    const sent: readonly (SentStep | undefined)[] | null =
      asyncEnvs === 0
        ? null
        : sendSteps(
            slots.slice(0, n).map((slot) => envs[slot] as SimEnvironment),
            (i) => (outputs[i] as PolicyOutput).action,
          );
    let simMs = 0;
    for (let i = 0; i < n; i++) {
      const slot = slots[i] as number;
      const r = stepping[i] as Running<E>;
      const output = outputs[i] as PolicyOutput;
      const clock = r.started.clock;
      if (clock !== undefined) clock.policyMs += share;
      const before = r.current;
      const e = envs[slot] as SimEnvironment;
      // Recycling: a step that does not end the episode may draw its frame straight into the row the next call
      // packs it into (assuming the same slots run then; otherwise the policy copies it, as any frame). Only an
      // environment stepped here: a step already sent cannot be asked to draw into anything.
      let view: Uint8Array | null = null;
      if (
        recycle &&
        n > 1 &&
        r.steps + 1 < cap &&
        e.stepSync !== undefined &&
        e.drawNextInto !== undefined &&
        policy.nextInputRow !== undefined
      ) {
        view = policy.nextInputRow(FRAME_FIELD, n, i);
        if (view !== null && !e.drawNextInto(FRAME_FIELD, view)) view = null;
      }
      let after: StepResult;
      const t0 = performance.now();
      try {
        const inFlight = sent?.[i];
        if (inFlight === undefined) {
          after = (e.stepSync as NonNullable<SimEnvironment['stepSync']>)(output.action);
          if (clock !== undefined) clock.simMs += performance.now() - t0;
        } else {
          const { result, ms } = await inFlight;
          after = result;
          if (clock !== undefined) clock.simMs += ms; // this step's own round trip (the steps of a batch overlap)
        }
        if (observe !== undefined) after = observe(after);
      } catch (error) {
        simMs += performance.now() - t0;
        stopped[i] = { kind: 'failed', error };
        continue;
      }
      simMs += performance.now() - t0; // the loop's time spent stepping or waiting for a step
      r.current = after;
      r.steps += 1;
      for (const s of subs) s.onStep?.(slot, r.started.episode, before, output, after);
      // A frame drawn into the policy's row is the policy's memory: it is not the environment's to take back.
      if (recycle && before !== r.started.first && !r.inPolicyRow) e.releaseObservation?.(before);
      r.inPolicyRow = view !== null && (after.obs[FRAME_FIELD] as { data?: unknown } | undefined)?.data === view;
      const limit = options.enforceSpecLimit === true ? e.spec.maxSteps : 0;
      if (after.done) stopped[i] = { kind: 'done' };
      else if (limit > 0 && r.steps > limit) stopped[i] = { kind: 'over-limit', limit };
      else if (r.steps >= cap) stopped[i] = { kind: 'cap' };
    }
    const other = Math.max(0, performance.now() - tIter - inferMs - simMs) / n;
    for (let i = 0; i < n; i++) {
      const clock = (stepping[i] as Running<E>).started.clock;
      if (clock !== undefined) clock.otherMs += other;
    }
    for (let i = 0; i < n; i++) {
      const stop = stopped[i];
      if (stop !== undefined) await end(slots[i] as number, stepping[i] as Running<E>, stop);
    }
  }
}

// ---- the flat queue: episodes in order, one after another in the lowest free slot ----

export interface LockstepEpisode {
  readonly info: EpisodeInfo;
  readonly reset: ResetRequest;
}

export interface EpisodeOutcome {
  readonly episode: LockstepEpisode;
  readonly first: StepResult;
  readonly last: StepResult;
  /** Steps taken (policy calls answered) in the episode. */
  readonly steps: number;
}

export interface LockstepSubscriber {
  onEpisodeStart?(slot: number, episode: LockstepEpisode, first: StepResult): void;
  /** After the environment stepped with the policy's action for `before`. */
  onStep?(slot: number, episode: LockstepEpisode, before: StepResult, output: PolicyOutput, after: StepResult): void;
  onEpisodeEnd?(slot: number, outcome: EpisodeOutcome): void;
}

export interface LockstepOptions {
  readonly subscribers?: readonly LockstepSubscriber[];
  /** Hard cap on steps per episode (default: none — the environment ends episodes). */
  readonly maxSteps?: number;
  /** See SlotLoopOptions.recycleObservations. */
  readonly recycleObservations?: boolean;
}

/**
 * Runs `episodes` (in order of their index, each in the lowest free slot) with one environment per slot from
 * `envFor(slot)`; returns one outcome per episode, in the input order. Any failure (a reset, a step, the policy)
 * stops the run and rejects with it.
 */
export async function runLockstep(
  policy: BatchPolicy,
  envFor: (slot: number) => SimEnvironment,
  episodes: readonly LockstepEpisode[],
  options: LockstepOptions = {},
): Promise<EpisodeOutcome[]> {
  const subs = options.subscribers ?? [];
  const outcomes: (EpisodeOutcome | undefined)[] = new Array<EpisodeOutcome | undefined>(episodes.length);
  const indexOf = new Map<LockstepEpisode, number>();
  let next = 0;
  const queue: SlotScheduler<LockstepEpisode> = {
    async start(slot, env) {
      if (next >= episodes.length) return null;
      const index = next++;
      const episode = episodes[index] as LockstepEpisode;
      indexOf.set(episode, index);
      const first = await env().reset(episode.reset);
      await policy.resetSlot(slot, episode.info);
      for (const s of subs) s.onEpisodeStart?.(slot, episode, first);
      return { episode, first };
    },
    end(slot, ended) {
      if (ended.stop.kind === 'failed') throw ended.stop.error;
      const outcome: EpisodeOutcome = {
        episode: ended.episode,
        first: ended.first,
        last: ended.last,
        steps: ended.steps,
      };
      outcomes[indexOf.get(ended.episode) as number] = outcome;
      for (const s of subs) s.onEpisodeEnd?.(slot, outcome);
    },
  };
  await runSlots(policy, envFor, queue, {
    subscribers: subs,
    ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
    ...(options.recycleObservations === undefined ? {} : { recycleObservations: options.recycleObservations }),
  });
  return outcomes.map((o, i) => {
    if (o === undefined) throw new Error(`runLockstep: episode ${i} did not finish`);
    return o;
  });
}
