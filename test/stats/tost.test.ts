import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { tango } from '../../src/stats/tango.js';
import { normaliseMargin, tost, tostPairedTango, type TostResult } from '../../src/stats/tost.js';

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

describe('tost', () => {
  // Paper, frozen 690-pair test: Δ = structured − comparator = −3.91 pp (64 structured-only, 91
  // comparator-only), ±5 pp band, 90% Tango interval. Structured as reference: b = 64, c = 91.
  it('paper example: 90% interval wholly below 0 and crossing −5 pp → not equivalent (harm criterion met)', () => {
    const r = tostPairedTango(64, 91, 690, 0.05);
    expect(r.outcome).toBe('not-equivalent');
    expect(r.direction).toBe('below-zero');
    if (r.outcome === 'not-equivalent') expect(r.beyond).toBe('lower');
    expect(r.level).toBeCloseTo(0.9, 15);
    expect(r.alpha).toBe(0.05);
    expect(r.margin).toEqual([-0.05, 0.05]);
    expect(r.method).toBe('tango-score');
    expect(Math.round(r.estimate * 10000) / 100).toBe(-3.91);
    expect(r.interval).toEqual(tango(64, 91, 690, 0.9).interval);
    expect(Math.round(r.interval[1] * 10000) / 100).toBe(-0.95);
  });

  it('paper no-conflict twin: a 90% interval [−4.20, +1.01] pp inside ±5 pp → equivalent', () => {
    const r = tost({ interval: [-0.042, 0.0101], margin: 0.05 });
    expect(r.outcome).toBe('equivalent');
    expect(r.direction).toBe('includes-zero');
    expect(r.interval).toEqual([-0.042, 0.0101]);
    expect(r.level).toBe(0.9);
  });

  it('paper Q3-VC: 90% bootstrap TOST interval [−2.46, +3.04] pp inside ±5 pp → equivalent', () => {
    expect(tost({ interval: [-0.0246, 0.0304], margin: [-0.05, 0.05], level: 0.9 }).outcome).toBe('equivalent');
  });

  it('equivalence requires strict inclusion; an endpoint on the margin is not inside', () => {
    const r = tost({ interval: [-0.05, 0.01], margin: 0.05 });
    expect(r.outcome).toBe('not-equivalent');
    expect(tost({ interval: [-0.049, 0.049], margin: 0.05 }).outcome).toBe('equivalent');
  });

  it('asymmetric margins, and both-sided overreach', () => {
    const r = tost({ interval: [-0.03, 0.015], margin: [-0.05, 0.02] });
    expect(r.outcome).toBe('equivalent');
    const up = tost({ interval: [-0.01, 0.025], margin: [-0.05, 0.02] });
    expect(up.outcome === 'not-equivalent' && up.beyond).toBe('upper');
    const both = tost({ interval: [-0.2, 0.2], margin: 0.1 });
    expect(both.outcome === 'not-equivalent' && both.beyond).toBe('both');
    expect(both.direction).toBe('includes-zero');
    const above = tost({ interval: [0.02, 0.3], margin: 0.1 });
    expect(above.direction).toBe('above-zero');
    // One-sided (non-inferiority) margin.
    expect(tost({ interval: [-0.01, 0.5], margin: [-0.05, Infinity] }).outcome).toBe('equivalent');
  });

  it('an interval wholly below 0 but inside the margin is equivalent and says so', () => {
    const r = tost({ interval: [-0.04, -0.01], margin: 0.05 });
    expect(r.outcome).toBe('equivalent');
    expect(r.direction).toBe('below-zero');
  });

  it('validates arguments, naming them', () => {
    expectDomain(() => tost({ interval: [0.1, -0.1], margin: 0.05 }), 'interval');
    expectDomain(() => tost({ interval: [NaN, 0.1], margin: 0.05 }), 'interval');
    expectDomain(() => tost({ interval: [-0.1, 0.1], margin: -0.05 }), 'margin');
    expectDomain(() => tost({ interval: [-0.1, 0.1], margin: [0.01, 0.05] }), 'margin');
    expectDomain(() => tost({ interval: [-0.1, 0.1], margin: 0.05, level: 1 }), 'level');
    expectDomain(() => tostPairedTango(1, 1, 10, 0.05, 0.5), 'alpha');
    expectDomain(() => tostPairedTango(6, 5, 10, 0.05), 'b');
    expect(normaliseMargin(0.05)).toEqual([-0.05, 0.05]);
  });

  it('is equivalent exactly when the interval lies strictly inside the margin (property, seeded)', () => {
    const v = fc.double({ min: -1, max: 1, noNaN: true });
    const pos = fc.double({ min: 1e-6, max: 1, noNaN: true });
    fc.assert(
      fc.property(v, v, pos, pos, (x, y, mlo, mhi) => {
        const lo = Math.min(x, y);
        const hi = Math.max(x, y);
        const r: TostResult = tost({ interval: [lo, hi], margin: [-mlo, mhi] });
        expect(r.outcome === 'equivalent').toBe(lo > -mlo && hi < mhi);
        expect(r.interval).toEqual([lo, hi]);
        expect(r.margin).toEqual([-mlo, mhi]);
      }),
      { seed: 1987, numRuns: 500 },
    );
  });
});
