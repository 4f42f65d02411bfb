/**
 * Stepping a batch of environments at once: every environment without a synchronous step (a bridged simulator) is
 * sent its step before any is awaited, so simulators on different servers step at the same time; the caller then
 * takes the results in its own order (the lockstep loops: slot order), so what it does with them does not depend on
 * which step answered first. Environments that step synchronously (in-process, capabilities.ts) are left to the caller to step in turn.
 */
import { stepsSynchronously } from './capabilities.js';
import type { NdArray, SimEnvironment, StepResult } from './environment.js';

/** A step in flight and its round trip (ms), from when it was sent to when its result arrived. */
export type SentStep = Promise<{ readonly result: StepResult; readonly ms: number }>;

/**
 * Sends the step of every environment of `envs` that has no synchronous step, in index order, with the action
 * `actionOf(i)`; returns the steps in flight by index, undefined where the environment steps synchronously. A step
 * that fails (also by throwing at once) is a rejected promise at its index, marked handled, so a caller that stops
 * before awaiting it leaves no unhandled rejection behind.
 */
export function sendSteps(envs: readonly SimEnvironment[], actionOf: (i: number) => NdArray): (SentStep | undefined)[] {
  const sent = new Array<SentStep | undefined>(envs.length);
  for (let i = 0; i < envs.length; i++) {
    const env = envs[i] as SimEnvironment;
    if (stepsSynchronously(env)) continue;
    const t0 = performance.now();
    let p: SentStep;
    try {
      p = env.step(actionOf(i)).then((result) => ({ result, ms: performance.now() - t0 }));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.catch(() => undefined);
    sent[i] = p;
  }
  return sent;
}
