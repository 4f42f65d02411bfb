#!/usr/bin/python3
"""Independent reference values for IMEP's exact binomial machinery (src/stats), computed with SciPy.

Writes test/stats/fixtures/scipy-reference.json. Run with the Debian interpreter that has SciPy:

    apt-get install -y python3-scipy
    /usr/bin/python3 scripts/reference/stats_reference.py

Sources (SciPy >= 1.9 routes these through Boost.Math, which is accurate to a few ulp):
  - binomial tails: scipy.stats.binom.cdf(k, n, p) = P(X <= k); binom.sf(k - 1, n, p) = P(X >= k)
  - incomplete beta: scipy.stats.beta.cdf / .sf (Boost ibeta / ibetac)
  - inverse incomplete beta: scipy.stats.beta.ppf / .isf (Boost ibeta_inv / ibetac_inv)
  - Clopper-Pearson one-sided bounds: lower = beta.ppf(alpha, x, n - x + 1), upper = beta.isf(alpha, x + 1, n - x)
  - McNemar exact: scipy.stats.binomtest(b, b + c, 0.5, alternative) (two-sided: the likelihood method,
    identical to doubling the smaller tail for p = 1/2)
scipy.special.betainc / betaincinv (Cephes) are NOT used: they lose digits for large a, b
(betainc(5e5, 5e5, 0.5) = 0.49999999875 in SciPy 1.10).
"""

import json
import math
import os
import platform
import sys
import warnings

import numpy as np
import scipy
from scipy import stats

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test", "stats", "fixtures", "scipy-reference.json")


def f(v):
    v = float(v)
    if math.isnan(v):
        raise ValueError("NaN in reference")
    return v


def binomial_cases():
    rows = []
    ns = [1, 2, 5, 10, 20, 50, 100, 200, 400, 1000, 10_000, 100_000, 1_000_000, 10_000_000]
    ps = [0.5, 0.001, 0.01, 0.1, 0.3, 0.7, 0.99]
    for n in ns:
        for p in ps:
            mu = n * p
            sd = math.sqrt(n * p * (1 - p))
            ks = {0, 1, 2, n - 2, n - 1, n}
            for z in (-8, -3, -1, 0, 1, 3, 8):
                ks.add(int(math.floor(mu + z * sd)))
            for k in sorted(k for k in ks if 0 <= k <= n):
                rows.append({"k": k, "n": n, "p": p, "cdf": f(stats.binom.cdf(k, n, p)), "sf": f(stats.binom.sf(k - 1, n, p))})
    return rows


def mcnemar_cases():
    pairs = [
        (9, 1),
        (13, 6),
        (91, 64),
        (3, 3),
        (7, 5),
        (6, 2),
        (3, 4),
        (3, 2),
        (2, 2),
        (0, 0),
        (0, 1),
        (1, 0),
        (8, 13),
        (11, 15),
        (12, 6),
        (0, 71),
        (0, 20),
        (25, 0),
        (100, 130),
        (1000, 1100),
        (4990, 5010),
        (49_000, 51_000),
        (499_000, 501_000),
        (499_500, 500_500),
        (500_000, 500_000),
        (499_999, 500_001),
        (490_000, 510_000),
        (10, 999_990),
        (0, 1_000_000),
    ]
    rows = []
    for b, c in pairs:
        m = b + c
        if m == 0:
            rows.append({"b": b, "c": c, "twoSided": 1.0, "greater": 1.0, "less": 1.0})
            continue
        rows.append(
            {
                "b": b,
                "c": c,
                "twoSided": f(stats.binomtest(b, m, 0.5, alternative="two-sided").pvalue),
                "greater": f(stats.binomtest(b, m, 0.5, alternative="greater").pvalue),
                "less": f(stats.binomtest(b, m, 0.5, alternative="less").pvalue),
            }
        )
    return rows


AB = [
    (0.5, 0.5),
    (1, 1),
    (2.5, 7),
    (7, 2.5),
    (1, 30),
    (30, 1),
    (30, 300),
    (300, 30),
    (1000, 1000),
    (5, 1e4),
    (1e4, 5),
    (1e4, 2e4),
    (1e6, 1e6),
    (2, 1e6),
    (1e6 + 1, 5e5),
    (1e7, 1e7),
    (3, 1e7),
    (5e6, 1e7),
]


def beta_cases():
    rows = []
    for a, b in AB:
        mean = a / (a + b)
        sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        xs = {1e-12, 1e-6, 0.001, 0.5, 0.999, mean}
        for z in (-8, -3, -1, -0.25, 0.25, 1, 3, 8):
            xs.add(mean + z * sd)
        for x in sorted(x for x in xs if 0 < x < 1):
            rows.append({"x": x, "a": a, "b": b, "cdf": f(stats.beta.cdf(x, a, b)), "sf": f(stats.beta.sf(x, a, b))})
    return rows


def beta_inverse_cases():
    rows = []
    for a, b in AB:
        for p in (1e-12, 1e-6, 0.001, 0.025, 0.05, 0.3, 0.5, 0.95):
            rows.append({"p": p, "a": a, "b": b, "ppf": f(stats.beta.ppf(p, a, b)), "isf": f(stats.beta.isf(p, a, b))})
    return rows


def clopper_pearson_cases():
    rows = []
    ns = [1, 2, 5, 20, 72, 96, 172, 177, 178, 200, 202, 300, 400, 1000, 100_000, 1_000_000]
    for n in ns:
        xs = sorted({0, 1, 2, 3, n // 10, n // 2, n - 3, n - 1, n} & set(range(0, n + 1)))
        for x in xs:
            for alpha in (0.05, 0.025, 0.005, 1e-6, 1e-10):
                lower = 0.0 if x == 0 else f(stats.beta.ppf(alpha, x, n - x + 1))
                upper = 1.0 if x == n else f(stats.beta.isf(alpha, x + 1, n - x))
                rows.append({"x": x, "n": n, "alpha": alpha, "lower": lower, "upper": upper})
    return rows


def main():
    # binomtest's pmf underflows to 0 for (b, c) = (0, 1e6) and Boost warns; the p-values are unaffected.
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    data = {
        "meta": {
            "generator": "scripts/reference/stats_reference.py",
            "python": platform.python_version(),
            "scipy": scipy.__version__,
            "numpy": np.__version__,
            "conventions": {
                "binomial.sf": "P(X >= k) (= scipy binom.sf(k - 1))",
                "clopperPearson": "one-sided (1 - alpha) bounds: lower = beta.ppf(alpha, x, n-x+1), upper = beta.isf(alpha, x+1, n-x)",
                "mcnemar": "scipy.stats.binomtest(b, b+c, 0.5, alternative).pvalue; b+c = 0 -> 1 by convention",
            },
        },
        "binomial": binomial_cases(),
        "mcnemar": mcnemar_cases(),
        "beta": beta_cases(),
        "betaInverse": beta_inverse_cases(),
        "clopperPearson": clopper_pearson_cases(),
    }
    with open(OUT, "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=False)
        fh.write("\n")
    counts = {k: len(v) for k, v in data.items() if isinstance(v, list)}
    print(f"wrote {os.path.normpath(OUT)}: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
