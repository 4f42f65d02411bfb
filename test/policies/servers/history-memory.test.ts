/**
 * History memory owned by IMEP (src/policies/servers/history-memory.ts): the window assembled from what the read hook
 * RETURNS, under A / C (identity), N (block: exactly step 0), U (one ULP per read), S (a donor's records at the same
 * timesteps), window / stride / pad, and the ReadContext each call's one read carries.
 */
import { describe, expect, it } from 'vitest';
import type { ReadContext, ReadHook, RetrievedItem } from '../../../src/banks/index.js';
import {
  blockHook,
  oneUlpOperator,
  permuteOperator,
  readHook,
  resampleOperator,
} from '../../../src/interventions/index.js';
import { HistoryMemory, type HistoryConfig } from '../../../src/policies/index.js';
import type { NdArray, Observation } from '../../../src/runtime/index.js';

const obsAt = (t: number): Observation => ({
  state: Float32Array.of(t, 10 * t),
  rgb: { dtype: 'uint8', shape: [1, 2], data: Uint8Array.of(t, 100 + t) },
});
const config = (over: Partial<HistoryConfig> = {}): HistoryConfig => ({
  window: 3,
  stride: 2,
  keys: ['state', 'rgb'],
  pad: 'first',
  ...over,
});
const values = (v: unknown): number[] => [...((v as NdArray).data as Float32Array)];

/** Runs calls at steps 0 … last (every step a call), returns each call's entries and reads. */
async function run(mem: HistoryMemory, last: number, decisionFrom = 0) {
  mem.resetSlot(0, 'ep-1');
  const out = [];
  for (let step = 0; step <= last; step++) {
    const extras = await mem.beginCall({ slot: 0, step, decision: step >= decisionFrom, obs: obsAt(step) });
    out.push({ extras, reads: mem.endCall(0) });
  }
  return out;
}

describe('HistoryMemory', () => {
  it('A: positions s − (window − 1)·stride … s, oldest first; the past records read once through the hook', async () => {
    const seen: { items: readonly RetrievedItem[]; ctx: ReadContext }[] = [];
    const mem = new HistoryMemory(config(), 1);
    mem.setReadHook((items, ctx) => (seen.push({ items, ctx }), items));
    const calls = await run(mem, 4, 3);
    const at4 = calls[4]!.extras;
    expect((at4['history/state'] as NdArray).shape).toEqual([3, 2]);
    expect((at4['history/state'] as NdArray).dtype).toBe('float32');
    expect(values(at4['history/state'])).toEqual([0, 0, 2, 20, 4, 40]);
    expect((at4['history/rgb'] as NdArray).shape).toEqual([3, 1, 2]);
    expect(values(at4['history/rgb'])).toEqual([0, 100, 2, 102, 4, 104]); // uint8 as float32
    expect(values(at4['history/mask'])).toEqual([1, 1, 1]);
    // one read per call; items are the window's past records, ctx as documented
    expect(seen).toHaveLength(5);
    expect(seen[4]!.items.map((i) => i.identity)).toEqual([
      { slot: 0, scope: 'ep-1', sourceEpisode: 'ep-1', timestep: 0, version: 0 },
      { slot: 0, scope: 'ep-1', sourceEpisode: 'ep-1', timestep: 2, version: 0 },
    ]);
    expect(seen.map((s) => s.ctx)).toEqual(
      [0, 1, 2, 3, 4].map((step) => ({
        bank: 'history',
        scope: 'ep-1',
        episode: 'ep-1',
        queryIndex: step + 1,
        decisionStep: step >= 3,
        candidateCount: step >= 4 ? 2 : step >= 2 ? 1 : 0,
      })),
    );
    // IMEP's record of the reads: the identities the hook returned
    expect(calls[4]!.reads).toEqual([{ ctx: seen[4]!.ctx, identities: seen[4]!.items.map((i) => i.identity) }]);
    // stride 2: at step 3 the positions are -1 (none: padding, the oldest record repeated), 1, 3
    expect(values(calls[3]!.extras['history/state'])).toEqual([1, 10, 1, 10, 3, 30]);
    expect(values(calls[3]!.extras['history/mask'])).toEqual([0, 1, 1]);
  });

  it('N (block) is exactly step 0: all padding but the current step, same shapes and bytes', async () => {
    const blocked = new HistoryMemory(config(), 1);
    blocked.setReadHook(blockHook);
    const calls = await run(blocked, 6);
    const fresh = new HistoryMemory(config(), 1);
    fresh.resetSlot(0, 'other');
    const step0 = await fresh.beginCall({ slot: 0, step: 0, decision: true, obs: obsAt(6) });
    expect(calls[6]!.extras).toEqual(step0);
    expect(values(calls[6]!.extras['history/state'])).toEqual([6, 60, 6, 60, 6, 60]);
    expect(values(calls[6]!.extras['history/mask'])).toEqual([0, 0, 1]);
    expect(calls[6]!.reads[0]!.identities).toEqual([]);
    expect(calls[6]!.reads[0]!.ctx.candidateCount).toBe(2); // the window offered 2 records; the hook returned none
  });

  it('pad: zeros fills positions with no record with zeros (mask 0)', async () => {
    const mem = new HistoryMemory(config({ pad: 'zeros', window: 4, stride: 1 }), 1);
    const calls = await run(mem, 1);
    expect(values(calls[1]!.extras['history/state'])).toEqual([0, 0, 0, 0, 0, 0, 1, 10]);
    expect(values(calls[1]!.extras['history/mask'])).toEqual([0, 0, 1, 1]);
  });

  it('C (identity) equals A byte for byte; U moves every past element by one ULP and never the current step', async () => {
    const a = await run(new HistoryMemory(config(), 1), 4);
    const c = await run(new HistoryMemory(config(), 1), 4);
    expect(c.map((x) => x.extras)).toEqual(a.map((x) => x.extras));
    const uMem = new HistoryMemory(config(), 1);
    uMem.setReadHook(readHook(oneUlpOperator('away')).hook);
    const u = await run(uMem, 4);
    const got = values(u[4]!.extras['history/state']);
    const ref = values(a[4]!.extras['history/state']);
    expect(got.slice(4)).toEqual(ref.slice(4)); // the current step
    expect(got[2]).toBe(Math.fround(2 + 2 ** -22)); // 2 → next float32 away from zero
    expect(got[0]).not.toBe(0); // 0 → the smallest subnormal
    expect(got.slice(0, 4).every((v, i) => v !== ref[i])).toBe(true);
  });

  it('S_pi permutes each past record within itself (same values, same shape); T_mu resamples them; the current step is kept', async () => {
    const wide = (t: number): Observation => ({ state: Float32Array.from({ length: 16 }, (_, i) => t * 100 + i) });
    const cfg = config({ keys: ['state'], window: 2, stride: 1 });
    const runWide = async (mem: HistoryMemory) => {
      mem.resetSlot(0, 'ep');
      await mem.beginCall({ slot: 0, step: 0, decision: true, obs: wide(0) });
      mem.endCall(0);
      const extras = await mem.beginCall({ slot: 0, step: 1, decision: true, obs: wide(1) });
      return values(extras['history/state']);
    };
    const ref = await runWide(new HistoryMemory(cfg, 1));
    const sPi = new HistoryMemory(cfg, 1);
    sPi.setReadHook(readHook(permuteOperator, { seed: 7 }).hook);
    const permuted = await runWide(sPi);
    expect(permuted.slice(16)).toEqual(ref.slice(16));
    expect(permuted.slice(0, 16)).not.toEqual(ref.slice(0, 16));
    expect([...permuted.slice(0, 16)].sort((a, b) => a - b)).toEqual(ref.slice(0, 16));
    const tMu = new HistoryMemory(cfg, 1);
    tMu.setReadHook(readHook(resampleOperator, { seed: 7 }).hook);
    const resampled = await runWide(tMu);
    expect(resampled.slice(16)).toEqual(ref.slice(16));
    expect(resampled.slice(0, 16)).not.toEqual(ref.slice(0, 16));
  });

  it('S: a donor record at the same timestep fills that timestep’s position; readouts name the donor', async () => {
    const donor: ReadHook = (items) =>
      items.map((it) => ({
        identity: { ...it.identity, sourceEpisode: 'donor-ep', scope: 'donor' },
        leaves: {
          state: { dtype: 'float32', shape: [2], data: Float32Array.of(-it.identity.timestep, -1) },
          rgb: { dtype: 'float32', shape: [1, 2], data: Float32Array.of(7, 7) },
        },
      }));
    const mem = new HistoryMemory(config(), 1);
    mem.setReadHook(donor);
    const calls = await run(mem, 4);
    expect(values(calls[4]!.extras['history/state'])).toEqual([-0, -1, -2, -1, 4, 40]);
    expect(calls[4]!.reads[0]!.identities.map((i) => [i.sourceEpisode, i.timestep])).toEqual([
      ['donor-ep', 0],
      ['donor-ep', 2],
    ]);
    // a hook that returns the records in another order still places them by timestep
    const reversed = new HistoryMemory(config(), 1);
    reversed.setReadHook((items) => [...items].reverse());
    expect((await run(reversed, 4))[4]!.extras).toEqual((await run(new HistoryMemory(config(), 1), 4))[4]!.extras);
  });

  it('refuses a returned record that fits no past position or whose leaf differs in layout', async () => {
    const mem = new HistoryMemory(config(), 1);
    mem.setReadHook((items) => items.map((it) => ({ ...it, identity: { ...it.identity, timestep: 3 } })));
    await expect(run(mem, 4)).rejects.toThrow(
      /read hook returned a record at timestep 3, which is no past position of the window at step 2 \(-2, 0\)/,
    );
    const bad = new HistoryMemory(config(), 1);
    bad.setReadHook((items) =>
      items.map((it) => ({
        ...it,
        leaves: { ...it.leaves, state: { dtype: 'float64', shape: [2], data: Float64Array.of(0, 0) } },
      })),
    );
    await expect(run(bad, 2)).rejects.toThrow(/leaf "state" is float64 \[2\]/);
    const missing = new HistoryMemory(config({ keys: ['depth'] }), 1);
    await expect(run(missing, 0)).rejects.toThrow(/the observation at step 0 has no field "depth"/);
  });
});
