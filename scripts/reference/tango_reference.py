#!/usr/bin/python3
"""Independent reference values for src/stats/{normal,tango,newcombe}.ts.

Run with Debian's interpreter and packages (python3-scipy, python3-numpy):

    /usr/bin/python3 scripts/reference/tango_reference.py

Writes test/stats/fixtures/{tango,newcombe,normal}-reference.json. The TypeScript suites compare to
these to 1e-6 (Tango, Newcombe) and 1e-14 (normal).

Independence from the TypeScript code:
- Tango: the restricted MLE of p21 under Delta = delta is found numerically (brentq on the derivative of
  the restricted log-likelihood), not from Tango's closed-form quadratic root. The interval endpoints are
  the outermost points of {delta : |T(delta)| <= z}, located by a dense grid scan over [-1, 1] and refined
  by brentq, without assuming that T is monotone (the scan also checks that the accepted set is an
  interval).
- Newcombe: each Wilson limit is a root of the score equation (x - n p)^2 = z^2 n p (1 - p), bracketed on
  either side of x/n and solved by brentq, not the closed-form centre/half-width.
- Normal: 80-digit decimal arithmetic (Taylor series / Mills-ratio continued fraction, Newton for the
  quantile); scipy's ndtr / ndtri are recorded beside it for comparison only (ndtr rounds x/sqrt(2) and
  loses ~x^2 * 2^-53 relative accuracy in the far tail).
"""

import json
import math
import os
from decimal import Decimal, getcontext

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "test", "stats", "fixtures")


def z_two_sided(level):
    return float(ndtri(1.0 - (1.0 - level) / 2.0))


# ---------------------------------------------------------------- Tango ----


def restricted_p21(b, c, n, delta):
    """argmax over q of b log(q + delta) + c log q + (n - b - c) log(1 - 2q - delta)."""
    lo = max(0.0, -delta)
    hi = (1.0 - delta) / 2.0
    if hi - lo <= 0.0:
        return lo
    rest = n - b - c

    def score(q):
        s = 0.0
        if b:
            s += b / (q + delta) if q + delta > 0.0 else math.inf
        if c:
            s += c / q if q > 0.0 else math.inf
        if rest:
            s -= 2.0 * rest / (1.0 - 2.0 * q - delta) if 1.0 - 2.0 * q - delta > 0.0 else math.inf
        return s

    width = hi - lo
    eps = width * 1e-13
    a_, b_ = lo + eps, hi - eps
    if score(a_) <= 0.0:
        return lo
    if score(b_) >= 0.0:
        return hi
    return brentq(score, a_, b_, xtol=1e-17, rtol=4 * np.finfo(float).eps, maxiter=500)


def tango_t(b, c, n, delta):
    q = restricted_p21(b, c, n, delta)
    var = n * max(0.0, 2.0 * q + delta * (1.0 - delta))
    num = b - c - n * delta
    if var <= 0.0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def tango_interval(b, c, n, level, grid=4001):
    z = z_two_sided(level)

    def h(d):
        return abs(tango_t(b, c, n, d)) - z

    ds = np.linspace(-1.0, 1.0, grid)
    ds = np.unique(np.append(ds, (b - c) / n))
    acc = np.array([h(d) <= 0.0 for d in ds])
    idx = np.nonzero(acc)[0]
    if len(idx) == 0:
        raise RuntimeError("empty acceptance set")
    if not np.all(acc[idx[0] : idx[-1] + 1]):
        raise RuntimeError(f"acceptance set not an interval for {(b, c, n, level)}")
    i, j = idx[0], idx[-1]
    lower = -1.0 if i == 0 else brentq(h, ds[i - 1], ds[i], xtol=1e-16, rtol=4 * np.finfo(float).eps)
    upper = 1.0 if j == len(ds) - 1 else brentq(h, ds[j], ds[j + 1], xtol=1e-16, rtol=4 * np.finfo(float).eps)
    return lower, upper


def tango_cases():
    cases = [
        (2, 2, 200, 0.95),
        (64, 91, 690, 0.90),
        (64, 91, 690, 0.95),
        (91, 64, 690, 0.90),
        (91, 64, 690, 0.95),
        (6, 16, 161, 0.95),
        (0, 0, 200, 0.95),
        (0, 0, 1, 0.95),
        (0, 0, 10, 0.90),
        (5, 0, 5, 0.95),
        (0, 5, 5, 0.95),
        (1, 0, 1, 0.95),
        (0, 1, 1, 0.95),
        (10, 0, 10, 0.99),
        (3, 3, 200, 0.95),
        (9, 1, 200, 0.95),
        (13, 6, 72, 0.95),
        (145, 0, 200, 0.95),
        (5, 6, 200, 0.95),
        (68, 66, 690, 0.90),
        (71, 0, 202, 0.95),
        (3, 92, 143, 0.95),
        (0, 3, 10, 0.95),
        (7, 2, 9, 0.80),
        (1, 1, 2, 0.95),
        (0, 1, 2, 0.50),
        (12, 9, 196, 0.95),
    ]
    rng = np.random.default_rng(20240601)
    levels = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999]
    for _ in range(60):
        n = int(rng.integers(1, 800))
        b = int(rng.integers(0, n + 1))
        c = int(rng.integers(0, n - b + 1))
        cases.append((b, c, n, levels[int(rng.integers(0, len(levels)))]))
    out = []
    for b, c, n, level in cases:
        lo, hi = tango_interval(b, c, n, level)
        out.append(
            {
                "b": b,
                "c": c,
                "n": n,
                "level": level,
                "lower": lo,
                "upper": hi,
                "statisticAtZero": tango_t(b, c, n, 0.0),
                "p21AtZero": restricted_p21(b, c, n, 0.0),
            }
        )
    return out


# ------------------------------------------------------------- Newcombe ----


def wilson_roots(x, n, z):
    """Roots of f(p) = (x - n p)^2 - z^2 n p (1 - p), bracketed on each side of x/n and found by brentq."""

    def f(p):
        return (x - n * p) ** 2 - z * z * n * p * (1 - p)

    ph = x / n
    if x == 0:
        ph = 1e-300  # f(0) = 0 is the trivial root; the upper limit is the other sign change
    elif x == n:
        ph = 1.0 - 2.0**-53
    tol = dict(xtol=1e-17, rtol=4 * np.finfo(float).eps, maxiter=500)
    lo = 0.0 if x == 0 else brentq(f, 0.0, ph, **tol)
    hi = 1.0 if x == n else brentq(f, ph, 1.0, **tol)
    return lo, hi


def newcombe(a, b, c, d, level, corrected):
    n = a + b + c + d
    z = z_two_sided(level)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_roots(a + b, n, z)
    l2, u2 = wilson_roots(a + c, n, z)
    margins = [a + b, c + d, a + c, b + d]
    if min(margins) == 0:
        phi = 0.0
    else:
        denom = math.sqrt(float(np.prod(np.array(margins, dtype=float))))
        cross = a * d - b * c
        if corrected:
            num = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
        else:
            num = cross
        phi = num / denom
    est = p1 - p2
    dl = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    du = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return est - dl, est + du, phi


def newcombe_cases():
    cases = [
        (59, 6, 16, 80, 0.95),
        (1, 1, 7, 12, 0.95),
        (36, 12, 2, 0, 0.95),
        (181, 2, 2, 15, 0.95),
        (0, 0, 0, 10, 0.95),
        (10, 0, 0, 0, 0.95),
        (0, 5, 0, 0, 0.95),
        (0, 0, 5, 0, 0.90),
        (3, 0, 0, 3, 0.95),
        (5, 3, 3, 5, 0.99),
        (0, 2, 3, 0, 0.95),
    ]
    rng = np.random.default_rng(19980417)
    levels = [0.8, 0.9, 0.95, 0.99]
    for _ in range(40):
        cells = rng.multinomial(int(rng.integers(1, 400)), rng.dirichlet([1, 1, 1, 1]))
        cases.append((*map(int, cells), levels[int(rng.integers(0, len(levels)))]))
    out = []
    for a, b, c, d, level in cases:
        for corrected in (True, False):
            lo, hi, phi = newcombe(a, b, c, d, level, corrected)
            out.append(
                {
                    "a": a,
                    "b": b,
                    "c": c,
                    "d": d,
                    "level": level,
                    "phi": "corrected" if corrected else "plain",
                    "lower": lo,
                    "upper": hi,
                    "phiValue": phi,
                }
            )
    return out


# --------------------------------------------------------------- normal ----

getcontext().prec = 80
D_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")


def d_pdf(x):
    return (-(x * x) / 2).exp() / (2 * D_PI).sqrt()


def d_cdf(x):
    """Phi(x) in 80-digit decimal: Taylor series for |x| < 3, Mills-ratio continued fraction beyond."""
    if x == 0:
        return Decimal("0.5")
    if abs(x) < 3:
        term, total, k = x, x, 0
        while True:
            k += 1
            term = term * x * x / (2 * k + 1)
            total += term
            if abs(term) < Decimal(10) ** -90:
                break
        return Decimal("0.5") + d_pdf(x) * total
    t = abs(x)
    frac = t
    for k in range(2000, 0, -1):  # R(t) = 1/(t + 1/(t + 2/(t + 3/(t + ...))))
        frac = t + k / frac
    tail = d_pdf(t) / frac
    return tail if x < 0 else 1 - tail


def d_quantile(p):
    x = Decimal(float(ndtri(p)))
    pd = Decimal(p)
    for _ in range(4):
        x -= (d_cdf(x) - pd) / d_pdf(x)
    return x


def normal_cases():
    xs = [
        -38.0,
        -37.5,
        -30.0,
        -20.0,
        -10.0,
        -8.0,
        -6.0,
        -5.0,
        -3.0,
        -2.5,
        -1.96,
        -1.5,
        -1.25,
        -1.0,
        -0.84375,
        -0.5,
        -0.25,
        -1e-10,
        0.0,
        1e-10,
        0.1,
        0.3,
        0.5,
        0.9,
        1.0,
        1.2,
        1.3,
        1.6448536269514722,
        1.959963984540054,
        2.0,
        2.8,
        3.0,
        4.0,
        6.0,
        8.0,
        10.0,
        20.0,
        30.0,
    ]
    ps = [
        1e-300,
        1e-100,
        1e-20,
        1e-10,
        1e-5,
        0.001,
        0.0125,
        0.025,
        0.05,
        0.075,
        0.1,
        0.2,
        0.3,
        0.5,
        0.6,
        0.7,
        0.9,
        0.925,
        0.95,
        0.975,
        0.99,
        0.999,
        1 - 1e-10,
    ]
    cdf = []
    for x in xs:
        c = d_cdf(Decimal(x))
        cdf.append({"x": x, "cdf": float(c), "sf": float(d_cdf(-Decimal(x))), "scipyCdf": float(ndtr(x))})
    return {"cdf": cdf, "quantile": [{"p": p, "x": float(d_quantile(p)), "scipy": float(ndtri(p))} for p in ps]}


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {"generator": "scripts/reference/tango_reference.py", "numpy": np.__version__, "scipy": __import__("scipy").__version__}
    for name, payload in (("tango", tango_cases()), ("newcombe", newcombe_cases()), ("normal", normal_cases())):
        path = os.path.join(OUT, f"{name}-reference.json")
        with open(path, "w") as f:
            json.dump({"meta": meta, "cases": payload}, f, indent=1)
            f.write("\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
