/**
 * Binomial distribution tails and mass, X ~ Bin(n, p), exact in the mathematical sense: no normal or
 * Poisson approximation anywhere.
 *
 * Definitions (the incomplete-beta identities, evaluated by ./special-functions.ts):
 * - binomialCdf(k, n, p) = P(X ≤ k) = 1 − I_p(k+1, n−k) = I_{1−p}(n−k, k+1), for 0 ≤ k < n;
 * - binomialSf(k, n, p)  = P(X ≥ k) = I_p(k, n−k+1), for 1 ≤ k ≤ n (note: ≥, not >);
 * - logBinomialCdf / logBinomialSf: the same in natural-log space, never underflowing;
 * - binomialPmf / logBinomialPmf: C(n, k) p^k (1−p)^{n−k}, in Loader's saddle-point form.
 * Whichever tail is requested is computed directly (not as 1 − the other), so a tail of 1e-300 keeps
 * its relative precision: error ≤ 2ε·(|ln P| + 30), i.e. ≈1e-14 for P ≥ 1e-20 and ≈1e-13 at 1e-300, for
 * n up to 1e7 (log space costs ε per unit of |ln P|). The end masses p^n and (1 − p)^n use pow.
 *
 * Edges: k < 0 → cdf 0, sf 1; k ≥ n → cdf 1; k > n → sf 0; n = 0 → X = 0; p = 0 → X = 0; p = 1 → X = n.
 * k must be an integer (any sign); n an integer ≥ 0 (≤ 2^53); p in [0, 1]. Violations throw
 * E_STATS_DOMAIN naming the argument. Pure, no I/O.
 */
import { domainError } from '../core/index.js';
import { betaLogTails, logBinomialKernel } from './special-functions.js';

function checkArgs(k: number, n: number, p: number): void {
  if (!Number.isSafeInteger(n) || n < 0) domainError('n', `n must be an integer ≥ 0, got ${n}`);
  if (!Number.isInteger(k)) domainError('k', `k must be an integer, got ${k}`);
  if (!(p >= 0 && p <= 1)) domainError('p', `p must lie in [0, 1], got ${p}`);
}

/** ln P(X ≤ k). */
export function logBinomialCdf(k: number, n: number, p: number): number {
  checkArgs(k, n, p);
  if (k < 0) return -Infinity;
  if (k >= n) return 0;
  if (p === 0) return 0;
  if (p === 1) return -Infinity;
  // P(X ≤ k) = 1 − I_p(k+1, n−k): the upper tail of I at x = p.
  return betaLogTails(p, 1 - p, k + 1, n - k).upper;
}

/** ln P(X ≥ k). */
export function logBinomialSf(k: number, n: number, p: number): number {
  checkArgs(k, n, p);
  if (k <= 0) return 0;
  if (k > n) return -Infinity;
  if (p === 0) return -Infinity;
  if (p === 1) return 0;
  // P(X ≥ k) = I_p(k, n−k+1): the lower tail of I at x = p.
  return betaLogTails(p, 1 - p, k, n - k + 1).lower;
}

/** (1 − p)^n, through pow when 1 − p is exact (p ≥ ½), else through log1p. */
function complementPower(n: number, p: number): number {
  return p >= 0.5 ? Math.pow(1 - p, n) : Math.exp(n * Math.log1p(-p));
}

/** P(X ≤ k) for X ~ Bin(n, p). */
export function binomialCdf(k: number, n: number, p: number): number {
  const l = logBinomialCdf(k, n, p);
  return k === 0 && n > 0 ? complementPower(n, p) : Math.exp(l);
}

/** P(X ≥ k) for X ~ Bin(n, p). */
export function binomialSf(k: number, n: number, p: number): number {
  const l = logBinomialSf(k, n, p);
  return k === n && n > 0 ? Math.pow(p, n) : Math.exp(l);
}

/** ln P(X = k). */
export function logBinomialPmf(k: number, n: number, p: number): number {
  checkArgs(k, n, p);
  if (k < 0 || k > n) return -Infinity;
  if (p === 0) return k === 0 ? 0 : -Infinity;
  if (p === 1) return k === n ? 0 : -Infinity;
  if (k === 0) return n * Math.log1p(-p);
  if (k === n) return n * Math.log(p);
  return logBinomialKernel(k, n - k, p, 1 - p);
}

/** P(X = k) for X ~ Bin(n, p). */
export function binomialPmf(k: number, n: number, p: number): number {
  const l = logBinomialPmf(k, n, p);
  if (n > 0 && k === 0) return complementPower(n, p);
  if (n > 0 && k === n) return Math.pow(p, n);
  return Math.exp(l);
}
