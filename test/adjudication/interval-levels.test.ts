/**
 * A level registered on an α-method (an equivalence criterion's `level`) becomes the α per component whose
 * two-sided interval covers at least that level: (1 − level)/4 for the exact-CP difference bound (its two-sided
 * interval is ≥ 1 − 4α: one tail on each proportion), (1 − level)/2 for Clopper–Pearson. Taking (1 − level)/2
 * for the difference gave a TOST "at 0.90" on a ≥ 80% interval, so a difference at the margin read equivalent.
 * The producer (intervals.ts) and the independent cross-check (cross-check-verdicts.ts) agree on the interval id.
 */
import { describe, expect, it } from 'vitest';
import { alphaForLevel, intervalId, intervalOn } from '../../src/adjudication/intervals.js';
import { registeredIntervalId } from '../../src/crosscheck/cross-check-verdicts.js';
import { clopperPearsonLower, clopperPearsonUpper, decisionBound, pairedDesign, tost } from '../../src/stats/index.js';

/** n units with b (reference succeeds, intervention fails), c (the reverse), a both succeed, the rest both fail. */
function design(b: number, c: number, a: number, n: number) {
  const ref: number[] = [];
  const int: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i < b) (ref.push(1), int.push(0));
    else if (i < b + c) (ref.push(0), int.push(1));
    else if (i < b + c + a) (ref.push(1), int.push(1));
    else (ref.push(0), int.push(0));
  }
  return pairedDesign({ outcomes: { A: ref, X: int } });
}

describe('adjudication: a level on an α-method', () => {
  it('maps to α = (1 − level)/4 for the difference bound and (1 − level)/2 for a single binomial', () => {
    expect(alphaForLevel('exact-cp-difference', 0.9)).toBeCloseTo(0.025, 15);
    expect(alphaForLevel('clopper-pearson', 0.9)).toBeCloseTo(0.05, 15);
    expect(alphaForLevel('conditional-exact', 0.95)).toBeCloseTo(0.025, 15);
  });

  it('a 90% equivalence interval on D is the decision bound at α = 0.025 per component, labelled ≥ 90%', () => {
    const d = design(9, 4, 150, 200);
    const iv = intervalOn(
      d,
      { shape: 'difference', stats: { kind: 'D', reference: 'A', intervention: 'X' } },
      { method: 'exact-cp-difference', alpha: null, level: 0.9 },
    );
    const want = decisionBound(9, 4, 200, 0.025);
    expect([iv.lower, iv.upper]).toEqual([want.lower, want.upper]);
    expect(iv.label).toMatch(/^≥90(\.0)?% /);
    // the paper's GRID-1a convention; at ±7.5 pp this difference is not shown equivalent (its upper end is above)
    expect(want.upper).toBeGreaterThan(0.075);
    expect(tost({ interval: [iv.lower, iv.upper], margin: 0.075, level: 0.9 }).outcome).not.toBe('equivalent');
    // what (1 − level)/2 gave: a narrower ≥ 80% interval that reads equivalent
    const narrow = decisionBound(9, 4, 200, 0.05);
    expect(narrow.upper).toBeLessThan(0.075);
    expect(tost({ interval: [narrow.lower, narrow.upper], margin: 0.075, level: 0.9 }).outcome).toBe('equivalent');
  });

  it('a 90% Clopper–Pearson interval on ρ uses α = 0.05 per tail', () => {
    const d = design(9, 4, 150, 200);
    const iv = intervalOn(
      d,
      { shape: 'proportion-flips', stats: { kind: 'rho', reference: 'A', intervention: 'X' } },
      { method: 'clopper-pearson', alpha: null, level: 0.9 },
    );
    expect([iv.lower, iv.upper]).toEqual([clopperPearsonLower(13, 200, 0.05), clopperPearsonUpper(13, 200, 0.05)]);
  });

  it('the producer and the cross-check name the same interval', () => {
    for (const [method, level] of [
      ['exact-cp-difference', 0.9],
      ['clopper-pearson', 0.9],
      ['conditional-exact', 0.95],
      ['exact-cp-difference', 0.8],
    ] as const) {
      const producer = intervalId({ method, alpha: null, level });
      expect(registeredIntervalId({ rule: 'equivalence', method, level, margin: 0.075 })).toBe(producer);
    }
    expect(intervalId({ method: 'exact-cp-difference', alpha: null, level: 0.9 })).toBe('exact-cp-difference/a0.025');
  });
});
