import { describe, expect, it } from 'vitest';
import type { ReadContext, RetrievedItem } from '../../src/banks/record.js';
import { makeLiteEnvSync } from '../../src/sims/lite/registry.js';
import { tensorFrom } from '../../src/core/tensor.js';
import { loadCheckpoint, type LoadedCheckpoint } from '../../src/policies/checkpoint.js';
import { ExternalMemoryPolicy } from '../../src/policies/memory-policy.js';
import { slotPolicy, type Observation } from '../../src/runtime/policy.js';
import { LITE_MEMVLA, imepRejection } from './helpers.js';

const ENV = 'ShellGameTouch-lite';
const KWARGS = { blackoutFromStep: 6, strict: true };

async function observations(seed: number, steps: number): Promise<Observation[]> {
  // The scripted-free way to get a fixed observation sequence: replay the policy itself once.
  const ckpt = await loadCheckpoint(LITE_MEMVLA);
  const p = slotPolicy(new ExternalMemoryPolicy(ckpt));
  const env = makeLiteEnvSync(ENV, KWARGS);
  let r = env.resetSync({ seed });
  await p.reset({ episode: 'obs' });
  const out: Observation[] = [];
  while (!r.done && out.length < steps) {
    out.push(r.obs);
    r = env.stepSync((await p.infer(r.obs)).action);
  }
  await ckpt.release();
  return out;
}

describe('ExternalMemoryPolicy: the per-step sequence', () => {
  let ckpt: LoadedCheckpoint;

  it('reads before it writes, once per step, through the hook, and feeds what the hook returns', async () => {
    ckpt = await loadCheckpoint(LITE_MEMVLA);
    const policy = new ExternalMemoryPolicy(ckpt);
    const seen: { ctx: ReadContext; timesteps: number[] }[] = [];
    policy.setReadHook((items, ctx) => {
      seen.push({ ctx, timesteps: items.map((i) => i.identity.timestep) });
      return items;
    });
    const p = slotPolicy(policy);
    const obs = await observations(3, 12);
    await p.reset({ episode: 'ep-3', seed: 3 });
    for (const [t, o] of obs.entries()) {
      const out = await p.infer(o);
      expect(out.action.shape).toEqual([2]);
      expect(out.readouts.decisionLogits?.length).toBe(3);
      const read = out.readouts.reads?.[0];
      expect(read?.ctx.queryIndex).toBe(t + 1);
      expect(read?.ctx.episode).toBe('ep-3');
      expect(read?.ctx.bank).toBe('perceptual');
      // At step t the bank holds the writes of steps 0..t-1 only.
      expect(read?.ctx.candidateCount).toBe(t);
      expect(read?.identities.length).toBe(Math.min(t, 4));
      expect(read?.identities.every((id) => id.timestep < t)).toBe(true);
      expect(policy.bank(0).size).toBe(t + 1);
    }
    expect(seen.length).toBe(obs.length);
    expect(seen[0]?.timesteps).toEqual([]);
    // Past the cue, the learned query retrieves cue-phase writes (steps 0–4).
    expect(seen[10]?.timesteps.every((t) => t < 5)).toBe(true);
    await ckpt.release();
  });

  it('a substituted read changes the decision; an identity hook changes nothing', async () => {
    ckpt = await loadCheckpoint(LITE_MEMVLA);
    const policy = new ExternalMemoryPolicy(ckpt);
    const p = slotPolicy(policy);
    const obs = await observations(5, 10);
    const run = async (): Promise<Float32Array[]> => {
      await p.reset({ episode: 'e' });
      const logits: Float32Array[] = [];
      for (const o of obs) logits.push((await p.infer(o)).readouts.decisionLogits as Float32Array);
      return logits;
    };
    const plain = await run();
    policy.setReadHook((items) => items.map((it) => ({ ...it })));
    expect(await run()).toEqual(plain);
    // Replace every retrieved feature by the same feature read from another ball position: different fact.
    const ball = (seed: number): unknown => makeLiteEnvSync(ENV, KWARGS).resetSync({ seed }).evaluator['ballCup'];
    let donorSeed = 6;
    while (ball(donorSeed) === ball(5)) donorSeed++;
    const other = await observations(donorSeed, 10);
    const donorBank = new ExternalMemoryPolicy(await loadCheckpoint(LITE_MEMVLA));
    const dp = slotPolicy(donorBank);
    await dp.reset({ episode: 'donor' });
    for (const o of other) await dp.infer(o);
    const donor = new Map(
      donorBank
        .bank(0)
        .entries()
        .map((e) => [e.timestep, e.feature]),
    );
    policy.setReadHook((items) =>
      items.map((it): RetrievedItem => ({
        identity: it.identity,
        leaves: { feature: donor.get(it.identity.timestep) ?? (it.leaves['feature'] as never) },
      })),
    );
    const swapped = await run();
    const argmax = (x: Float32Array): number => x.indexOf(Math.max(...x));
    expect(argmax(swapped[9] as Float32Array)).not.toBe(argmax(plain[9] as Float32Array));
    await donorBank.release();
    await ckpt.release();
  });

  it('refuses hook results that do not fit the memory input, and misuse of slots', async () => {
    ckpt = await loadCheckpoint(LITE_MEMVLA);
    const policy = new ExternalMemoryPolicy(ckpt, { batchSize: 2 });
    const obs = await observations(1, 3);
    const o = obs[0] as Observation;
    expect((await imepRejection(policy.inferBatch([{ slot: 0, obs: o }]))).code).toBe('E_USAGE'); // not reset
    await policy.resetSlot(0, { episode: 'a' });
    await policy.resetSlot(1, { episode: 'b' });
    expect(
      (
        await imepRejection(
          policy.inferBatch([
            { slot: 0, obs: o },
            { slot: 0, obs: o },
          ]),
        )
      ).field,
    ).toBe('slot');
    expect(
      (
        await imepRejection(
          policy.inferBatch([
            { slot: 0, obs: o },
            { slot: 1, obs: o },
            { slot: 1, obs: o },
          ]),
        )
      ).field,
    ).toBe('runtime.batchSize');
    const item = (t: number, n: number): RetrievedItem => ({
      identity: { slot: t, scope: 'a', sourceEpisode: 'a', timestep: t, version: 0 },
      leaves: { feature: tensorFrom('float32', new Array<number>(n).fill(1)) },
    });
    policy.setReadHook(() => [0, 1, 2, 3, 4].map((t) => item(t, 8)));
    const tooMany = await imepRejection(policy.inferBatch([{ slot: 0, obs: o }]));
    expect(tooMany.code).toBe('E_INTERVENTION_INVALID');
    expect(tooMany.message).toContain('returned 5 items, the memory input holds k=4');
    policy.setReadHook(() => [item(0, 7)]);
    expect((await imepRejection(policy.inferBatch([{ slot: 0, obs: o }]))).message).toContain(
      'a feature of 7 values, the memory input needs 8',
    );
    // A float16 leaf (what one-ULP interventions may install) is fed by value.
    policy.setReadHook(() => [
      { ...item(0, 8), leaves: { feature: tensorFrom('float16', new Array<number>(8).fill(0.5)) } },
    ]);
    const [out] = await policy.inferBatch([{ slot: 0, obs: o }]);
    expect(out?.readouts.reads?.[0]?.identities.length).toBe(1);
    const noRgb = { ...o } as Record<string, unknown>;
    delete noRgb['rgb'];
    const missing = await imepRejection(policy.inferBatch([{ slot: 1, obs: noRgb as Observation }]));
    expect(missing.code).toBe('E_CHECKPOINT_MISMATCH');
    expect(missing.field).toBe('graphs.encode.inputs[0].field');
    expect(missing.oneLine()).toContain('observation field "rgb": missing from the observation');
    await ckpt.release();
  });
});
