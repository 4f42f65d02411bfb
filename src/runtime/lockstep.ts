/**
 * Lockstep episodes over a BatchPolicy: up to `policy.maxBatch` episodes run at once, one per slot, and every
 * step is one `inferBatch` over all running slots followed by one `step` of each slot's environment. When an
 * episode ends its slot takes the next queued episode (reset + resetSlot) before the next batched step, so the
 * batch stays full until the queue runs dry. Episodes are independent: each slot has its own environment and its
 * own bank, and the policy's per-slot results do not depend on which other slots share the batch (README.md).
 *
 * Recording, traces and progress are subscribers (after openpi's runtime), not code in the loop.
 */
import { sendSteps, type SentStep } from './send-steps.js';
import type { ResetRequest, SimEnvironment, StepResult } from './environment.js';
import type { BatchPolicy, EpisodeInfo, PolicyOutput, SlotObservation } from './policy.js';

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
  /**
   * The caller's promise that the policy and every subscriber copy what they keep of an observation: none holds a
   * StepResult's buffers past the call that handed it over. The runner then gives each step's `before` back to its
   * environment (SimEnvironment.releaseObservation, where the environment has it) once the policy has answered and
   * every onStep has run, so the environment can draw a later frame into it instead of allocating one. An
   * episode's first and last results, which its outcome keeps, are never given back. With a policy that has
   * nextInputRow and environments that have drawNextInto, a step that does not end its episode draws its `rgb` frame
   * straight into the row of the policy's next input (no copy when the same slots run next); such a frame stays
   * valid until the call after next. Default false: every result stays valid for good.
   */
  readonly recycleObservations?: boolean;
}

interface Running {
  readonly index: number;
  readonly episode: LockstepEpisode;
  readonly first: StepResult;
  current: StepResult;
  steps: number;
  /** Whether current's frame was drawn into a row of the policy's input (recycling only). */
  inPolicyRow: boolean;
}

/** The observation field of the frames drawn straight into the policy's input when recycling. */
const FRAME_FIELD = 'rgb';

/**
 * Runs `episodes` (in order of their index, slots filled lowest first) with one environment per slot from
 * `envFor(slot)`; returns one outcome per episode, in the input order.
 */
export async function runLockstep(
  policy: BatchPolicy,
  envFor: (slot: number) => SimEnvironment,
  episodes: readonly LockstepEpisode[],
  options: LockstepOptions = {},
): Promise<EpisodeOutcome[]> {
  const subs = options.subscribers ?? [];
  const maxSteps = options.maxSteps ?? Infinity;
  const recycle = options.recycleObservations === true;
  // Slots past the episode count never start (start() finds the queue empty), so they are never scanned.
  const width = Math.min(policy.maxBatch, episodes.length);
  // Per-slot state in arrays indexed by slot (no Map, no per-step sort: ascending slot order is the index order).
  const envs: (SimEnvironment | undefined)[] = new Array<SimEnvironment | undefined>(width).fill(undefined);
  /** Environments made without a synchronous step (bridged): while there are any, each step sends theirs first. */
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
  const outcomes: (EpisodeOutcome | undefined)[] = new Array<EpisodeOutcome | undefined>(episodes.length);
  const running: (Running | undefined)[] = new Array<Running | undefined>(width).fill(undefined);
  let active = 0;
  let next = 0;
  const start = async (slot: number): Promise<void> => {
    if (next >= episodes.length) return;
    const index = next++;
    const episode = episodes[index] as LockstepEpisode;
    const first = await env(slot).reset(episode.reset);
    await policy.resetSlot(slot, episode.info);
    for (const s of subs) s.onEpisodeStart?.(slot, episode, first);
    running[slot] = { index, episode, first, current: first, steps: 0, inPolicyRow: false };
    active += 1;
  };
  const finish = (slot: number, r: Running): void => {
    const outcome: EpisodeOutcome = { episode: r.episode, first: r.first, last: r.current, steps: r.steps };
    outcomes[r.index] = outcome;
    running[slot] = undefined;
    active -= 1;
    for (const s of subs) s.onEpisodeEnd?.(slot, outcome);
  };
  for (let slot = 0; slot < width; slot++) await start(slot);
  const stepping: (Running | undefined)[] = new Array<Running | undefined>(width).fill(undefined);
  const slots: number[] = new Array<number>(width).fill(0);
  while (active > 0) {
    // The slots running at the top of the step, ascending; a slot refilled during the step waits for the next one.
    const requests: SlotObservation[] = [];
    let n = 0;
    for (let slot = 0; slot < width; slot++) {
      const r = running[slot];
      if (r === undefined) continue;
      stepping[n] = r;
      slots[n] = slot;
      n += 1;
      requests.push({ slot, obs: r.current.obs });
    }
    const outputs = await policy.inferBatch(requests);
    // Bridged environments are all sent their step before any is awaited (bridges/send-steps.ts); results are taken
    // in slot order below, in-process ones stepped there in turn.
    const sent: readonly (SentStep | undefined)[] | null =
      asyncEnvs === 0 ? null : sendSteps(slots.slice(0, n).map((slot) => envs[slot] as SimEnvironment), (i) => (outputs[i] as PolicyOutput).action);
    for (let i = 0; i < n; i++) {
      const slot = slots[i] as number;
      const r = stepping[i] as Running;
      const output = outputs[i] as PolicyOutput;
      const before = r.current;
      const e = envs[slot] as SimEnvironment;
      // Recycling: a step that does not end the episode may draw its frame straight into the row the next call
      // packs it into (assuming the same slots run then; otherwise the policy copies it, as any frame).
      let view: Uint8Array | null = null;
      // (Only an environment stepped here: a step already sent cannot be asked to draw into anything.)
      if (recycle && n > 1 && r.steps + 1 < maxSteps && e.stepSync !== undefined && e.drawNextInto !== undefined && policy.nextInputRow !== undefined) {
        view = policy.nextInputRow(FRAME_FIELD, n, i);
        if (view !== null && !e.drawNextInto(FRAME_FIELD, view)) view = null;
      }
      // sent has every environment without stepSync (sendSteps), so one not in it steps synchronously
      const inFlight = sent?.[i];
      const after = inFlight !== undefined ? (await inFlight).result : (e.stepSync as NonNullable<SimEnvironment['stepSync']>)(output.action);
      r.current = after;
      r.steps += 1;
      for (const s of subs) s.onStep?.(slot, r.episode, before, output, after);
      // A frame drawn into the policy's row is the policy's memory: it is not the environment's to take back.
      if (recycle && before !== r.first && !r.inPolicyRow) e.releaseObservation?.(before);
      r.inPolicyRow = view !== null && (after.obs[FRAME_FIELD] as { data?: unknown } | undefined)?.data === view;
      if (after.done || r.steps >= maxSteps) {
        finish(slot, r);
        await start(slot);
      }
    }
  }
  return outcomes.map((o, i) => {
    if (o === undefined) throw new Error(`runLockstep: episode ${i} did not finish`);
    return o;
  });
}
