import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { Prng } from '../../src/core/prng.js';
import {
  clusterDifferenceSums,
  clusterSignFlipEnumeration,
  clusterSignFlipTest,
  dyadicRatio,
  pairedClusterSignFlip,
  signFlipCost,
  signFlipFeasible,
} from '../../src/stats/cluster-sign-flip.js';
import { pairedDesign } from '../../src/stats/paired-outcomes.js';

const FC = { seed: 20260824, numRuns: 300 };

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    return (e as ImepError).field;
  }
  throw new Error('expected a domain error');
}

function binom(n: number, k: number): bigint {
  let r = 1n;
  for (let j = 0; j < k; j++) r = (r * BigInt(n - j)) / BigInt(j + 1);
  return r;
}

/** An independent reference: the full signed distribution by a BigInt map over T* values. */
function bigintNull(sums: number[]): Map<number, bigint> {
  let dist = new Map<number, bigint>([[0, 1n]]);
  for (const s of sums) {
    if (s === 0) continue;
    const next = new Map<number, bigint>();
    for (const [t, c] of dist) {
      next.set(t + s, (next.get(t + s) ?? 0n) + c);
      next.set(t - s, (next.get(t - s) ?? 0n) + c);
    }
    dist = next;
  }
  return dist;
}

describe('clusterSignFlipTest', () => {
  it('DP equals exhaustive enumeration on random small cases', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -7, max: 7 }), { minLength: 0, maxLength: 14 }), (sums) => {
        const dp = clusterSignFlipTest(sums);
        const en = clusterSignFlipEnumeration(sums);
        expect(dp.method).toBe('exact-dp');
        expect(en.method).toBe('exact-enumeration');
        expect({ ...dp, method: '' }).toEqual({ ...en, method: '' });
      }),
      FC,
    );
  });

  it('one-unit ±1 clusters give the exact binomial (McNemar) tails', () => {
    for (const [b, c] of [
      [6, 3],
      [0, 0],
      [5, 0],
      [2, 9],
      [30, 12],
    ] as const) {
      const sums = [...Array<number>(b).fill(1), ...Array<number>(c).fill(-1)];
      const r = clusterSignFlipTest(sums);
      const m = b + c;
      let upper = 0n,
        lower = 0n;
      for (let k = 0; k <= m; k++) {
        if (k >= b) upper += binom(m, k);
        if (k <= b) lower += binom(m, k);
      }
      expect(r.statistic).toBe(b - c);
      expect(r.countGreater).toBe(upper);
      expect(r.countLess).toBe(lower);
      expect(r.total).toBe(1n << BigInt(m));
    }
    expect(clusterSignFlipTest([1, 1, 1, 1, 1, 1, -1, -1, -1]).pGreater).toBeCloseTo(130 / 512, 15);
  });

  it('stays exact beyond 2^53 assignments (multi-limb counts) against a BigInt reference', () => {
    // 200 ±1 clusters: counts up to C(200,100) ≈ 9e58.
    const sums = Array.from({ length: 200 }, (_, i) => (i % 5 === 0 ? -1 : 1));
    const r = clusterSignFlipTest(sums);
    let upper = 0n;
    for (let k = 0; k <= 200; k++) if (2 * k - 200 >= r.statistic) upper += binom(200, k);
    expect(r.countGreater).toBe(upper);
    expect(r.pGreater).toBe(dyadicRatio(upper, 200));
    // Mixed magnitudes, 90 clusters.
    const prng = new Prng('limbs');
    const mixed = Array.from({ length: 90 }, () => prng.nextInt(13) - 6);
    const got = clusterSignFlipTest(mixed);
    const dist = bigintNull(mixed);
    let g = 0n,
      l = 0n,
      two = 0n;
    for (const [t, c] of dist) {
      if (t >= got.statistic) g += c;
      if (t <= got.statistic) l += c;
      if (Math.abs(t) >= Math.abs(got.statistic)) two += c;
    }
    expect([got.countGreater, got.countLess, got.countTwoSided]).toEqual([g, l, two]);
  });

  it('drops zero-sum clusters without changing any p-value; ties count', () => {
    const base = clusterSignFlipTest([3, -1, 2]);
    const padded = clusterSignFlipTest([0, 3, 0, -1, 2, 0]);
    expect(padded.zeroClusters).toBe(3);
    expect(padded.clusters).toBe(6);
    expect([padded.pGreater, padded.pLess, padded.pTwoSided]).toEqual([base.pGreater, base.pLess, base.pTwoSided]);
    // T = 4 of {3, 1, 2}: T* ∈ {6, 0, 2, 4, −4, −2, 0, −6}; P(T* ≥ 4) = 2/8, P(|T*| ≥ 4) = 4/8.
    expect(base.pGreater).toBe(2 / 8);
    expect(base.pTwoSided).toBe(4 / 8);
    expect(base.pLess).toBe(7 / 8);
  });

  it('empty or all-zero input is a point mass at 0: every p-value is 1', () => {
    for (const sums of [[], [0, 0]]) {
      const r = clusterSignFlipTest(sums);
      expect([r.statistic, r.pGreater, r.pLess, r.pTwoSided]).toEqual([0, 1, 1, 1]);
      expect(r.total).toBe(1n);
    }
  });

  it('is antisymmetric: negating every sum swaps the one-sided p-values', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -40, max: 40 }), { maxLength: 60 }), (sums) => {
        const a = clusterSignFlipTest(sums),
          b = clusterSignFlipTest(sums.map((s) => -s));
        expect(a.countGreater).toBe(b.countLess);
        expect(a.countTwoSided).toBe(b.countTwoSided);
        expect(a.pGreater + a.pLess).toBeGreaterThanOrEqual(1);
      }),
      { seed: 7, numRuns: 100 },
    );
  });

  it('reports rational sums through a common scale', () => {
    const r = clusterSignFlipTest([3, -1, 2], { scale: 4 });
    expect(r.value).toBe(1);
    expect(fieldOf(() => clusterSignFlipTest([1], { scale: 0.5 }))).toBe('scale');
  });

  it('refuses non-integers and work beyond maxWork', () => {
    expect(fieldOf(() => clusterSignFlipTest([1, 0.5]))).toBe('sums[1]');
    expect(signFlipCost([1000, 1000])).toEqual({ work: 2 * 1001, cells: 1001 });
    expect(fieldOf(() => clusterSignFlipTest([1000, 1000], { maxWork: 100 }))).toBe('sums');
    expect(signFlipFeasible([2e9])).toBe(false); // one cluster, but a 1e9-cell table
    expect(fieldOf(() => clusterSignFlipTest([2e9]))).toBe('sums');
    expect(fieldOf(() => clusterSignFlipEnumeration(Array<number>(27).fill(1)))).toBe('sums');
  });
});

describe('pairedClusterSignFlip', () => {
  it('sums Y_A − Y_X within chains; T = b − c', () => {
    const d = pairedDesign({
      outcomes: { A: [1, 1, 0, 1, 1, 1, 0], X: [0, 0, 1, 1, 0, 1, 0] },
      clusters: ['c0', 'c0', 'c1', 'c1', 'c2', 'c2', 'c3'],
    });
    expect(Array.from(clusterDifferenceSums(d, 'A', 'X'))).toEqual([2, -1, 1, 0]);
    const r = pairedClusterSignFlip(d, 'A', 'X');
    expect(r.statistic).toBe(2); // b = 3, c = 1
    expect(r.zeroClusters).toBe(1);
    expect({ ...r, method: '' }).toEqual({ ...clusterSignFlipEnumeration([2, -1, 1, 0]), method: '' });
    expect(fieldOf(() => pairedClusterSignFlip(pairedDesign({ outcomes: { A: [1], X: [0] } }), 'A', 'X'))).toBe(
      'design.cluster',
    );
  });
});
