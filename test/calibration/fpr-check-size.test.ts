/**
 * Issue 31 §6: the real-campaign false-positive check is sized by exact binomial computation so that a rule with
 * twice its stated rate fails with probability ≥ 0.9 and a rule at α passes with probability ≥ 0.95.
 *
 * Reference tails computed independently with SciPy 1.17.1 (`scipy.stats.binom.cdf(k, B, p)`):
 *   cdf(17, 233, 0.05) = 0.9539299485512643    cdf(17, 233, 0.10) = 0.09885961633458334
 *   cdf(16, 233, 0.05) = 0.9219356701752353    (so k = 17 is the smallest passing count at B = 233)
 *   cdf(3, 20, 0.05)   = 0.9840984739802364    cdf(3, 20, 0.10)   = 0.8670466765656649
 *   cdf(2, 20, 0.05)   = 0.9245163262115037    cdf(2, 20, 0.10)   = 0.6769268051894659 (the 0.68)
 *   cdf(18, 492, 0.025) = 0.9564417805680946   cdf(18, 492, 0.05) = 0.09950110500574391
 *   cdf(16, 109, 0.10) = 0.9567919237666116    cdf(16, 109, 0.20) = 0.09907704889223592
 * and, by the same rule in SciPy, max over B = 1…232 of P(fail | 2α = 0.1) = 0.8974800484285699 (at B = 232):
 * no smaller B reaches 0.9.
 */
import { describe, expect, it } from 'vitest';
import { fprCheckSize, fprPassRule, fprRuleText } from '../../src/calibration/index.js';

describe('fprCheckSize / fprPassRule (exact binomial)', () => {
  it('α = 0.05: B = 233, pass iff ≤ 17; OC against SciPy to 1e-6', () => {
    const r = fprCheckSize(0.05);
    expect(r.campaigns).toBe(233);
    expect(r.maxFalsePositives).toBe(17);
    expect(Math.abs(r.passAtAlpha - 0.9539299485512643)).toBeLessThan(1e-6);
    expect(Math.abs(r.failAtTwiceAlpha - (1 - 0.09885961633458334))).toBeLessThan(1e-6);
    expect(r.passAtAlpha).toBeGreaterThanOrEqual(0.95);
    expect(r.failAtTwiceAlpha).toBeGreaterThanOrEqual(0.9);
    // B = 232 falls short (SciPy: 1 − cdf(17, 232, 0.1) = 0.89748…)
    expect(Math.abs(fprPassRule(0.05, 232).failAtTwiceAlpha - 0.8974800484285699)).toBeLessThan(1e-6);
    for (let b = 1; b < 233; b++) expect(fprPassRule(0.05, b).failAtTwiceAlpha).toBeLessThan(0.9);
    expect(fprRuleText(r)).toBe(
      'B = 233, pass iff ≤ 17 false positives: P(pass | FPR = 0.05) = 95.39%, P(fail | FPR = 0.1) = 90.11%',
    );
  });

  it('other α: 0.025 → B 492, k 18; 0.1 → B 109, k 16', () => {
    const a = fprCheckSize(0.025);
    expect([a.campaigns, a.maxFalsePositives]).toEqual([492, 18]);
    expect(Math.abs(a.passAtAlpha - 0.9564417805680946)).toBeLessThan(1e-6);
    expect(Math.abs(a.failAtTwiceAlpha - (1 - 0.09950110500574391))).toBeLessThan(1e-6);
    const b = fprCheckSize(0.1);
    expect([b.campaigns, b.maxFalsePositives]).toEqual([109, 16]);
    expect(Math.abs(b.passAtAlpha - 0.9567919237666116)).toBeLessThan(1e-6);
    expect(Math.abs(b.failAtTwiceAlpha - (1 - 0.09907704889223592))).toBeLessThan(1e-6);
  });

  it('B = 20 (the old registration) is too weak: its exact rule (≤ 3) fails a rule at 2α with probability 0.133', () => {
    const r = fprPassRule(0.05, 20);
    expect(r.maxFalsePositives).toBe(3);
    expect(Math.abs(r.passAtAlpha - 0.9840984739802364)).toBeLessThan(1e-6);
    expect(Math.abs(r.failAtTwiceAlpha - (1 - 0.8670466765656649))).toBeLessThan(1e-6);
    // the old rule x/B ≤ α + 2·√(α(1−α)/B) = 14.75% was x ≤ 2: a rule at 2α passed it with probability 0.677
    const old = fprPassRule(0.05, 20, 0.92);
    expect(old.maxFalsePositives).toBe(2);
    expect(Math.abs(old.passAtAlpha - 0.9245163262115037)).toBeLessThan(1e-6);
    expect(Math.abs(1 - old.failAtTwiceAlpha - 0.6769268051894659)).toBeLessThan(1e-6);
  });

  it('refuses α outside (0, 0.5) and B < 1', () => {
    expect(() => fprCheckSize(0)).toThrow(/α must lie in/);
    expect(() => fprPassRule(0.05, 0)).toThrow(/campaigns must be an integer/);
  });
});
