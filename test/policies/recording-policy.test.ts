import { describe, expect, it } from 'vitest';
import { makeLiteEnvSync } from '../../src/sims/lite/registry.js';
import type { NdArray } from '../../src/runtime/environment.js';
import { loadCheckpoint } from '../../src/policies/checkpoint.js';
import { ExternalMemoryPolicy } from '../../src/policies/memory-policy.js';
import { slotPolicy } from '../../src/runtime/policy.js';
import { RecordingPolicy } from '../../src/policies/recording-policy.js';
import { LITE_MEMVLA } from './helpers.js';

async function recordEpisode(seed: number) {
  const ckpt = await loadCheckpoint(LITE_MEMVLA);
  const inner = slotPolicy(new ExternalMemoryPolicy(ckpt));
  const rec = new RecordingPolicy(inner);
  const env = makeLiteEnvSync('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true });
  let r = env.resetSync({ seed });
  await rec.reset({ episode: `seed-${seed}`, task: 'ShellGameTouch-lite' });
  const sent: NdArray[] = [];
  const actions: string[] = [];
  while (!r.done) {
    sent.push(r.obs['rgb'] as NdArray);
    const out = await rec.infer(r.obs);
    actions.push(Buffer.from((out.action.data as Float32Array).buffer).toString('hex'));
    r = env.stepSync(out.action);
  }
  await ckpt.release();
  return { rec, sent, actions, evaluatorKeys: Object.keys(r.evaluator) };
}

describe('RecordingPolicy', () => {
  it('captures every byte the policy receives, forwards outputs unchanged, and shows no evaluator field arrived', async () => {
    const { rec, sent, actions, evaluatorKeys } = await recordEpisode(2);
    const calls = rec.received();
    expect(calls[0]?.call).toBe('reset');
    expect(calls.length).toBe(sent.length + 1);
    expect([...rec.fieldNames()].sort()).toEqual(['instruction', 'rgb', 'toolPosition']);
    for (const k of evaluatorKeys) expect(rec.fieldNames().has(k)).toBe(false);
    const firstInfer = calls[1];
    if (firstInfer?.call !== 'infer') throw new Error('expected an infer call');
    const rgb = firstInfer.fields.find((f) => f.name === 'rgb');
    expect(rgb?.kind).toBe('ndarray');
    expect(rgb?.shape).toEqual([64, 64, 3]);
    expect(Buffer.from(rgb?.bytes ?? []).equals(Buffer.from(sent[0]?.data as Uint8Array))).toBe(true);
    expect(rec.bytesReceived()).toBeGreaterThan(sent.length * 64 * 64 * 3);
    // Recording changes nothing: same actions as an unwrapped run, and the digest is reproducible.
    const again = await recordEpisode(2);
    expect(again.actions).toEqual(actions);
    expect(again.rec.digest()).toBe(rec.digest());
    expect((await recordEpisode(3)).rec.digest()).not.toBe(rec.digest());
  });
});
