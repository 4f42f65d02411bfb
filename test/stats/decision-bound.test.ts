import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ImepError } from '../../src/core/errors.js';
import { clopperPearsonLower, clopperPearsonUpper } from '../../src/stats/clopper-pearson.js';
import {
  decisionBound,
  decisionLowerBound,
  decisionUpperBound,
  formatCoveragePercent,
} from '../../src/stats/decision-bound.js';

const pp = (v: number): number => 100 * v;
const FC = { seed: 20260824, numRuns: 200 } as const;

describe('decision bounds on D = (b − c)/n', () => {
  it('reproduces the published upper bounds at α = 0.05 per component, n = 200 (pp, 2 decimals)', () => {
    const published: [number, number, string][] = [
      [3, 3, '3.42'],
      [3, 4, '3.14'],
      [3, 2, '3.65'],
      [2, 2, '2.94'],
      [9, 1, '7.70'],
      [0, 0, '1.49'],
    ];
    for (const [b, c, ub] of published) expect(pp(decisionUpperBound(b, c, 200, 0.05)).toFixed(2)).toBe(ub);
  });

  it('reproduces the raw value 3.1449989… pp for (3, 4) to 1e-6', () => {
    expect(Math.abs(pp(decisionUpperBound(3, 4, 200)) - 3.1449989)).toBeLessThan(1e-6);
  });

  it('(0, 0) is the closed form 1 − 0.05^{1/200}', () => {
    expect(decisionUpperBound(0, 0, 200)).toBeCloseTo(1 - 0.05 ** (1 / 200), 15);
    expect(decisionLowerBound(0, 0, 200)).toBeCloseTo(-(1 - 0.05 ** (1 / 200)), 15);
  });

  it('reproduces the Bridge grid intervals at α = 0.025 per component (b = 13, c = 6)', () => {
    const d72 = decisionBound(13, 6, 72, 0.025);
    expect([pp(d72.lower).toFixed(2), pp(d72.upper).toFixed(2)]).toEqual(['-7.28', '25.77']);
    const d96 = decisionBound(13, 6, 96, 0.025);
    expect([pp(d96.lower).toFixed(2), pp(d96.upper).toFixed(2)]).toEqual(['-5.70', '19.72']);
    expect(d72.label).toBe('≥95% (Bonferroni, one-sided bound)');
    expect(d72.intervalLabel).toBe('≥90% (Bonferroni, two-sided interval)');
    expect(d72.coverage.oneBound).toBeCloseTo(0.95, 15);
    expect(d72.coverage.twoSided).toBeCloseTo(0.9, 15);
    expect(d72.estimate).toBeCloseTo(7 / 72, 15);
  });

  it('labels every bound at the Bonferroni coverage of D, never at a component’s', () => {
    const d = decisionBound(3, 3, 200);
    expect(d.alphaPerComponent).toBe(0.05);
    expect(d.coverage).toEqual({ oneBound: 0.9, twoSided: 0.8 });
    expect(d.label).toBe('≥90% (Bonferroni, one-sided bound)');
    expect(d.intervalLabel).toBe('≥80% (Bonferroni, two-sided interval)');
    expect(d.label).not.toContain('95%');
    expect(formatCoveragePercent(1 - 2 * 0.0125)).toBe('97.5');
  });

  it('is built from the component Clopper–Pearson bounds as defined', () => {
    const [b, c, n, a] = [9, 1, 200, 0.05];
    expect(decisionUpperBound(b, c, n, a)).toBe(clopperPearsonUpper(b, n, a) - clopperPearsonLower(c, n, a));
    expect(decisionLowerBound(b, c, n, a)).toBe(clopperPearsonLower(b, n, a) - clopperPearsonUpper(c, n, a));
  });

  it('brackets the estimate, and LB(b, c) = −UB(c, b) (property, seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom(0.05, 0.025, 0.01),
        (n, u, v, alpha) => {
          const b = Math.floor(u * (n + 1)) % (n + 1);
          const c = Math.floor(v * (n - b + 1)) % (n - b + 1);
          const d = decisionBound(b, c, n, alpha);
          expect(d.lower).toBeLessThanOrEqual(d.estimate);
          expect(d.upper).toBeGreaterThanOrEqual(d.estimate);
          expect(d.lower).toBe(-decisionUpperBound(c, b, n, alpha));
        },
      ),
      FC,
    );
  });

  it('rejects impossible counts and α, naming the field', () => {
    const cases: [() => unknown, string][] = [
      [() => decisionUpperBound(150, 60, 200), 'n'],
      [() => decisionUpperBound(-1, 0, 200), 'b'],
      [() => decisionUpperBound(1, 0.5, 200), 'c'],
      [() => decisionUpperBound(1, 1, 0), 'n'],
      [() => decisionBound(1, 1, 10, 0.6), 'alpha'],
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
