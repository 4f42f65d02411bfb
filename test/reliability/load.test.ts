import { describe, expect, it } from 'vitest';
import { formatLoad, growthOf, LOAD_BOUNDS, LOAD_SERVER_FLAGS, runLoad } from './support/load.js';

describe('load: 8 lite servers driven by one orchestrator', () => {
  it('growth is measured between medians of the first and last post-warm-up windows', () => {
    const flat = Array.from({ length: 60 }, (_, t) => ({ t, v: (100 + (t % 5)) * 1024 * 1024 })); // GC sawtooth, no trend
    expect(Math.abs(growthOf(flat, 10, 10).growthMb)).toBeLessThan(1);
    const leak = Array.from({ length: 60 }, (_, t) => ({ t, v: (100 + t) * 1024 * 1024 })); // 1 MB/s
    const g = growthOf(leak, 10, 10);
    expect(g.growthMb).toBeGreaterThan(35);
    expect(g.slopeMbPerMin).toBeCloseTo(60, 5);
  });

  it('runs campaigns for 40 s with every process inside the stated RSS bounds and no restart', async () => {
    const o = {
      servers: 8,
      seconds: 40,
      warmupSeconds: 15,
      n: 8,
      batch: 16,
      sampleMs: 1000,
      serverNodeFlags: LOAD_SERVER_FLAGS,
    };
    const r = await runLoad(o);
    const text = formatLoad(r, o).join('\n');
    expect(r.campaigns, text).toBeGreaterThanOrEqual(2);
    expect(r.episodes).toBe(r.campaigns * 14 * o.n);
    expect(r.restarts, text).toBe(0);
    expect(r.samples.length).toBeGreaterThanOrEqual(30);
    expect(
      r.samples.every((s) => s.servers.length === 8 && s.servers.every((x) => x > 0)),
      text,
    ).toBe(true);
    expect(r.orchestrator.growthMb, text).toBeLessThan(LOAD_BOUNDS.orchestratorMb);
    expect(r.heap.growthMb, text).toBeLessThan(LOAD_BOUNDS.heapMb);
    for (const g of r.servers) expect(g.growthMb, text).toBeLessThan(LOAD_BOUNDS.serverMb);
  }, 180_000);
});
