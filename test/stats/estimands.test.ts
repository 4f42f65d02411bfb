import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import {
  discordantCounts,
  estimate,
  flipCounts,
  netBenefit,
  outcomeChangeRate,
  successCount,
  successRate,
  taskThetas,
  taskWeights,
  theta,
  thetaBar,
  unitContributions,
  type Estimand,
} from '../../src/stats/estimands.js';
import { pairedDesign, jointlyResolved } from '../../src/stats/paired-outcomes.js';

const FC = { seed: 20260824, numRuns: 200 };

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    return (e as ImepError).field;
  }
  throw new Error('expected a domain error');
}

const bits = (n: number) => fc.array(fc.integer({ min: 0, max: 1 }), { minLength: n, maxLength: n });
const threeConditions = fc.integer({ min: 1, max: 40 }).chain((n) =>
  fc.record({
    A: bits(n),
    S: bits(n),
    T: bits(n),
    task: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: n, maxLength: n }),
  }),
);

describe('D, ρ and success rates', () => {
  const d = pairedDesign({ outcomes: { A: [1, 1, 1, 0, 0, 1], X: [0, 1, 1, 1, 0, 0] } });

  it('counts b and c by hand', () => {
    expect(discordantCounts(d, 'A', 'X')).toEqual({ n: 6, b: 2, c: 1 });
    expect(successCount(d, 'A')).toBe(4);
    expect(successRate(d, 'X')).toBe(3 / 6);
    expect(netBenefit(d, 'A', 'X')).toBe(1 / 6); // positive: X lowers success
    expect(outcomeChangeRate(d, 'A', 'X')).toBe(3 / 6);
  });

  it('D = SR_A − SR_X and ρ ≥ |D| on any design', () => {
    fc.assert(
      fc.property(threeConditions, ({ A, T }) => {
        const x = pairedDesign({ outcomes: { A, T } });
        const D = netBenefit(x, 'A', 'T');
        expect(D).toBeCloseTo(successRate(x, 'A') - successRate(x, 'T'), 12);
        expect(outcomeChangeRate(x, 'A', 'T')).toBeGreaterThanOrEqual(Math.abs(D) - 1e-15);
      }),
      FC,
    );
  });

  it('empty input: counts are zero, rates throw naming the design', () => {
    const e = pairedDesign({ outcomes: { A: [], X: [] } });
    expect(discordantCounts(e, 'A', 'X')).toEqual({ n: 0, b: 0, c: 0 });
    expect(fieldOf(() => netBenefit(e, 'A', 'X'))).toBe('design');
    expect(fieldOf(() => successRate(e, 'A'))).toBe('design');
  });

  it('refuses unresolved units and unknown conditions', () => {
    const u = pairedDesign({ outcomes: { A: [1, null], X: [0, 1] } });
    expect(fieldOf(() => netBenefit(u, 'A', 'X'))).toBe('outcomes.A');
    expect(netBenefit(jointlyResolved(u, ['A', 'X']), 'A', 'X')).toBe(1);
    expect(fieldOf(() => netBenefit(jointlyResolved(u, ['A']), 'A', 'Q'))).toBe('intervention');
  });
});

describe('θ, b′, c′ and θ̄', () => {
  it('reproduces the trained-checkpoint joint table of Appendix E.3 (n00=181, n10=6, n01=3, n11=6)', () => {
    // f_T, f_S per unit; the reference succeeds everywhere, so a flip is a failure.
    const cells: [number, number, number][] = [
      [0, 0, 181],
      [1, 0, 6],
      [0, 1, 3],
      [1, 1, 6],
    ];
    const A: number[] = [],
      T: number[] = [],
      S: number[] = [];
    for (const [ft, fs, k] of cells)
      for (let i = 0; i < k; i++) {
        A.push(1);
        T.push(1 - ft);
        S.push(1 - fs);
      }
    const d = pairedDesign({ outcomes: { A, S, T } });
    expect(flipCounts(d, 'A', 'T', 'S')).toEqual({ n: 196, bPrime: 6, cPrime: 3, flipsT: 12, flipsS: 9 });
    expect(theta(d, 'A', 'T', 'S')).toBeCloseTo(0.0153, 4); // +1.53 pp
    expect(outcomeChangeRate(d, 'A', 'T')).toBeCloseTo(12 / 196, 15);
  });

  it('θ = ρ_T − ρ_S = (b′ − c′)/n and θ̄ is the equal-weight mean of the task θ_t', () => {
    fc.assert(
      fc.property(threeConditions, ({ A, S, T, task }) => {
        const d = pairedDesign({ outcomes: { A, S, T }, tasks: task.map((t) => `t${t}`) });
        const th = theta(d, 'A', 'T', 'S');
        expect(th).toBeCloseTo(outcomeChangeRate(d, 'A', 'T') - outcomeChangeRate(d, 'A', 'S'), 12);
        const per = taskThetas(d, 'A', 'T', 'S');
        expect(per.reduce((s, p) => s + p.n, 0)).toBe(d.n);
        const mean = per.reduce((s, p) => s + p.theta, 0) / per.length;
        expect(thetaBar(d, 'A', 'T', 'S')).toBeCloseTo(mean, 12);
        // weighting tasks by n_t gives back the pooled θ
        const w = Object.fromEntries(per.map((p) => [p.task, p.n]));
        expect(thetaBar(d, 'A', 'T', 'S', w)).toBeCloseTo(th, 12);
        // the per-unit contributions average to the estimand
        for (const e of [
          { kind: 'theta', reference: 'A', target: 'T', sham: 'S' },
          { kind: 'D', reference: 'A', intervention: 'T' },
          { kind: 'rho', reference: 'A', intervention: 'S' },
          { kind: 'successRate', condition: 'T' },
        ] as Estimand[]) {
          const c = unitContributions(d, e);
          expect(c.reduce((s, v) => s + v, 0) / d.n).toBeCloseTo(estimate(d, e), 12);
        }
      }),
      FC,
    );
  });

  it('weights: relative, by task name; a task with weight but no units is refused', () => {
    const d = pairedDesign({
      outcomes: { A: [1, 1, 1, 1], S: [1, 1, 1, 1], T: [0, 1, 1, 1] },
      tasks: ['a', 'a', 'b', 'b'],
    });
    expect(Array.from(taskWeights(d))).toEqual([0.5, 0.5]);
    expect(thetaBar(d, 'A', 'T', 'S')).toBe(0.25);
    expect(thetaBar(d, 'A', 'T', 'S', { a: 3, b: 1 })).toBe(0.375);
    expect(thetaBar(d, 'A', 'T', 'S', { b: 2 })).toBe(0);
    expect(fieldOf(() => thetaBar(d, 'A', 'T', 'S', { c: 1 }))).toBe('weights.c');
    expect(fieldOf(() => thetaBar(d, 'A', 'T', 'S', { a: -1 }))).toBe('weights.a');
    expect(fieldOf(() => thetaBar(d, 'A', 'T', 'S', { a: 0 }))).toBe('weights');
    const lost = pairedDesign({
      outcomes: { A: [1, 1, 1], S: [1, 1, 1], T: [0, 1, null] },
      tasks: ['a', 'a', 'b'],
    });
    const joint = jointlyResolved(lost, ['A', 'S', 'T']);
    expect(fieldOf(() => thetaBar(joint, 'A', 'T', 'S'))).toBe('design');
    expect(thetaBar(joint, 'A', 'T', 'S', { a: 1 })).toBe(0.5);
    expect(Number.isNaN(taskThetas(joint, 'A', 'T', 'S')[1]!.theta)).toBe(true);
  });
});
