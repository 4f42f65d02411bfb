/**
 * The action the simulator executes: the policy's action, or — under the protocol's registered execution
 * noise (src/core/execution-noise.ts) — that action plus the (episode, step) draw. The episode loop
 * steps the environment with it and tells its subscribers it (so rows' action digests are of what was
 * executed). A non-float action under noise is refused, naming the field (the noise is defined on floats).
 */
import { ImepError } from '../core/index.js';
import type { NdArray, PolicyOutput } from '../runtime/index.js';
import { noisyAction, type ExecutionNoise, type NoiseEpisode } from '../protocol/index.js';

export function executedOutput(
  noise: ExecutionNoise | undefined,
  ep: NoiseEpisode,
  step: number,
  output: PolicyOutput,
): PolicyOutput {
  if (noise === undefined) return output;
  const a = output.action;
  if (!(a.data instanceof Float32Array || a.data instanceof Float64Array)) {
    throw new ImepError('E_USAGE', `execution noise needs a float action; the policy returned dtype ${a.dtype}`, {
      field: 'simulator.executionNoise',
      hint: 'remove simulator.executionNoise or use a policy with float32 actions',
    });
  }
  const action: NdArray = { dtype: 'float32', shape: [...a.shape], data: noisyAction(noise, ep, step, a.data) };
  return { ...output, action };
}
