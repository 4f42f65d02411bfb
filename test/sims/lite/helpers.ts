import { sha256Hex } from '../../../src/core/hash.js';
import { Prng } from '../../../src/core/prng.js';
import type { ObsValue, ResetRequest, StepResult } from '../../../src/runtime/environment.js';
import type { LiteEnv } from '../../../src/sims/lite/lite-env.js';
import { frameOf, toolOf } from '../../../src/sims/lite/scripted.js';

/** Digest of one result's method-visible stream element: frame bytes, tool pose, instruction. */
export function obsDigest(r: StepResult): string {
  const f = frameOf(r.obs);
  const [x, y] = toolOf(r.obs);
  return `${sha256Hex(f.data)}|${x}|${y}|${String(r.obs['instruction'])}`;
}

/** Runs an episode with random (seeded) actions; returns every result. */
export function randomRollout(env: LiteEnv, request: ResetRequest, actionSeed: number, dim = 2): StepResult[] {
  const rng = new Prng(actionSeed);
  const out = [env.resetSync(request)];
  while (!(out[out.length - 1] as StepResult).done) {
    const a = new Float32Array(dim);
    for (let i = 0; i < dim; i++) a[i] = (rng.nextFloat() * 2 - 1) * 0.08;
    out.push(env.stepSync(a));
  }
  return out;
}

export function ev(r: StepResult, key: string): ObsValue {
  return r.evaluator[key] as ObsValue;
}

/** True when every byte of the frame is zero. */
export function allZero(r: StepResult): boolean {
  return frameOf(r.obs).data.every((b) => b === 0);
}
