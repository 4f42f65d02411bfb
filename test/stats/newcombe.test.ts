import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { newcombe, newcombePhi, type PhiMode } from '../../src/stats/newcombe.js';

interface NewcombeCase {
  a: number;
  b: number;
  c: number;
  d: number;
  level: number;
  phi: PhiMode;
  lower: number;
  upper: number;
  phiValue: number;
}
const fixture = JSON.parse(readFileSync(new URL('./fixtures/newcombe-reference.json', import.meta.url), 'utf8')) as {
  cases: NewcombeCase[];
};

function expectDomain(fn: () => unknown, field: string): void {
  try {
    fn();
    expect.unreachable();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
    expect((e as ImepError).field).toBe(field);
  }
}

describe('newcombe (method 10, square-and-add)', () => {
  // Published worked example: Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables
  // (2017), ch. 8 — complete response before/after consolidation therapy (Cavo et al., 2012),
  // table [[59, 6], [16, 80]]: Newcombe square-and-add −0.0621 (95% CI −0.1186 to −0.0046).
  it('reproduces the published Cavo et al. example to 1e-4', () => {
    const r = newcombe({ a: 59, b: 6, c: 16, d: 80 });
    expect(r.estimate).toBeCloseTo(-0.0621, 4);
    expect(Math.abs(r.interval[0] - -0.1186)).toBeLessThan(1e-4);
    expect(Math.abs(r.interval[1] - -0.0046)).toBeLessThan(1e-4);
    expect(r.phiMode).toBe('corrected');
  });

  it('the uncorrected φ does not reproduce the published example (the correction matters)', () => {
    const r = newcombe({ a: 59, b: 6, c: 16, d: 80 }, 0.95, { phi: 'plain' });
    expect(Math.abs(r.interval[1] - -0.0046)).toBeGreaterThan(1e-3);
  });

  it('φ correction: (ad − bc − n/2)/√M above n/2, 0 on [0, n/2], uncorrected below 0', () => {
    const t = { a: 59, b: 6, c: 16, d: 80 };
    const m = Math.sqrt(65 * 96 * 75 * 86);
    expect(newcombePhi(t)).toBeCloseTo((59 * 80 - 6 * 16 - 161 / 2) / m, 15);
    expect(newcombePhi(t, 'plain')).toBeCloseTo((59 * 80 - 6 * 16) / m, 15);
    expect(newcombePhi({ a: 1, b: 1, c: 7, d: 12 })).toBe(0); // ad − bc = 5 ≤ n/2 = 10.5
    expect(newcombePhi({ a: 0, b: 5, c: 5, d: 0 })).toBeCloseTo(-1, 15);
  });

  it('sets φ = 0 when a margin is 0 (Newcombe)', () => {
    expect(newcombePhi({ a: 0, b: 0, c: 0, d: 10 })).toBe(0);
    expect(newcombePhi({ a: 0, b: 5, c: 0, d: 0 }, 'plain')).toBe(0);
    const r = newcombe({ a: 10, b: 0, c: 0, d: 0 });
    expect(r.phi).toBe(0);
    expect(r.estimate).toBe(0);
    expect(r.interval[0]).toBeLessThan(0);
    expect(r.interval[1]).toBeGreaterThan(0);
  });

  it('matches the independent Python implementation (brentq Wilson limits) to 1e-6', () => {
    let maxErr = 0;
    for (const k of fixture.cases) {
      const r = newcombe({ a: k.a, b: k.b, c: k.c, d: k.d }, k.level, { phi: k.phi });
      maxErr = Math.max(
        maxErr,
        Math.abs(r.interval[0] - k.lower),
        Math.abs(r.interval[1] - k.upper),
        Math.abs(r.phi - k.phiValue),
      );
    }
    expect(fixture.cases.length).toBeGreaterThan(90);
    expect(maxErr).toBeLessThan(1e-6);
    expect(maxErr).toBeLessThan(1e-12);
  });

  it('validates arguments, naming them', () => {
    expectDomain(() => newcombe({ a: -1, b: 0, c: 0, d: 1 }), 'a');
    expectDomain(() => newcombe({ a: 1, b: 0.5, c: 0, d: 1 }), 'b');
    expectDomain(() => newcombe({ a: 0, b: 0, c: 0, d: 0 }), 'n');
    expectDomain(() => newcombe({ a: 1, b: 1, c: 1, d: 1 }, 1.2), 'level');
  });

  it('contains the estimate, lies in [−1, 1], and mirrors under b ↔ c (property, seeded)', () => {
    const cell = fc.integer({ min: 0, max: 300 });
    fc.assert(
      fc.property(
        fc.tuple(cell, cell, cell, cell),
        fc.constantFrom(0.8, 0.9, 0.95, 0.99),
        fc.constantFrom<PhiMode>('corrected', 'plain'),
        ([a, b, c, d], level, phi) => {
          fc.pre(a + b + c + d > 0);
          const r = newcombe({ a, b, c, d }, level, { phi });
          expect(r.interval[0]).toBeGreaterThanOrEqual(-1);
          expect(r.interval[1]).toBeLessThanOrEqual(1);
          expect(r.interval[0]).toBeLessThanOrEqual(r.estimate + 1e-15);
          expect(r.interval[1]).toBeGreaterThanOrEqual(r.estimate - 1e-15);
          const s = newcombe({ a, b: c, c: b, d }, level, { phi });
          expect(s.interval[0]).toBeCloseTo(-r.interval[1], 12);
          expect(s.interval[1]).toBeCloseTo(-r.interval[0], 12);
        },
      ),
      { seed: 2635, numRuns: 400 },
    );
  });
});
