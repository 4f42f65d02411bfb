/**
 * Registered execution noise for the lite world (`simulator: { kind: lite, executionNoise }`; the lite simulator kind
 * owns the field, src/sims/lite/kind.ts, and hands it to the plan through SimulatorFace.executionNoise). It lives in
 * core because the plan (src/protocol), the runner and the adjudication all read the same spec and stream recipe.
 *
 * The lite simulators and checkpoints are deterministic, so without this option every lite campaign has
 * c = 0 and the exact-replicate floor (C) is 0 by construction. Real simulators and sampling policies are
 * not ("shared seeds do not guarantee identical execution"). This option makes the lite world execute
 * each policy action with a registered, seeded perturbation, so b and c are both exercised and C's floor
 * is a measured quantity.
 *
 * kind `action-gaussian`: the action the simulator executes at step t (0-based, the t-th action of the
 * episode) is  a′ = a + σ·z,  z = (z₁ … z_d) independent standard normals drawn (in component order) from
 *   Prng(streamLabel)  (src/core/prng.ts, xoshiro128** v1, polar Box–Muller),
 *   streamLabel = "imep.execution-noise.v1/<seed>/<scopeKey>/<attempt>/<t>"
 *   scopeKey    = scope `shared`:        the unit's scopeId (task × seed) — the same draw for the unit in
 *                                        every wave and condition, so paired conditions stay coupled;
 *                 scope `per-condition`: "<scopeId>/<wave>/<condition>" — independent draws for every
 *                                        condition run (a condition listed in two waves draws anew in each).
 * The simulator then clips as it clips any action (the lite tool's step length and workspace limits).
 * Rows record the executed action (actionDigest / actionHashes are of a′). Retries of a unit redraw the
 * same stream (the key has no try number). Pure: the same spec, episode and step give the same bytes.
 */
import { z } from 'zod';
import { Prng } from './prng.js';

/** protocol's SeedInt (src/protocol/schema-common.ts), repeated here: core imports nothing above it. */
const SeedInt = z.number().int().min(0).max(0xffff_ffff).describe('an integer seed in [0, 4294967295]');

export const EXECUTION_NOISE_STREAM = 'imep.execution-noise.v1';
export const EXECUTION_NOISE_SCOPES = ['shared', 'per-condition'] as const;
/** The largest σ accepted: the lite tool's maximal step length (MAX_STEP = 0.06) times 10. */
export const EXECUTION_NOISE_SIGMA_MAX = 0.6;

export const ExecutionNoiseSchema = z
  .strictObject({
    kind: z
      .literal('action-gaussian')
      .describe('action-gaussian: every executed action is the policy action plus σ·N(0, I)'),
    sigma: z
      .number()
      .gt(0)
      .max(EXECUTION_NOISE_SIGMA_MAX)
      .describe(
        'σ > 0, the standard deviation of the noise on each action component (lite tool units; one step moves ≤ 0.06; leave executionNoise out for none)',
      ),
    seed: SeedInt.describe('the noise seed: every draw is keyed by (seed, unit, [wave, condition], attempt, step)'),
    scope: z
      .enum(EXECUTION_NOISE_SCOPES)
      .describe(
        'shared: the same draw for a unit in every condition (paired conditions stay coupled); per-condition: independent draws per condition run',
      ),
  })
  .describe('registered execution noise (lite only): seeded action noise drawn per unit, attempt and step');

export type ExecutionNoise = z.infer<typeof ExecutionNoiseSchema>;

/** The episode fields the noise key reads (a PlannedEpisode has them all). */
export interface NoiseEpisode {
  readonly wave: number;
  readonly condition: string;
  readonly scopeId: string;
  readonly attempt: number;
}

/** The recipe of the stream labels, written into plan.json beside the spec. */
export function noiseStreamRecipe(spec: ExecutionNoise): string {
  const scopeKey = spec.scope === 'shared' ? '<scopeId>' : '<scopeId>/<wave>/<condition>';
  return `${EXECUTION_NOISE_STREAM}/${spec.seed}/${scopeKey}/<attempt>/<step>`;
}

/** The PRNG seed of the draw at (episode, step): see the file comment. */
export function noiseStreamLabel(spec: ExecutionNoise, ep: NoiseEpisode, step: number): string {
  const scopeKey = spec.scope === 'shared' ? ep.scopeId : `${ep.scopeId}/${ep.wave}/${ep.condition}`;
  return `${EXECUTION_NOISE_STREAM}/${spec.seed}/${scopeKey}/${ep.attempt}/${step}`;
}

/** The executed action: `action` + σ·z from the (episode, step) stream, as float32 (the action's own dtype). */
export function noisyAction(
  spec: ExecutionNoise,
  ep: NoiseEpisode,
  step: number,
  action: ArrayLike<number>,
): Float32Array {
  const prng = new Prng(noiseStreamLabel(spec, ep, step));
  const out = new Float32Array(action.length);
  for (let i = 0; i < action.length; i++) out[i] = (action[i] as number) + spec.sigma * prng.nextNormal();
  return out;
}
