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
 * (after openpi's runtime). Fast paths an environment or the policy offers (a synchronous step, frames given back
 * or drawn into the policy's input) are capability interfaces, asked once per environment (capabilities.ts).
 * Episodes are independent: each slot has its own environment and its own bank, and the
 * policy's per-slot results do not depend on which other slots share the batch (src/policies/README.md).
 */
import { SlotLoop } from './slot-loop.js';
import type { ResetRequest, SimEnvironment, StepResult } from './environment.js';
import type { BatchPolicy, EpisodeInfo, PolicyOutput } from './policy.js';

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
   * environment can draw a later frame into it (capabilities.ts, TakesBackObservations). With a policy that lends
   * its input rows (LendsInputRows) and environments that step in process and draw frames into the caller's memory
   * (StepsSynchronously, DrawsFramesInto), a step that does not end its episode draws its frame (the field its
   * environment declares) straight into the row of the policy's next input (no copy when the same slots run next);
   * such a frame stays valid until the call after next. An episode's first and last results are never given back.
   * Default false: every result stays valid for good.
   */
  readonly recycleObservations?: boolean;
}

/** Runs the scheduler's episodes in `policy.maxBatch` slots, slot `s` on the environment `envFor(s)` (made once). */
export async function runSlots<E>(
  policy: BatchPolicy,
  envFor: (slot: number) => SimEnvironment,
  scheduler: SlotScheduler<E>,
  options: SlotLoopOptions<E> = {},
): Promise<void> {
  await new SlotLoop<E>(policy, envFor, scheduler, options).run();
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
