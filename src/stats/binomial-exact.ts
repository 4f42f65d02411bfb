/**
 * Exact-rational binomial tails (BigInt), an independent reference implementation for small n.
 *
 * Definition. A double p is converted exactly to num/2^e; then
 *   P(X ≤ k) = Σ_{j≤k} C(n, j) num^j (den − num)^{n−j} / den^n   (and P(X ≥ k) likewise)
 * is summed in exact integer arithmetic and rounded once to the nearest double (error < 1 ulp).
 * Nothing here shares code with ./binomial.ts or ./special-functions.ts; cost grows like n² bits,
 * so it is meant for n up to a few hundred (tests), not for production use.
 *
 * Edges: k < 0 → P(X ≤ k) = 0, P(X ≥ k) = 1; k > n → P(X ≤ k) = 1, P(X ≥ k) = 0; p ∈ {0, 1} exact.
 * Bad arguments throw E_STATS_DOMAIN. Pure, no I/O.
 */
import { domainError } from '../core/index.js';

export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

/** The exact value of a finite double in [0, 1] as num/den with den a power of two. */
export function doubleToRational(p: number): Rational {
  if (!(p >= 0 && p <= 1)) domainError('p', `p must lie in [0, 1], got ${p}`);
  let x = p;
  let den = 1n;
  while (!Number.isInteger(x)) {
    x *= 2; // exact: doubling never rounds below 2^1023
    den *= 2n;
  }
  return { num: BigInt(x), den };
}

function bitLength(v: bigint): number {
  return v === 0n ? 0 : v.toString(2).length;
}

/** num/den rounded to a double (relative error < 2^-53 + 2^-64). */
export function rationalToNumber(r: Rational): number {
  const { num, den } = r;
  if (den <= 0n) domainError('den', 'denominator must be positive');
  if (num === 0n) return 0;
  const neg = num < 0n;
  const a = neg ? -num : num;
  const shift = bitLength(den) - bitLength(a) + 66; // quotient keeps ≥ 65 significant bits
  const q = shift >= 0 ? (a << BigInt(shift)) / den : a / (den << BigInt(-shift));
  let value = Number(q);
  let s = shift;
  while (s > 1000) {
    value *= 2 ** -1000;
    s -= 1000;
  }
  while (s < -1000) {
    value *= 2 ** 1000;
    s += 1000;
  }
  value *= 2 ** -s;
  return neg ? -value : value;
}

/** Exact P(X ≤ k) ('lower') or P(X ≥ k) ('upper') for X ~ Bin(n, p), as a rational. */
export function exactBinomialTail(k: number, n: number, p: number, tail: 'lower' | 'upper'): Rational {
  if (!Number.isSafeInteger(n) || n < 0) domainError('n', `n must be an integer ≥ 0, got ${n}`);
  if (!Number.isSafeInteger(k)) domainError('k', `k must be an integer, got ${k}`);
  const { num, den } = doubleToRational(p);
  const rest = den - num;
  const lo = tail === 'lower' ? 0 : Math.max(k, 0);
  const hi = tail === 'lower' ? Math.min(k, n) : n;
  const total = den ** BigInt(n);
  if (lo > hi) return { num: 0n, den: total };
  let choose = 1n; // C(n, j), built up from j = 0
  let acc = 0n;
  for (let j = 0; j <= hi; j++) {
    if (j > 0) choose = (choose * BigInt(n - j + 1)) / BigInt(j);
    if (j >= lo) acc += choose * num ** BigInt(j) * rest ** BigInt(n - j);
  }
  return { num: acc, den: total };
}

/** Exact binomial tail rounded once to a double. */
export function exactBinomialTailNumber(k: number, n: number, p: number, tail: 'lower' | 'upper'): number {
  return rationalToNumber(exactBinomialTail(k, n, p, tail));
}
