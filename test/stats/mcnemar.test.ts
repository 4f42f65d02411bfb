import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ImepError } from '../../src/core/errors.js';
import { mcnemarExact, type McNemarAlternative } from '../../src/stats/mcnemar.js';
import { binomialCdf, binomialSf } from '../../src/stats/binomial.js';
import { exactBinomialTailNumber } from '../../src/stats/binomial-exact.js';
import scipyRef from './fixtures/scipy-reference.json' with { type: 'json' };

function expectClose(ours: number, ref: number, rel: number, what = ''): void {
  const err = Math.abs(ours - ref);
  if (!(err <= rel * Math.abs(ref) || err <= 1e-300)) {
    throw new Error(`${what}: ours ${ours} vs reference ${ref} (relative error ${err / Math.abs(ref)})`);
  }
}

/** Independent exact reference: the BigInt tails, combined by the definition. */
function exactReference(b: number, c: number, alt: McNemarAlternative): number {
  const m = b + c;
  if (m === 0) return 1;
  const le = exactBinomialTailNumber(b, m, 0.5, 'lower');
  const ge = exactBinomialTailNumber(b, m, 0.5, 'upper');
  if (alt === 'greater') return ge;
  if (alt === 'less') return le;
  return Math.min(1, 2 * Math.min(le, ge));
}

const FC = { seed: 20260824, numRuns: 300 } as const;

describe('mcnemarExact', () => {
  it('reproduces the published two-sided p-values (printed precision) and their exact values', () => {
    expect(mcnemarExact(9, 1).toFixed(4)).toBe('0.0215');
    expect(mcnemarExact(13, 6).toFixed(4)).toBe('0.1671');
    expect(mcnemarExact(91, 64).toFixed(3)).toBe('0.036');
    expect(mcnemarExact(3, 3)).toBe(1);
    expect(mcnemarExact(9, 1)).toBe(22 / 1024); // small m: the correctly rounded rational
    expect(mcnemarExact(13, 6)).toBe((2 * 43796) / 2 ** 19); // 2·P(X ≤ 6 | 19) = 2·Σ_{j≤6} C(19, j)/2^19
    expectClose(mcnemarExact(91, 64), exactReference(91, 64, 'two-sided'), 1e-14, '(91,64)');
  });

  it('reproduces the published one-sided p-values', () => {
    expect(mcnemarExact(7, 5, 'greater').toFixed(3)).toBe('0.387');
    expect(mcnemarExact(6, 2, 'greater').toFixed(3)).toBe('0.145');
    expect(mcnemarExact(7, 5, 'greater')).toBe(1586 / 4096);
    expect(mcnemarExact(6, 2, 'greater')).toBe(37 / 256);
    // paper: the mis-split b′ = c′ = 6 gave one-sided p = 0.613
    expect(mcnemarExact(6, 6, 'greater').toFixed(3)).toBe('0.613');
    // further exact McNemar values quoted in the paper
    expect(mcnemarExact(11, 15).toFixed(3)).toBe('0.557');
    expect(mcnemarExact(12, 6).toFixed(3)).toBe('0.238');
    expect(mcnemarExact(8, 13).toFixed(2)).toBe('0.38');
  });

  it('is bit-identical to the BigInt exact reference for b + c ≤ 50', () => {
    for (let m = 0; m <= 50; m++) {
      for (let b = 0; b <= m; b++) {
        for (const alt of ['two-sided', 'greater', 'less'] as const) {
          expect(mcnemarExact(b, m - b, alt)).toBe(exactReference(b, m - b, alt));
        }
      }
    }
  });

  it('equals the BigInt exact reference for every (b, c) with b + c ≤ 60, and along m = 200', () => {
    const alts: McNemarAlternative[] = ['two-sided', 'greater', 'less'];
    const tol = (ref: number): number => 4.4e-16 * (30 + Math.abs(Math.log(ref)));
    for (let m = 0; m <= 60; m++) {
      for (let b = 0; b <= m; b++) {
        for (const alt of alts) {
          const ref = exactReference(b, m - b, alt);
          expectClose(mcnemarExact(b, m - b, alt), ref, tol(ref), `(${b},${m - b},${alt})`);
        }
      }
    }
    for (let b = 0; b <= 200; b += 7) {
      const ref = exactReference(b, 200 - b, 'two-sided');
      expectClose(mcnemarExact(b, 200 - b), ref, tol(ref), `(${b},${200 - b})`);
    }
  });

  it('matches scipy.stats.binomtest (fixture, b + c up to 1e6) to 1e-9 relative', () => {
    for (const r of scipyRef.mcnemar) {
      expectClose(mcnemarExact(r.b, r.c), r.twoSided, 1e-9, `two-sided (${r.b},${r.c})`);
      expectClose(mcnemarExact(r.b, r.c, 'greater'), r.greater, 1e-9, `greater (${r.b},${r.c})`);
      expectClose(mcnemarExact(r.b, r.c, 'less'), r.less, 1e-9, `less (${r.b},${r.c})`);
    }
  });

  it('follows the literal definition 2·min(P(X ≤ b), P(X ≥ b)) for large m', () => {
    for (const [b, c] of [
      [499_000, 501_000],
      [501_234, 498_766],
      [499_999, 500_001],
      [123, 877],
    ] as const) {
      const m = b + c;
      const literal = Math.min(1, 2 * Math.min(binomialCdf(b, m, 0.5), binomialSf(b, m, 0.5)));
      expectClose(mcnemarExact(b, c), literal, 1e-14, `(${b},${c})`);
    }
  });

  it('gives 1 without discordant pairs, and at b = c', () => {
    for (const alt of ['two-sided', 'greater', 'less'] as const) expect(mcnemarExact(0, 0, alt)).toBe(1);
    expect(mcnemarExact(500_000, 500_000)).toBe(1);
  });

  it('is a probability, symmetric in (b, c) when two-sided, and mirrors greater/less (property, seeded)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 }), (b, c) => {
        const p = mcnemarExact(b, c);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThanOrEqual(1);
        expect(mcnemarExact(c, b)).toBe(p);
        expect(mcnemarExact(b, c, 'greater')).toBe(mcnemarExact(c, b, 'less'));
        const g = mcnemarExact(b, c, 'greater');
        const l = mcnemarExact(b, c, 'less');
        expect(p).toBeGreaterThanOrEqual(Math.min(g, l));
      }),
      FC,
    );
  });

  it('rejects counts that are not integers ≥ 0, naming b or c', () => {
    const cases: [() => unknown, string][] = [
      [() => mcnemarExact(-1, 3), 'b'],
      [() => mcnemarExact(1.5, 3), 'b'],
      [() => mcnemarExact(Number.NaN, 3), 'b'],
      [() => mcnemarExact(2, -3), 'c'],
      [() => mcnemarExact(2, 0.25), 'c'],
      [() => mcnemarExact(2, 3, 'sideways' as McNemarAlternative), 'alternative'],
    ];
    for (const [f, field] of cases) {
      try {
        f();
        throw new Error('no error');
      } catch (e) {
        expect(e).toBeInstanceOf(ImepError);
        expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
        expect((e as ImepError).field).toBe(field);
      }
    }
  });
});
