/**
 * Issue 18 §1: the EXACT error rates (enumeration over every outcome table, no simulation) of every bound
 * rule × method the schema accepts, through the adjudicator's own routing and verdict function. Exact
 * methods stay within their stated one-sided error on both sides; the table in docs/error-rates.md is this grid.
 */
import { describe, expect, it } from 'vitest';
import { gridErrorRates, gridMcNemar } from '../../src/calibration/error-rate-grid.js';
import { errorRate } from '../../src/calibration/error-rates.js';
import { clopperPearsonUpper } from '../../src/stats/index.js';

describe('exact error rates of the verdict rules', () => {
  const rows = gridErrorRates();

  it('covers n ∈ {50, 120, 300, 690}, every rule and every enumerable method', () => {
    expect(new Set(rows.map((r) => r.n))).toEqual(new Set([50, 120, 300, 690]));
    expect(new Set(rows.map((r) => r.rule))).toEqual(
      new Set(['lower-bound-above', 'upper-bound-below', 'equivalence']),
    );
    expect(new Set(rows.map((r) => r.method))).toEqual(
      new Set(['exact-cp-difference', 'tango', 'conditional-exact', 'clopper-pearson', 'wilson']),
    );
    expect(Math.max(...rows.map((r) => r.skipped))).toBeLessThan(1e-12);
  });

  it('every row (exact methods, and score intervals confirmed by the exact bound): P(holds | claim false) ≤ stated and P(not detected | claim true) ≤ stated', () => {
    const exact = rows.filter((r) => r.exact);
    expect(exact.length).toBe(rows.length);
    const over = exact.filter((r) => r.pHolds > r.stated + 1e-12 || r.pNotDetected > r.stated + 1e-12);
    expect(
      over.map(
        (r) => `${r.method} ${r.rule} n${r.n} δ${r.delta} m${r.margin} t${r.truth}: ${r.pHolds} ${r.pNotDetected}`,
      ),
    ).toEqual([]);
  });

  it('the conditional bound against a non-zero threshold routes on the unconditional bound at α/2 per proportion', () => {
    const r = errorRate({
      family: 'theta',
      rule: 'lower-bound-above',
      method: 'conditional-exact',
      alphaPerComponent: 0.025,
      n: 300,
      delta: 0.1,
      margin: 0.0122,
      truth: 0.0122,
    });
    expect(r.routedOn).toBe('exact-cp-difference/a0.0125');
    expect(r.pNotDetected).toBeLessThanOrEqual(0.025);
  });

  it("reproduces the issue's 0.149 for the old routing (conditional UB ≤ τ → not detected) at n = 300, θ = 2 pp", () => {
    // old rule: not detected ⇔ conditional UB = (2·CP₊(b′; m) − 1)·m/n ≤ τ; with p_T-only = 2 pp, p_S-only = 0, b′ = m
    const n = 300,
      tau = clopperPearsonUpper(0, 300, 0.025);
    let p = 0;
    for (let m = 0; m <= n; m++) {
      const pm = Math.exp(logChoose(n, m) + m * Math.log(0.02) + (n - m) * Math.log(0.98));
      const ub = m === 0 ? 0 : m / n; // CP₊(m; m) = 1
      if (ub <= tau) p += pm;
    }
    expect(p).toBeCloseTo(0.149, 3);
    // the new routing at the same point stays within α
    const r = errorRate({
      family: 'theta',
      rule: 'lower-bound-above',
      method: 'conditional-exact',
      alphaPerComponent: 0.025,
      n,
      delta: 0.02,
      margin: tau,
      truth: 0.02,
    });
    expect(r.pNotDetected).toBeLessThanOrEqual(0.025);
  });

  it('p-below keeps its size: P(p < α | D = 0) ≤ α for every n and δ', () => {
    for (const m of gridMcNemar()) expect(m.pHolds).toBeLessThanOrEqual(m.alpha);
  });
});

function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log((n - k + i) / i);
  return s;
}
