import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import {
  erf,
  erfc,
  normalCdf,
  normalPdf,
  normalQuantile,
  normalSf,
  upperCriticalValue,
} from '../../src/stats/normal.js';

interface NormalFixture {
  cases: { cdf: { x: number; cdf: number; sf: number }[]; quantile: { p: number; x: number }[] };
}
const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/normal-reference.json', import.meta.url), 'utf8'),
) as NormalFixture;

function relErr(a: number, b: number): number {
  return b === 0 ? Math.abs(a) : Math.abs(a - b) / Math.abs(b);
}

describe('normal CDF and quantile', () => {
  it('pins textbook values', () => {
    expect(normalCdf(0)).toBe(0.5);
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 14);
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 14);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 15);
    expect(normalSf(1.6448536269514722)).toBeCloseTo(0.05, 15);
    expect(normalPdf(0)).toBeCloseTo(1 / Math.sqrt(2 * Math.PI), 16);
    expect(erf(1)).toBeCloseTo(0.8427007929497149, 15);
    expect(erfc(0.5)).toBeCloseTo(0.4795001221869535, 15);
  });

  // Reference: 80-digit decimal evaluation (scripts/reference/tango_reference.py), not scipy.
  it('matches the high-precision reference to 2^-53 absolute and 1e-15 relative in both tails', () => {
    let maxAbs = 0;
    let maxRelSf = 0;
    for (const { x, cdf, sf } of fixture.cases.cdf) {
      maxAbs = Math.max(maxAbs, Math.abs(normalCdf(x) - cdf), Math.abs(normalSf(x) - sf));
      if (sf > 0) maxRelSf = Math.max(maxRelSf, relErr(normalSf(x), sf));
      if (cdf > 0) maxRelSf = Math.max(maxRelSf, relErr(normalCdf(x), cdf));
    }
    expect(maxAbs).toBeLessThanOrEqual(2 ** -53);
    expect(maxRelSf).toBeLessThan(1e-15);
  });

  it('matches the high-precision quantile to 1e-15 relative', () => {
    let maxRel = 0;
    for (const { p, x } of fixture.cases.quantile) maxRel = Math.max(maxRel, relErr(normalQuantile(p), x));
    expect(maxRel).toBeLessThan(1e-15);
  });

  it('handles the ends of the domain', () => {
    expect(normalQuantile(0)).toBe(-Infinity);
    expect(normalQuantile(1)).toBe(Infinity);
    expect(normalCdf(Infinity)).toBe(1);
    expect(normalCdf(-Infinity)).toBe(0);
    expect(normalSf(40)).toBe(0);
    expect(Number.isNaN(normalCdf(NaN))).toBe(true);
    expect(erfc(-30)).toBe(2);
  });

  it('rejects probabilities outside [0, 1], naming the argument', () => {
    for (const bad of [-0.1, 1.5, NaN]) {
      try {
        normalQuantile(bad);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(ImepError);
        expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
        expect((e as ImepError).field).toBe('p');
      }
    }
    expect(() => upperCriticalValue(0)).toThrow(ImepError);
    expect(() => upperCriticalValue(1)).toThrow(ImepError);
  });

  it('is symmetric and the quantile inverts the CDF (property, seeded)', () => {
    fc.assert(
      fc.property(fc.double({ min: -8, max: 8, noNaN: true }), (x) => {
        expect(Math.abs(normalCdf(x) + normalCdf(-x) - 1)).toBeLessThan(5e-16);
        expect(normalSf(x)).toBe(normalCdf(-x));
      }),
      { seed: 20240601, numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.double({ min: 1e-12, max: 1 - 1e-12, noNaN: true }), (p) => {
        const x = normalQuantile(p);
        const q = 1 - p; // rounded; its exact complement is 1 − q
        expect(relErr(-normalQuantile(q), normalQuantile(1 - q))).toBeLessThan(1e-13);
        const back = p < 0.5 ? normalCdf(x) : normalSf(x);
        const target = p < 0.5 ? p : 1 - p;
        expect(relErr(back, target)).toBeLessThan(1e-13);
      }),
      { seed: 20240602, numRuns: 500 },
    );
  });
});
