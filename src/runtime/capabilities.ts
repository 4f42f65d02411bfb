/**
 * Capabilities: fast paths an environment or a policy MAY offer beside its contract (environment.ts, policy.ts),
 * each a separate interface with a type guard. The contracts stay as small as openpi's; a loop that can use a
 * capability asks the guard once per environment or policy and falls back to the contract where it is absent, with
 * the same results (only the speed differs). A wrapper that adds logic to the contract's calls (allowlists, pooling,
 * a bridge) offers none of them, so its own calls always run.
 *
 *   StepsSynchronously      an in-process environment's step without a promise
 *   TakesBackObservations   an environment that reuses the buffers of results its caller gives back
 *   DrawsFramesInto         an environment that draws its next frame (the field it names) into the caller's memory
 *   LendsInputRows          a batch policy that lends the rows of its next input, for frames drawn in place
 */
import type { NdArray, SimEnvironment, StepResult } from './environment.js';
import type { BatchPolicy } from './policy.js';

/**
 * An in-process environment's step without a promise: the same result as `step`, its errors thrown instead of
 * rejected. Loops that step every slot of a batch one after another (lockstep, the campaign's episode loop) call it
 * where it exists, saving a promise and a microtask per slot-step.
 */
export interface StepsSynchronously {
  stepSync(action: NdArray): StepResult;
}

/**
 * The caller gives back the observation buffers of a result this environment returned: neither it nor anything it
 * handed them to will read them again, so the environment may draw a later frame into them. Each result at most
 * once. Results never given back stay valid for good (no later frame overlaps them); an environment without this
 * capability simply allocates every frame.
 */
export interface TakesBackObservations {
  releaseObservation(result: StepResult): void;
}

/**
 * Asks that the next step draw its frame (the uint8 observation field `frameField`, which this environment
 * declares) into `view` (the caller's memory) unless that step ends the episode; the result's field data is then
 * `view` itself, which the caller owns (it is never given back with releaseObservation). One step only; a reset
 * cancels it. Returns false where the view is not the frame's size (nothing changes).
 */
export interface DrawsFramesInto {
  /** The observation field holding the frame (uint8) that drawNextInto draws. */
  readonly frameField: string;
  drawNextInto(view: Uint8Array): boolean;
}

/**
 * Where the next inferBatch of `batch` observations will pack row `row` of the uint8 observation field `field`, or
 * null. An observation whose field data is exactly this view is used in place, not copied. Asked between two calls;
 * the view's bytes are read by the next call and left alone by the policy until the call after it, so whoever fills
 * it must keep it unchanged until then.
 */
export interface LendsInputRows {
  nextInputRow(field: string, batch: number, row: number): Uint8Array | null;
}

const isFunction = (v: unknown): boolean => typeof v === 'function';

export function stepsSynchronously<T extends SimEnvironment>(env: T): env is T & StepsSynchronously {
  return isFunction((env as Partial<StepsSynchronously>).stepSync);
}

export function takesBackObservations<T extends SimEnvironment>(env: T): env is T & TakesBackObservations {
  return isFunction((env as Partial<TakesBackObservations>).releaseObservation);
}

export function drawsFramesInto<T extends SimEnvironment>(env: T): env is T & DrawsFramesInto {
  const e = env as Partial<DrawsFramesInto>;
  return isFunction(e.drawNextInto) && typeof e.frameField === 'string';
}

export function lendsInputRows<T extends BatchPolicy>(policy: T): policy is T & LendsInputRows {
  return isFunction((policy as Partial<LendsInputRows>).nextInputRow);
}
