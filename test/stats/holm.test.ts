import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { holm, holmFamilies, type MaybePValue } from '../../src/stats/holm.js';

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

function closeAll(actual: readonly MaybePValue[], expected: readonly MaybePValue[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((v, i) => {
    const e = expected[i];
    if (typeof e === 'number') expect(v as number).toBeCloseTo(e, 14);
    else expect(v).toBe(e);
  });
}

describe('holm', () => {
  it('(0.01, 0.04, 0.03, 0.005) → (0.03, 0.06, 0.06, 0.02), in input order', () => {
    closeAll(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02]);
  });

  it('caps at 1 and keeps the step-down running maximum', () => {
    closeAll(holm([0.5, 0.2, 0.9]), [1, 0.6, 1]);
    closeAll(holm([0.3, 0.1, 0.35]), [0.6, 0.3, 0.6]);
    closeAll(holm([0.4, 0.45]), [0.8, 0.8]);
    closeAll(holm([0.6, 0.7]), [1, 1]);
  });

  it('an unavailable slot enters with p = 1, counts toward m, and stays unavailable in the output', () => {
    const withSlot = holm([0.01, 'unavailable', 0.02]);
    closeAll(withSlot, [0.03, 'unavailable', 0.04]);
    // Dropping the slot would have understated the correction:
    closeAll(holm([0.01, 0.02]), [0.02, 0.02]);
  });

  it('handles ties, a single test and an empty family', () => {
    closeAll(holm([0.01, 0.01, 0.01]), [0.03, 0.03, 0.03]);
    closeAll(holm([0.03]), [0.03]);
    expect(holm([])).toEqual([]);
  });

  it('adjusts each frozen family separately', () => {
    const out = holmFamilies({ primary: [0.01, 0.04, 0.03, 0.005], carry: [0.2, 'unavailable'] });
    closeAll(out.primary, [0.03, 0.06, 0.06, 0.02]);
    closeAll(out.carry, [0.4, 'unavailable']);
  });

  it('validates p-values, naming the slot', () => {
    expectDomain(() => holm([0.1, -0.1]), 'pValues[1]');
    expectDomain(() => holm([1.2]), 'pValues[0]');
    expectDomain(() => holm([NaN]), 'pValues[0]');
    expectDomain(() => holmFamilies({ f: [0.1, 2] }), 'families.f[1]');
  });

  it('adjusted ≥ raw, ≤ 1, and monotone in the sorted order (property, seeded)', () => {
    const pv = fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant<'unavailable'>('unavailable'));
    fc.assert(
      fc.property(fc.array(pv, { maxLength: 30 }), (ps) => {
        const adj = holm(ps);
        const m = ps.length;
        const pairs: [number, number][] = [];
        ps.forEach((p, i) => {
          const a = adj[i];
          if (p === 'unavailable') {
            expect(a).toBe('unavailable');
            return;
          }
          expect(typeof a).toBe('number');
          expect(a as number).toBeGreaterThanOrEqual(p);
          expect(a as number).toBeLessThanOrEqual(1);
          expect(a as number).toBeLessThanOrEqual(Math.min(1, m * p) + 1e-15);
          pairs.push([p, a as number]);
        });
        pairs.sort((x, y) => x[0] - y[0]);
        for (let i = 1; i < pairs.length; i++)
          expect((pairs[i] as [number, number])[1]).toBeGreaterThanOrEqual((pairs[i - 1] as [number, number])[1]);
        // Bonferroni on the smallest p-value.
        if (pairs.length > 0)
          expect((pairs[0] as [number, number])[1]).toBeCloseTo(Math.min(1, m * (pairs[0] as [number, number])[0]), 14);
      }),
      { seed: 1979, numRuns: 500 },
    );
  });
});
