/**
 * Batched inference across episodes in lockstep gives each episode exactly (bitwise) what batch size 1 gives.
 *
 * Why it holds here: a slot's bank, clock and read hook context are its own; the batch only stacks rows, and
 * every operator of the lite graphs (Cast, AveragePool, Gemm/MatMul, Relu, Mul/Div/ReduceSum over the memory
 * axis) computes each output row from its own input row with a reduction order that does not depend on the
 * number of rows (ONNX Runtime CPU / MLAS, one intra-op thread by default). On other providers (CUDA kernels
 * may pick a different algorithm per batch size) equality can degrade to float tolerance; this test is the
 * check to run there.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NdArray } from '../../src/runtime/environment.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { runLockstep } from '../../src/runtime/lockstep.js';
import { ExternalMemoryPolicy } from '../../src/policies/memory-policy.js';
import { LITE_MEMVLA } from './helpers.js';

const EPISODES = 24;

/** Frames the last trace saw in onStep that had been drawn straight into a row of the policy's input. */
let inRowFrames = 0;

async function trace(batchSize: number, recycleObservations = false): Promise<Map<string, string>> {
  const ckpt = await loadCheckpoint(LITE_MEMVLA);
  const policy = new ExternalMemoryPolicy(ckpt, { batchSize });
  const rows = new Map<string, string>();
  const views = new Set<unknown>();
  const nextInputRow = policy.nextInputRow.bind(policy);
  policy.nextInputRow = (field, batch, row) => {
    const v = nextInputRow(field, batch, row);
    if (v !== null) views.add(v);
    return v;
  };
  inRowFrames = 0;
  const hex = (a: Float32Array | undefined): string =>
    a === undefined ? '-' : Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');
  const outcomes = await runLockstep(
    policy,
    () => makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }),
    Array.from({ length: EPISODES }, (_, i) => ({ info: { episode: `seed-${i}` }, reset: { seed: i } })),
    {
      subscribers: [
        {
          onStep: (_slot, ep, before, out) => {
            if (views.has((before.obs['rgb'] as NdArray).data)) inRowFrames += 1;
            rows.set(
              `${ep.info.episode}@${before.step}:rgb`,
              createHash('sha256')
                .update((before.obs['rgb'] as NdArray).data as Uint8Array)
                .digest('hex'),
            );
            const ids = (out.readouts.reads ?? []).flatMap((r) => r.identities.map((id) => `${id.timestep}`)).join(',');
            rows.set(
              `${ep.info.episode}@${before.step}`,
              `${hex(out.action.data as Float32Array)}|${hex(out.readouts.decisionLogits)}|${ids}`,
            );
          },
        },
      ],
      recycleObservations,
    },
  );
  const frameHash = (r: { obs: Record<string, unknown> }): string =>
    createHash('sha256')
      .update((r.obs['rgb'] as NdArray).data as Uint8Array)
      .digest('hex');
  // the outcome's first and last results are never given back: hashed after every episode ran, they are intact
  for (const o of outcomes)
    rows.set(
      `${o.episode.info.episode}:end`,
      `${o.steps}:${String(o.last.evaluator['success'])}:${frameHash(o.first) === o.first.firstFrameHash}:${frameHash(o.last)}`,
    );
  await ckpt.release();
  return rows;
}

describe('batched lockstep inference', () => {
  it('batch 24 and batch 7 (slots refilled as episodes end) equal batch 1 bit for bit', async () => {
    const one = await trace(1);
    const full = await trace(EPISODES);
    const ragged = await trace(7);
    // observations given back to their environments (recycled frames) change nothing either
    const recycled = await trace(7, true);
    // most frames of the recycled batch-7 run were drawn straight into the policy's input rows
    expect(inRowFrames).toBeGreaterThan(EPISODES * 10);
    const recycledOne = await trace(1, true);
    expect(inRowFrames).toBe(0);
    expect(one.size).toBeGreaterThan(EPISODES * 15);
    expect([...full.keys()].sort()).toEqual([...one.keys()].sort());
    for (const [k, v] of one) if (k.endsWith(':end')) expect(v, k).toMatch(/:true:[0-9a-f]{64}$/);
    for (const [k, v] of one) {
      expect(full.get(k), k).toBe(v);
      expect(ragged.get(k), k).toBe(v);
      expect(recycled.get(k), k).toBe(v);
      expect(recycledOne.get(k), k).toBe(v);
    }
  });
});
