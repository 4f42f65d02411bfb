import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ImepError } from '../../src/core/errors.js';
import {
  inverseRegularizedIncompleteBeta as inv,
  inverseRegularizedIncompleteBetaComplement as invc,
  logBeta,
  logChoose,
  logGamma,
  regularizedIncompleteBeta as I,
  regularizedIncompleteBetaComplement as Ic,
} from '../../src/stats/special-functions.js';
import scipyRef from './fixtures/scipy-reference.json' with { type: 'json' };
import mpRef from './fixtures/mpmath-reference.json' with { type: 'json' };

/** |ours − ref| ≤ rel·|ref| or ≤ abs. */
function expectClose(ours: number, ref: number, rel: number, abs = 0, what = ''): void {
  const err = Math.abs(ours - ref);
  if (!(err <= rel * Math.abs(ref) || err <= abs)) {
    throw new Error(`${what}: ours ${ours} vs reference ${ref} (relative error ${err / Math.abs(ref)})`);
  }
}

function expectDomainError(f: () => unknown, field: string): void {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
    expect((e as ImepError).field).toBe(field);
    return;
  }
  throw new Error(`expected a domain error on '${field}'`);
}

const FC = { seed: 20260824, numRuns: 200 } as const;

describe('logGamma', () => {
  it('matches 30-digit values (mpmath) to ~1e-15 relative, including next to the zeros at 1 and 2', () => {
    const cases: [number, number][] = [
      [1e-300, 690.7755278982137],
      [1e-10, 23.025850929882736],
      [0.1, 2.252712651734206],
      [0.5, 0.5723649429247001],
      [0.9999999, 5.772157468444193e-8],
      [1.0000001, -5.772155829918507e-8],
      [1.2345, -0.09460164667939668],
      [1.5, -0.12078223763524522],
      [1.9999999, -4.2278430309861296e-8],
      [2.0000001, 4.227843666532498e-8],
      [2.5, 0.2846828704729192],
      [2.7, 0.4348205536551047],
      [3.3, 0.9870985778947344],
      [9.99, 12.779315214350193],
      [10.5, 13.940625219403763],
      [123.456, 469.6055471299295],
      [1e7 + 0.5, 151180957.42852172],
      [1e15, 3.3538776394910668e16],
    ];
    for (const [x, ref] of cases) expectClose(logGamma(x), ref, 4e-15, 0, `logGamma(${x})`);
  });

  it('is exact at the integers: ln Γ(n) = ln (n−1)!', () => {
    let fact = 1n;
    for (let n = 1; n <= 60; n++) {
      if (n > 1) fact *= BigInt(n - 1);
      const ref = n <= 2 ? 0 : Math.log(Number(fact));
      if (ref === 0) expect(logGamma(n)).toBe(0);
      else expectClose(logGamma(n), ref, 2e-15, 0, `logGamma(${n})`);
    }
  });

  it('satisfies the recurrence ln Γ(x+1) = ln Γ(x) + ln x', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 1e6, noNaN: true }), (x) => {
        expectClose(logGamma(x + 1), logGamma(x) + Math.log(x), 1e-13, 1e-14, `x=${x}`);
      }),
      FC,
    );
  });

  it('rejects x ≤ 0 and NaN naming x', () => {
    expectDomainError(() => logGamma(0), 'x');
    expectDomainError(() => logGamma(-1.5), 'x');
    expectDomainError(() => logGamma(Number.NaN), 'x');
  });
});

describe('logBeta and logChoose', () => {
  it('keep full precision for large and unbalanced arguments', () => {
    expectClose(logBeta(5, 1e7), -77.4124254244435, 2e-15);
    expectClose(logBeta(1e6, 1e6), -1386300.003362921, 2e-15);
    expectClose(logBeta(0.3, 2e4), -1.8752430209252633, 4e-15);
    expectClose(logBeta(12.5, 7.25), -12.81232932793278, 4e-15);
    expectClose(logBeta(0.5, 0.5), Math.log(Math.PI), 2e-15);
    expectClose(logChoose(1e7, 3), 46.56252718364688, 2e-15);
    expectClose(logChoose(1e7, 5e6), 6931463.52076025, 2e-15);
    expectClose(logChoose(1000.5, 2.25), 14.606365798066808, 4e-15);
  });

  it('logChoose equals ln of the exact binomial coefficient (BigInt) for n ≤ 100', () => {
    for (let n = 0; n <= 100; n++) {
      let c = 1n;
      for (let k = 0; k <= n; k++) {
        if (k > 0) c = (c * BigInt(n - k + 1)) / BigInt(k);
        const ref = Math.log(Number(c));
        if (ref === 0) expect(logChoose(n, k)).toBe(0);
        else expectClose(logChoose(n, k), ref, 4e-15, 0, `logChoose(${n}, ${k})`);
      }
    }
  });

  it('reject bad arguments naming them', () => {
    expectDomainError(() => logBeta(0, 1), 'a');
    expectDomainError(() => logBeta(1, -2), 'b');
    expectDomainError(() => logChoose(5, 6), 'k');
    expectDomainError(() => logChoose(-1, 0), 'n');
  });
});

describe('regularizedIncompleteBeta', () => {
  it('matches closed forms (relative error ≈ ε·|ln I|, the price of log space, below 1e-13 at 1e-300)', () => {
    const tol = (ref: number): number => 4e-16 * (8 + Math.abs(Math.log(ref)));
    for (const x of [1e-300, 1e-9, 0.01, 0.3, 0.5, 0.77, 0.999999]) {
      const cases: [string, number, number][] = [
        ['I_x(1,1)', I(x, 1, 1), x],
        ['I_x(7,1)', I(x, 7, 1), x ** 7],
        ['1−I_x(1,5)', Ic(x, 1, 5), (1 - x) ** 5],
        [
          'I_x(½,½)',
          I(x, 0.5, 0.5),
          x <= 0.5 ? (2 / Math.PI) * Math.asin(Math.sqrt(x)) : 1 - (2 / Math.PI) * Math.asin(Math.sqrt(1 - x)),
        ],
      ];
      for (const [what, ours, ref] of cases) {
        if (ref === 0) expect(ours).toBe(0);
        else expectClose(ours, ref, tol(ref), 0, `${what} x=${x}`);
      }
    }
    expect(I(0, 2, 3)).toBe(0);
    expect(I(1, 2, 3)).toBe(1);
    expect(Ic(0, 2, 3)).toBe(1);
    expect(Ic(1, 2, 3)).toBe(0);
  });

  it('is exactly ½ at x = ½ for a = b, up to a = b = 1e7', () => {
    for (const a of [1, 5, 50, 5e3, 5e5, 5e6, 1e7]) expectClose(I(0.5, a, a), 0.5, 4e-15, 0, `a=${a}`);
  });

  it('matches SciPy/Boost (fixture) to 1e-9 relative', () => {
    for (const r of scipyRef.beta) {
      const what = `x=${r.x} a=${r.a} b=${r.b}`;
      expectClose(I(r.x, r.a, r.b), r.cdf, 1e-9, 1e-300, `I ${what}`);
      expectClose(Ic(r.x, r.a, r.b), r.sf, 1e-9, 1e-300, `1−I ${what}`);
    }
  });

  it('matches 40-digit mpmath values (fixture) to 1e-12 relative, where Boost is off by up to 1e-9', () => {
    for (const r of mpRef.beta) {
      const what = `x=${r.x} a=${r.a} b=${r.b}`;
      expectClose(I(r.x, r.a, r.b), r.cdf, 1e-12, 1e-300, `I ${what}`);
      expectClose(Ic(r.x, r.a, r.b), r.sf, 1e-12, 1e-300, `1−I ${what}`);
    }
  });

  it('keeps the two tails complementary and symmetric', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0.5, max: 1e6, noNaN: true }),
        fc.double({ min: 0.5, max: 1e6, noNaN: true }),
        (x, a, b) => {
          const lo = I(x, a, b);
          const hi = Ic(x, a, b);
          expect(Math.abs(lo + hi - 1)).toBeLessThan(1e-14);
          expect(lo).toBeGreaterThanOrEqual(0);
          expect(lo).toBeLessThanOrEqual(1);
          if (x >= 0.5) expectClose(Ic(1 - x, b, a), lo, 1e-13, 1e-300, 'symmetry');
        },
      ),
      FC,
    );
  });

  it('rejects out-of-domain arguments naming them', () => {
    expectDomainError(() => I(-0.1, 1, 1), 'x');
    expectDomainError(() => I(1.1, 1, 1), 'x');
    expectDomainError(() => I(0.5, 0, 1), 'a');
    expectDomainError(() => I(0.5, 1, Number.POSITIVE_INFINITY), 'b');
  });
});

describe('inverseRegularizedIncompleteBeta', () => {
  it('matches SciPy/Boost ppf/isf (fixture) to 1e-9 relative', () => {
    for (const r of scipyRef.betaInverse) {
      const what = `p=${r.p} a=${r.a} b=${r.b}`;
      expectClose(inv(r.p, r.a, r.b), r.ppf, 1e-9, 0, `ppf ${what}`);
      expectClose(invc(r.p, r.a, r.b), r.isf, 1e-9, 0, `isf ${what}`);
    }
  });

  it('matches 40-digit mpmath roots (fixture) to 1e-14 relative', () => {
    for (const r of mpRef.betaInverse) {
      expectClose(inv(r.p, r.a, r.b), r.ppf, 1e-14, 0, `ppf p=${r.p} a=${r.a} b=${r.b}`);
      expectClose(invc(r.p, r.a, r.b), r.isf, 1e-14, 0, `isf p=${r.p} a=${r.a} b=${r.b}`);
    }
  });

  it('round-trips x → I_x → x to a few ulps', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-6, max: 1 - 1e-6, noNaN: true }),
        fc.double({ min: 0.5, max: 200, noNaN: true }),
        fc.double({ min: 0.5, max: 200, noNaN: true }),
        (x, a, b) => {
          // invert the smaller tail (the larger one is rounded near 1 and would not determine x)
          const p = I(x, a, b);
          const q = Ic(x, a, b);
          fc.pre(Math.min(p, q) > 1e-300);
          const back = p <= q ? inv(p, a, b) : invc(q, a, b);
          expectClose(back, x, 1e-12, 0, `x=${x} a=${a} b=${b}`);
        },
      ),
      FC,
    );
  });

  it('handles the end points and a root below the smallest double', () => {
    expect(inv(0, 2, 3)).toBe(0);
    expect(inv(1, 2, 3)).toBe(1);
    expect(invc(0, 2, 3)).toBe(1);
    expect(invc(1, 2, 3)).toBe(0);
    expect(inv(1e-300, 0.5, 0.5)).toBe(0); // true root ≈ 2.5e-600
    expectClose(inv(1e-300, 1, 1), 1e-300, 1e-13);
    expectClose(invc(1e-10, 1, 4), 1 - 1e-10 ** 0.25, 1e-14);
  });

  it('rejects probabilities outside [0, 1]', () => {
    expectDomainError(() => inv(1.5, 1, 1), 'p');
    expectDomainError(() => invc(-0.5, 1, 1), 'q');
  });
});
