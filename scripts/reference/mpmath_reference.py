#!/usr/bin/env python3
"""High-precision (40-digit) reference values for the hardest cases of IMEP's exact binomial machinery.

Writes test/stats/fixtures/mpmath-reference.json. Needs only mpmath (`pip install mpmath` or
`apt-get install python3-mpmath`); run with any python3 that has it:

    python3 scripts/reference/mpmath_reference.py

Why a second reference: SciPy/Boost (stats_reference.py) is itself off by up to ~1e-9 relative for
n around 1e7 near the mean, so those cases are checked here against independent 40-digit arithmetic:
  - binomial tails: direct summation of pmf terms (log-gamma start, exact ratio recurrence) from k
    towards the tail, stopped when a term falls below 1e-35 of the sum;
  - I_x(a, b) for integer a, b via I_x(a, b) = P(Bin(a+b-1, x) >= a); non-integer a, b via mpmath.betainc;
  - inverses (and Clopper-Pearson bounds) by mpmath.findroot on those functions.
Every input x or p is the exact double value that the TypeScript tests pass in.
"""

import json
import os
import sys

import mpmath as mp

mp.mp.dps = 40
TOL = mp.mpf(10) ** -36
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test", "stats", "fixtures", "mpmath-reference.json")


def pmf(k, n, p):
    p = mp.mpf(p)
    return mp.exp(mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1) + k * mp.log(p) + (n - k) * mp.log1p(-p))


def cdf(k, n, p):
    """P(X <= k)."""
    if k < 0:
        return mp.mpf(0)
    if k >= n:
        return mp.mpf(1)
    p = mp.mpf(p)
    q = 1 - p
    t = pmf(k, n, p)
    s = t
    j = k
    while j > 0:
        t = t * j / (n - j + 1) * q / p
        j -= 1
        s += t
        if t < TOL * s:
            break
    return s


def sf(k, n, p):
    """P(X >= k)."""
    if k <= 0:
        return mp.mpf(1)
    if k > n:
        return mp.mpf(0)
    p = mp.mpf(p)
    q = 1 - p
    t = pmf(k, n, p)
    s = t
    j = k
    while j < n:
        t = t * (n - j) / (j + 1) * p / q
        j += 1
        s += t
        if t < TOL * s:
            break
    return s


def ibeta(x, a, b):
    """(I_x(a, b), 1 - I_x(a, b))."""
    if float(a).is_integer() and float(b).is_integer():
        a, b = int(a), int(b)
        return sf(a, a + b - 1, x), cdf(a - 1, a + b - 1, x)
    lo = mp.betainc(a, b, 0, x, regularized=True)
    hi = mp.betainc(a, b, x, 1, regularized=True)
    return lo, hi


def num(v):
    return float(v)


def binomial_cases():
    rows = []
    for n, p in [
        (100_000, 0.5),
        (1_000_000, 0.5),
        (10_000_000, 0.5),
        (1_000_000, 0.3),
        (10_000_000, 0.7),
        (10_000_000, 0.3),
        (1_000_000, 0.001),
        (1_000_000, 0.999),
        (400, 0.032),
    ]:
        mu = n * p
        sd = (n * p * (1 - p)) ** 0.5
        ks = sorted({int(mu + z * sd) for z in (-20, -8, -3, -1, 0, 1, 3, 8, 20)} & set(range(0, n + 1)))
        for k in ks:
            rows.append({"k": k, "n": n, "p": p, "cdf": num(cdf(k, n, p)), "sf": num(sf(k, n, p))})
    return rows


def beta_cases():
    rows = []
    for a, b in [(3, 10_000_000), (10_000_000, 3), (10_000_000, 10_000_000), (1_000_001, 500_000), (2, 1_000_000), (500_000, 500_000)]:
        mean = a / (a + b)
        sd = (a * b / ((a + b) ** 2 * (a + b + 1))) ** 0.5
        for z in (-8, -3, -0.5, 0, 0.5, 3, 8):
            x = mean + z * sd
            if 0 < x < 1:
                lo, hi = ibeta(x, a, b)
                rows.append({"x": x, "a": a, "b": b, "cdf": num(lo), "sf": num(hi)})
    for a, b in [(0.5, 0.5), (2.5, 7), (30.5, 300.25), (0.75, 2000), (1500.5, 2500.5)]:
        mean = a / (a + b)
        sd = (a * b / ((a + b) ** 2 * (a + b + 1))) ** 0.5
        for z in (-3, -1, 0, 1, 3):
            x = mean + z * sd
            if 0 < x < 1:
                lo, hi = ibeta(x, a, b)
                rows.append({"x": x, "a": a, "b": b, "cdf": num(lo), "sf": num(hi)})
    return rows


def inverse(p, a, b, upper):
    """x with I_x(a, b) = p (upper=False) or 1 - I_x(a, b) = p (upper=True)."""
    f = (lambda t: ibeta(t, a, b)[1] - p) if upper else (lambda t: ibeta(t, a, b)[0] - p)
    lo, hi = mp.mpf(0), mp.mpf(1)
    # bracket by bisection on a log scale to 1e-6 relative, then polish with the secant method
    mean = mp.mpf(a) / (a + b)
    for _ in range(200):
        mid = mp.sqrt(lo * hi) if lo > 0 and hi < mean else (lo + hi) / 2
        v = f(mid)
        if (v < 0) != upper:
            lo = mid
        else:
            hi = mid
        if hi - lo < mp.mpf(10) ** -8 * hi:
            break
    return mp.findroot(f, (lo, hi), solver="anderson")


def inverse_cases():
    rows = []
    for p in (0.05, 0.025, 1e-10):
        for a, b in [(2.5, 7), (30.5, 300.25), (3, 198), (4, 197), (13, 60), (7, 66)]:
            rows.append({"p": p, "a": a, "b": b, "ppf": num(inverse(p, a, b, False)), "isf": num(inverse(p, a, b, True))})
    return rows


def clopper_pearson_cases():
    rows = []
    for x, n in [
        (3, 200),
        (4, 200),
        (2, 200),
        (9, 200),
        (1, 200),
        (13, 72),
        (6, 72),
        (13, 96),
        (6, 96),
        (21, 200),
        (78, 172),
        (88, 177),
        (88, 178),
        (21, 300),
        (1000, 1_000_000),
        (500_000, 1_000_000),
    ]:
        for alpha in (0.05, 0.025):
            lower = inverse(alpha, x, n - x + 1, False)
            upper = inverse(alpha, x + 1, n - x, True)
            rows.append({"x": x, "n": n, "alpha": alpha, "lower": num(lower), "upper": num(upper)})
    return rows


def main():
    data = {
        "meta": {
            "generator": "scripts/reference/mpmath_reference.py",
            "mpmath": mp.__version__,
            "dps": mp.mp.dps,
            "python": sys.version.split()[0],
            "conventions": {"binomial.sf": "P(X >= k)", "clopperPearson": "one-sided (1 - alpha) bounds"},
        },
        "binomial": binomial_cases(),
        "beta": beta_cases(),
        "betaInverse": inverse_cases(),
        "clopperPearson": clopper_pearson_cases(),
    }
    with open(OUT, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    print(f"wrote {os.path.normpath(OUT)}: " + str({k: len(v) for k, v in data.items() if isinstance(v, list)}), file=sys.stderr)


if __name__ == "__main__":
    main()
