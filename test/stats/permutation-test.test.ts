import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { PRNG_NAME } from '../../src/core/prng.js';
import { taskWeights, thetaBar, unitContributions } from '../../src/stats/estimands.js';
import { pairedDesign, taskSizes, type PairedDesign } from '../../src/stats/paired-outcomes.js';
import { thetaBarPermutationTest } from '../../src/stats/permutation-test.js';

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    return (e as ImepError).field;
  }
  throw new Error('expected a domain error');
}

/** Brute force: every sign assignment of the discordant units, θ̄* in floating point. */
function bruteForceP(design: PairedDesign, weights?: Record<string, number>): number {
  const d = unitContributions(design, { kind: 'thetaBar', reference: 'A', target: 'T', sham: 'S' });
  const w = taskWeights(design, weights);
  const n = taskSizes(design);
  const v: number[] = [];
  for (let i = 0; i < design.n; i++) {
    const t = design.task[i]!;
    if (d[i] !== 0 && w[t]! > 0) v.push((d[i]! * w[t]!) / n[t]!);
  }
  const obs = v.reduce((s, x) => s + x, 0);
  let hits = 0;
  for (let mask = 0; mask < 2 ** v.length; mask++) {
    let t = 0;
    for (let j = 0; j < v.length; j++) t += (mask >>> j) & 1 ? -v[j]! : v[j]!;
    if (t >= obs - 1e-12) hits++;
  }
  return hits / 2 ** v.length;
}

const bit = fc.integer({ min: 0, max: 1 });
const smallDesign = fc
  .array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 3 })
  .chain((sizes) => {
    const n = sizes.reduce((a, b) => a + b, 0);
    const v = fc.array(bit, { minLength: n, maxLength: n });
    return fc.record({ sizes: fc.constant(sizes), A: v, S: v, T: v });
  })
  .map(({ sizes, A, S, T }) =>
    pairedDesign({ outcomes: { A, S, T }, tasks: sizes.flatMap((k, t) => Array<string>(k).fill(`t${t}`)) }),
  );

/** One task, A succeeding everywhere, b′ units where only T flips, c′ where only S flips, `both` where both do. */
function flipDesign(n: number, bPrime: number, cPrime: number, both = 0): PairedDesign {
  const A: number[] = [],
    S: number[] = [],
    T: number[] = [];
  for (let i = 0; i < n; i++) {
    A.push(1);
    T.push(i < bPrime || (i >= bPrime + cPrime && i < bPrime + cPrime + both) ? 0 : 1);
    S.push(i >= bPrime && i < bPrime + cPrime + both ? 0 : 1);
  }
  return pairedDesign({ outcomes: { A, S, T } });
}

describe('thetaBarPermutationTest', () => {
  it('equals brute-force enumeration on small stratified designs (equal weights)', () => {
    fc.assert(
      fc.property(smallDesign, (d) => {
        const r = thetaBarPermutationTest(d, 'A', 'T', 'S');
        expect(r.method).toBe('exact-dp');
        expect(r.pValue).toBeCloseTo(bruteForceP(d), 14);
        expect(r.thetaBar).toBe(thetaBar(d, 'A', 'T', 'S'));
        expect(r.exact!.statistic / r.exact!.scale).toBeCloseTo(r.thetaBar, 12);
      }),
      { seed: 20260824, numRuns: 300 },
    );
  });

  it('equals brute force with integer and decimal task weights', () => {
    fc.assert(
      fc.property(smallDesign, fc.constantFrom([3, 1, 2], [0.25, 0.5, 0.125], [1, 0, 2]), (d, ws) => {
        const weights = Object.fromEntries(d.taskNames.map((t, k) => [t, ws[k]!]));
        if (Object.values(weights).every((x) => x === 0)) return;
        const r = thetaBarPermutationTest(d, 'A', 'T', 'S', { weights });
        expect(r.method).toBe('exact-dp');
        expect(r.pValue).toBeCloseTo(bruteForceP(d, weights), 14);
      }),
      { seed: 99, numRuns: 200 },
    );
  });

  it('on one task reduces to the exact one-sided McNemar test on (b′, c′)', () => {
    // Appendix E.3 counts: b′ = 6, c′ = 3, six units where both flip, n = 196.
    const r = thetaBarPermutationTest(flipDesign(196, 6, 3, 6), 'A', 'T', 'S');
    expect(r.discordant).toBe(9);
    expect(r.pValue).toBe(130 / 512); // P(Bin(9, 1/2) ≥ 6)
    expect(r.thetaBar).toBeCloseTo(3 / 196, 15);
    expect(r.alternative).toBe('greater');
  });

  it('stays exact with large discordant counts on unequal task sizes (lcm scaling, multi-limb)', () => {
    const A: number[] = [],
      S: number[] = [],
      T: number[] = [],
      tasks: string[] = [];
    const add = (task: string, n: number, b: number, c: number): void => {
      for (let i = 0; i < n; i++) {
        A.push(1);
        T.push(i < b ? 0 : 1);
        S.push(i >= b && i < b + c ? 0 : 1);
        tasks.push(task);
      }
    };
    add('RC3', 193, 40, 30);
    add('RC5', 195, 35, 33);
    const d = pairedDesign({ outcomes: { A, S, T }, tasks });
    const r = thetaBarPermutationTest(d, 'A', 'T', 'S');
    expect(r.method).toBe('exact-dp');
    expect(r.exact!.scale).toBe(2 * 193 * 195);
    expect(r.discordant).toBe(138);
    const mc = thetaBarPermutationTest(d, 'A', 'T', 'S', {
      forceMonteCarlo: true,
      seed: 20260824,
      mcReplicates: 40_000,
    });
    expect(Math.abs(mc.pValue - r.pValue)).toBeLessThan(4 * mc.mcError! + 1e-4);
  });

  it('falls back to seeded Monte Carlo when the DP is too large, and marks it', () => {
    const d = flipDesign(50, 12, 5);
    const exact = thetaBarPermutationTest(d, 'A', 'T', 'S');
    const mc = thetaBarPermutationTest(d, 'A', 'T', 'S', { maxWork: 1, seed: 5, mcReplicates: 50_000 });
    expect(mc.method).toBe('monte-carlo');
    expect(mc.prng).toEqual({ name: PRNG_NAME, version: 1, seed: 5 });
    expect(mc.mcReplicates).toBe(50_000);
    expect(mc.exact).toBeUndefined();
    expect(Math.abs(mc.pValue - exact.pValue)).toBeLessThan(4 * mc.mcError!);
    expect(thetaBarPermutationTest(d, 'A', 'T', 'S', { maxWork: 1, seed: 5, mcReplicates: 1000 })).toEqual(
      thetaBarPermutationTest(d, 'A', 'T', 'S', { maxWork: 1, seed: 5, mcReplicates: 1000 }),
    );
    // Weights that are not short decimals cannot be scaled to integers exactly.
    const two = pairedDesign({ outcomes: { A: [1, 1, 1], S: [1, 1, 0], T: [0, 1, 1] }, tasks: ['a', 'b', 'b'] });
    expect(
      thetaBarPermutationTest(two, 'A', 'T', 'S', { weights: { a: Math.PI, b: 1 }, mcReplicates: 100 }).method,
    ).toBe('monte-carlo');
  });

  it('gives p = 1 without discordant units and refuses empty designs', () => {
    const r = thetaBarPermutationTest(flipDesign(20, 0, 0, 4), 'A', 'T', 'S');
    expect([r.pValue, r.thetaBar, r.discordant]).toEqual([1, 0, 0]);
    expect(
      fieldOf(() => thetaBarPermutationTest(pairedDesign({ outcomes: { A: [], S: [], T: [] } }), 'A', 'T', 'S')),
    ).toBe('design');
    expect(
      fieldOf(() =>
        thetaBarPermutationTest(flipDesign(4, 1, 1), 'A', 'T', 'S', { mcReplicates: 0, forceMonteCarlo: true }),
      ),
    ).toBe('mcReplicates');
  });
});
