/** The planted-effect wrapper against a fake inner policy: what it reads, when it latches, what it adds. */
import { describe, expect, it } from 'vitest';
import type { ReadHook, RetrievedItem } from '../../src/banks/record.js';
import { PlantedEffectPolicy, type PlantedEffectOptions } from '../../src/calibration/index.js';
import type { EpisodeInfo, PolicyOutput, SlotObservation } from '../../src/runtime/policy.js';

const item = (v: number[], timestep = 0): RetrievedItem => ({
  identity: { slot: timestep, scope: 'e', sourceEpisode: 'e', timestep, version: 0 },
  leaves: { feature: { dtype: 'float32', shape: [v.length], data: Float32Array.from(v) } },
});

/** Reads `items` through the hook at every step (queryIndex = step + 1); answers action [0.01, 0]. */
class FakeInner {
  readonly maxBatch = 2;
  hook: ReadHook = (x) => x;
  episodes: (string | null)[] = [null, null];
  steps = [0, 0];
  fed: (readonly RetrievedItem[])[] = [];
  constructor(private readonly items: readonly RetrievedItem[]) {}
  setReadHook(h: ReadHook): void {
    this.hook = h;
  }
  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    this.episodes[slot] = info.episode;
    this.steps[slot] = 0;
  }
  async inferBatch(reqs: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    return reqs.map((r) => {
      const step = this.steps[r.slot] as number;
      const episode = this.episodes[r.slot] as string;
      const got = this.hook(this.items, {
        bank: 'perceptual',
        scope: episode,
        episode,
        queryIndex: step + 1,
        decisionStep: true,
        candidateCount: this.items.length,
      });
      this.fed.push(got);
      this.steps[r.slot] = step + 1;
      return { action: { dtype: 'float32', shape: [2], data: Float32Array.of(0.01, 0) }, readouts: {} };
    });
  }
}

const decoder = {
  leaf: 'feature',
  centroids: [
    [1, 0],
    [0, 1],
    [-1, 0],
  ],
};
const base: PlantedEffectOptions = {
  delta: 0.02,
  mode: 'fact-conditioned',
  targets: [
    [-0.5, 0.25],
    [0, 0.25],
    [0.5, 0.25],
  ],
  decoder,
  fromStep: 2,
  poseField: 'toolPosition',
  seed: 1,
};
const obs = { toolPosition: { dtype: 'float32' as const, shape: [2], data: Float32Array.of(0, -0.25) } };

async function run(p: PlantedEffectPolicy, steps: number): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < steps; i++) out.push((await p.inferBatch([{ slot: 0, obs }]))[0]?.action.data as Float32Array);
  return out;
}

describe('PlantedEffectPolicy', () => {
  it('latches the fact decoded from what the read returned at the first step ≥ fromStep and pulls toward its target', async () => {
    const inner = new FakeInner([item([0.9, 0.1], 0), item([0.8, 0], 1)]); // decodes to fact 0
    const p = new PlantedEffectPolicy(inner, base);
    await p.resetSlot(0, { episode: 'ep1' });
    const a = await run(p, 4);
    expect(Array.from(a[0] as Float32Array)).toEqual([Math.fround(0.01), 0]); // before the latch: untouched
    expect(Array.from(a[1] as Float32Array)).toEqual([Math.fround(0.01), 0]);
    expect(p.latchOf(0)).toEqual({ step: 2, index: 0 });
    // target (−0.5, 0.25) from pose (0, −0.25): direction (−1, 1)/√2
    expect((a[2] as Float32Array)[0]).toBeCloseTo(0.01 - 0.02 / Math.SQRT2, 6);
    expect((a[2] as Float32Array)[1]).toBeCloseTo(0.02 / Math.SQRT2, 6);
  });

  it('sees the harness hook’s output, not the bank: a hook that swaps in another fact moves the target', async () => {
    const inner = new FakeInner([item([0.9, 0.1])]);
    const p = new PlantedEffectPolicy(inner, base);
    p.setReadHook((items) =>
      items.map((it) => ({
        identity: it.identity,
        leaves: { feature: { dtype: 'float32', shape: [2], data: Float32Array.of(-1, 0.05) } },
      })),
    );
    await p.resetSlot(0, { episode: 'ep2' });
    await run(p, 3);
    expect(p.latchOf(0)).toEqual({ step: 2, index: 2 });
    expect(inner.fed.at(-1)?.[0]?.leaves['feature']?.data[0]).toBe(-1); // the network was fed the hook's output
  });

  it('delta 0 returns the inner actions unchanged; an empty read latches nothing; reset clears the latch', async () => {
    const p0 = new PlantedEffectPolicy(new FakeInner([item([0, 1])]), { ...base, delta: 0 });
    await p0.resetSlot(0, { episode: 'a' });
    for (const a of await run(p0, 4)) expect(Array.from(a)).toEqual([Math.fround(0.01), 0]);
    const pe = new PlantedEffectPolicy(new FakeInner([]), base);
    await pe.resetSlot(0, { episode: 'b' });
    await run(pe, 4);
    expect(pe.latchOf(0)).toBeNull();
    const p = new PlantedEffectPolicy(new FakeInner([item([0, 1])]), base);
    await p.resetSlot(0, { episode: 'c' });
    await run(p, 3);
    expect(p.latchOf(0)?.index).toBe(1);
    await p.resetSlot(0, { episode: 'd' });
    expect(p.latchOf(0)).toBeNull();
  });

  it('unconditioned: the index is a seeded draw per episode id, whatever the read holds', async () => {
    const idx = async (items: RetrievedItem[], episode: string): Promise<number | undefined> => {
      const p = new PlantedEffectPolicy(new FakeInner(items), {
        ...base,
        mode: 'unconditioned',
        decoder: null,
        seed: 99,
      });
      await p.resetSlot(0, { episode });
      await run(p, 3);
      return p.latchOf(0)?.index;
    };
    expect(await idx([item([1, 0])], 'x/A')).toBe(await idx([item([-1, 0])], 'x/A')); // content does not matter
    const draws = new Set<number | undefined>();
    for (let i = 0; i < 30; i++) draws.add(await idx([item([1, 0])], `u/${i}`));
    expect([...draws].sort()).toEqual([0, 1, 2]);
  });

  it('refuses a fact-conditioned wrapper without a decoder and an unconditioned one without a seed', () => {
    expect(() => new PlantedEffectPolicy(new FakeInner([]), { ...base, decoder: null })).toThrow(/decoder/);
    const { seed: _seed, ...noSeed } = base;
    expect(() => new PlantedEffectPolicy(new FakeInner([]), { ...noSeed, mode: 'unconditioned' })).toThrow(/seed/);
  });
});
