import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ImepError } from '../../src/core/errors.js';
import { clopperPearsonLower, clopperPearsonUpper } from '../../src/stats/clopper-pearson.js';
import { conditionalThetaBound } from '../../src/stats/conditional-theta-bound.js';

const FC = { seed: 20260824, numRuns: 200 } as const;

describe('conditional exact bound for θ = ρ_T − ρ_S', () => {
  it('maps the Clopper–Pearson bound on b′/(b′+c′) to θ by (2p − 1)·(b′+c′)/n', () => {
    // released ladder: b′ = 7, c′ = 5 at n = 400 (θ̂ = +0.50 pp, one-sided p = 0.387)
    const r = conditionalThetaBound(7, 5, 400);
    expect(r.estimate).toBeCloseTo(0.005, 15);
    expect(r.discordant).toBe(12);
    expect(r.conditional).toBe(true);
    expect(r.degenerate).toBe(false);
    expect(r.lower).toBeCloseTo((2 * clopperPearsonLower(7, 12, 0.05) - 1) * (12 / 400), 15);
    expect(r.upper).toBeCloseTo((2 * clopperPearsonUpper(7, 12, 0.05) - 1) * (12 / 400), 15);
    expect(r.lower).toBeLessThan(r.estimate);
    expect(r.upper).toBeGreaterThan(r.estimate);
  });

  it('is labelled as conditional, never as an unconditional interval for θ', () => {
    const r = conditionalThetaBound(5, 3, 400);
    expect(r.label).toContain('conditional');
    expect(r.label).toContain('b′+c′=8');
    expect(r.label).toContain('each endpoint one-sided 95%');
    expect(r.label).toContain('not an unconditional interval for θ');
  });

  it('is degenerate with no singly discordant unit', () => {
    const r = conditionalThetaBound(0, 0, 400);
    expect(r).toMatchObject({ estimate: 0, lower: 0, upper: 0, discordant: 0, conditional: true, degenerate: true });
    expect(r.label).toContain('not an unconditional interval for θ');
  });

  it('stays within ±(b′+c′)/n and brackets the estimate (property, seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 2000 }),
        (bp, cp, extra) => {
          const n = bp + cp + extra + 1;
          const r = conditionalThetaBound(bp, cp, n, 0.05);
          const span = (bp + cp) / n;
          expect(r.lower).toBeGreaterThanOrEqual(-span - 1e-15);
          expect(r.upper).toBeLessThanOrEqual(span + 1e-15);
          expect(r.lower).toBeLessThanOrEqual(r.estimate + 1e-15);
          expect(r.upper).toBeGreaterThanOrEqual(r.estimate - 1e-15);
        },
      ),
      FC,
    );
  });

  it('rejects bad counts naming them', () => {
    const cases: [() => unknown, string][] = [
      [() => conditionalThetaBound(-1, 2, 10), 'bPrime'],
      [() => conditionalThetaBound(1, 2.5, 10), 'cPrime'],
      [() => conditionalThetaBound(6, 6, 10), 'n'],
      [() => conditionalThetaBound(1, 1, 10, 0), 'alpha'],
    ];
    for (const [f, field] of cases) {
      try {
        f();
        throw new Error('no error');
      } catch (e) {
        expect(e).toBeInstanceOf(ImepError);
        expect((e as ImepError).field).toBe(field);
      }
    }
  });
});
