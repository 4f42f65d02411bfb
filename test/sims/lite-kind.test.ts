/**
 * The lite simulator kind (src/sims/lite/kind.ts): in process it opens the lite environments with nothing started;
 * over the bridge it asks the bridge layer for IMEP's own lite servers; its specs are known without a server; its
 * execution noise is the block's.
 */
import { describe, expect, it } from 'vitest';
import { liteInProcessEnvs, liteSimulatorKind as lite } from '../../src/sims/index.js';
import type { BridgedRequest, Simulators } from '../../src/runtime/index.js';

const noise = { kind: 'action-gaussian', sigma: 0.03, seed: 7, scope: 'shared' } as const;

describe('the lite simulator kind', () => {
  it('in process: the lite environments, nothing started, nothing asked of the bridge layer', async () => {
    const asked: BridgedRequest[] = [];
    const ctx = {
      file: 'p.yaml',
      roots: ['.'],
      bridged: async (r: BridgedRequest): Promise<Simulators> => {
        asked.push(r);
        throw new Error('not reached');
      },
    };
    for (const block of [{ kind: 'lite' }, { kind: 'lite', transport: 'in-process' }]) {
      const sims = await lite.open(block, ctx);
      expect(sims.envs).toBe(liteInProcessEnvs);
      expect([sims.description, sims.isolation, sims.limits, sims.summary()]).toEqual([null, null, null, null]);
      expect(lite.servers(block)).toBeUndefined();
      expect(lite.inProcess?.(block)).toBe(true);
      expect(lite.describe(block)).toBe('lite simulators in process');
    }
    expect(asked).toEqual([]);
  });

  it("over the bridge: IMEP's own lite servers, no adapter check, no vectorised hosting", async () => {
    const asked: BridgedRequest[] = [];
    const block = { kind: 'lite', transport: 'bridge' };
    const sentinel = { description: 'x' } as unknown as Simulators;
    const sims = await lite.open(block, {
      file: 'p.yaml',
      roots: ['.'],
      bridged: async (r) => {
        asked.push(r);
        return sentinel;
      },
    });
    expect(sims).toBe(sentinel);
    expect(asked).toEqual([
      { servers: { start: 'imep-lite' }, adapter: 'lite', checkAdapter: false, vectorize: false },
    ]);
    expect(lite.servers(block)).toEqual({ start: 'imep-lite' });
    expect(lite.inProcess?.(block)).toBe(false);
  });

  it('knows its specs without a server, and hands the plan its execution noise', () => {
    const spec = lite.knownSpec?.({ kind: 'lite' }, 'ShellGameTouch-lite', {});
    expect(spec?.methodVisible).toContain('rgb');
    expect(lite.executionNoise?.({ kind: 'lite', executionNoise: noise })).toEqual(noise);
    expect(lite.executionNoise?.({ kind: 'lite' })).toBeUndefined();
    expect(lite.statedKwargs?.('ShellGameTouch-lite')).toEqual({ toolStart: 'home' });
  });
});
