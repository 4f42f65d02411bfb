import { describe, expect, it } from 'vitest';
import { canonicalHash } from '../../src/core/canonical-json.js';
import {
  buildPlan,
  noiseStreamLabel,
  noiseStreamRecipe,
  noisyAction,
  parseProtocol,
  type ExecutionNoise,
} from '../../src/protocol/index.js';
import { BASE, BAD_FILE, lineOf, refusal, replaceOnce } from './helpers.js';

const NOISE =
  'simulator:\n  kind: lite\n  executionNoise: { kind: action-gaussian, sigma: 0.03, seed: 77, scope: per-condition }\n';
const withNoise = (noise: string): string => replaceOnce(BASE, 'simulator:\n  kind: lite\n', noise);
const spec = (scope: ExecutionNoise['scope']): ExecutionNoise => ({
  kind: 'action-gaussian',
  sigma: 0.03,
  seed: 77,
  scope,
});
const ep = { wave: 1, condition: 'A', scopeId: '0123456789abcdef', attempt: 1 };

describe('execution noise (simulator.executionNoise)', () => {
  it('shared scope: one draw per (unit, attempt, step) whatever the wave and condition; per-condition: its own draw per condition run', () => {
    const shared = spec('shared');
    const other = { ...ep, wave: 2, condition: 'C' };
    expect(noiseStreamLabel(shared, ep, 4)).toBe('imep.execution-noise.v1/77/0123456789abcdef/1/4');
    expect(noiseStreamLabel(shared, other, 4)).toBe(noiseStreamLabel(shared, ep, 4));
    expect([...noisyAction(shared, other, 4, [0.01, -0.02])]).toEqual([...noisyAction(shared, ep, 4, [0.01, -0.02])]);
    const per = spec('per-condition');
    expect(noiseStreamLabel(per, ep, 4)).toBe('imep.execution-noise.v1/77/0123456789abcdef/1/A/1/4');
    expect(noiseStreamLabel(per, other, 4)).toBe('imep.execution-noise.v1/77/0123456789abcdef/2/C/1/4');
    expect([...noisyAction(per, other, 4, [0, 0])]).not.toEqual([...noisyAction(per, ep, 4, [0, 0])]);
    // attempt and step are part of every key; the seed too
    expect(noisyAction(per, ep, 5, [0, 0])[0]).not.toBe(noisyAction(per, ep, 4, [0, 0])[0]);
    expect(noisyAction(per, { ...ep, attempt: 2 }, 4, [0, 0])[0]).not.toBe(noisyAction(per, ep, 4, [0, 0])[0]);
    expect(noisyAction({ ...per, seed: 78 }, ep, 4, [0, 0])[0]).not.toBe(noisyAction(per, ep, 4, [0, 0])[0]);
    expect(noiseStreamRecipe(per)).toBe('imep.execution-noise.v1/77/<scopeId>/<wave>/<condition>/<attempt>/<step>');
    expect(noiseStreamRecipe(shared)).toBe('imep.execution-noise.v1/77/<scopeId>/<attempt>/<step>');
  });

  it('the draw is deterministic, centred on the policy action, with standard deviation σ per component', () => {
    const s = spec('per-condition');
    const a = [0.05, -0.01];
    expect([...noisyAction(s, ep, 9, a)]).toEqual([...noisyAction(s, ep, 9, a)]);
    const N = 4000;
    const sums = new Float64Array(2);
    const squares = new Float64Array(2);
    let cross = 0;
    for (let t = 0; t < N; t++) {
      const x = noisyAction(s, ep, t, a);
      const d0 = (x[0] as number) - 0.05,
        d1 = (x[1] as number) + 0.01;
      sums[0] = (sums[0] as number) + d0;
      sums[1] = (sums[1] as number) + d1;
      squares[0] = (squares[0] as number) + d0 * d0;
      squares[1] = (squares[1] as number) + d1 * d1;
      cross += d0 * d1;
    }
    for (const i of [0, 1]) {
      expect(Math.abs((sums[i] as number) / N)).toBeLessThan((4 * 0.03) / Math.sqrt(N)); // mean within 4 SE of 0
      expect(Math.sqrt((squares[i] as number) / N)).toBeGreaterThan(0.03 * 0.95);
      expect(Math.sqrt((squares[i] as number) / N)).toBeLessThan(0.03 * 1.05);
    }
    expect(Math.abs(cross / N / (0.03 * 0.03))).toBeLessThan(0.1); // components uncorrelated
    // the executed action is float32, the dtype the lite simulators take
    expect(noisyAction(s, ep, 0, a)).toBeInstanceOf(Float32Array);
  });

  it('the plan records the noise and its stream recipe (and binds them in planHash); without it the plan is what it was', () => {
    const plain = buildPlan(parseProtocol(BASE, BAD_FILE).protocol);
    expect('executionNoise' in plain).toBe(false);
    expect(plain.planHash).toBe(
      canonicalHash({ version: plain.version, protocolHash: plain.protocolHash, episodes: plain.episodes }),
    );
    const noisy = buildPlan(parseProtocol(withNoise(NOISE), BAD_FILE).protocol);
    expect(noisy.executionNoise).toEqual({
      ...spec('per-condition'),
      stream: 'imep.execution-noise.v1/77/<scopeId>/<wave>/<condition>/<attempt>/<step>',
    });
    expect(noisy.planHash).toBe(
      canonicalHash({
        version: noisy.version,
        protocolHash: noisy.protocolHash,
        episodes: noisy.episodes,
        executionNoise: noisy.executionNoise,
      }),
    );
    expect(noisy.episodes).toEqual(plain.episodes);
    const shared = buildPlan(parseProtocol(withNoise(NOISE.replace('per-condition', 'shared')), BAD_FILE).protocol);
    expect(shared.planHash).not.toBe(noisy.planHash);
  });

  const bad: { name: string; noise: string; path: string; says: string[] }[] = [
    {
      name: 'σ = 0',
      noise: NOISE.replace('sigma: 0.03', 'sigma: 0'),
      path: 'simulator.executionNoise.sigma',
      says: ['must be > 0, got 0', 'leave executionNoise out for none'],
    },
    {
      name: 'σ too large',
      noise: NOISE.replace('sigma: 0.03', 'sigma: 2'),
      path: 'simulator.executionNoise.sigma',
      says: ['must be ≤ 0.6, got 2'],
    },
    {
      name: 'unknown scope',
      noise: NOISE.replace('per-condition', 'per-unit'),
      path: 'simulator.executionNoise.scope',
      says: ['shared', 'per-condition'],
    },
    {
      name: 'missing seed',
      noise: NOISE.replace(' seed: 77,', ''),
      path: 'simulator.executionNoise.seed',
      says: ['seed'],
    },
    {
      name: 'unknown kind',
      noise: NOISE.replace('action-gaussian', 'sampled-decoding'),
      path: 'simulator.executionNoise.kind',
      says: ['action-gaussian'],
    },
  ];
  for (const c of bad) {
    it(`refuses ${c.name} in one line naming the file and field`, () => {
      const text = withNoise(c.noise);
      const err = refusal(text);
      expect(err.code).toBe('E_PROTOCOL_INVALID');
      expect(err.field).toBe(c.path);
      const msg = err.oneLine();
      expect(msg).toContain(`${BAD_FILE}:`);
      expect(msg).toContain(c.path);
      for (const s of c.says) expect(msg).toContain(s);
      expect(msg.split('\n')).toHaveLength(1);
    });
  }

  it('refuses execution noise on a sim-bridge simulator (lite only), naming the field', () => {
    const text = replaceOnce(
      BASE,
      'simulator:\n  kind: lite\n',
      'simulator:\n  kind: sim-bridge\n  adapter: mikasa\n  executionNoise: { kind: action-gaussian, sigma: 0.03, seed: 77, scope: shared }\n',
    );
    const err = refusal(text);
    expect(err.oneLine()).toContain('executionNoise');
    expect(err.line).toBe(lineOf(text, 'executionNoise'));
  });
});
