/**
 * The size of a real-campaign false-positive check, by exact binomial computation (no normal approximation):
 * B campaigns of a design whose truth is "none", x of them 'holds'; the check passes iff x ≤ k.
 *
 *   fprPassRule(α, B)   k = the smallest count with P(Bin(B, α) ≤ k) ≥ passLevel (0.95): a rule whose true
 *                       false-positive rate is α (or less) passes with probability ≥ passLevel; its operating
 *                       characteristic at 2α, P(Bin(B, 2α) > k), is the probability that a rule with twice its
 *                       stated rate fails.
 *   fprCheckSize(α)     the smallest B whose rule fails a rule at 2α with probability ≥ power (0.9). α = 0.05:
 *                       B = 233, pass iff x ≤ 17 (P(pass | α) = 0.9539, P(fail | 2α) = 0.9011).
 * At B = 20 (the previous registration) the rule is x ≤ 3 and fails a rule at 2α with probability 0.133 only.
 * Pure; the binomial tails come from src/stats (incomplete beta, exact to ~1e-14).
 */
import { ImepError } from '../core/index.js';
import { binomialCdf } from '../stats/index.js';

export interface FprRule {
  /** Campaigns. */
  readonly campaigns: number;
  /** The stated false-positive rate α. */
  readonly alpha: number;
  /** Pass iff the count of 'holds' is ≤ maxFalsePositives. */
  readonly maxFalsePositives: number;
  /** P(pass | true rate α) = P(Bin(B, α) ≤ k). */
  readonly passAtAlpha: number;
  /** P(fail | true rate 2α) = P(Bin(B, 2α) > k). */
  readonly failAtTwiceAlpha: number;
}

export const FPR_PASS_LEVEL = 0.95;
export const FPR_POWER = 0.9;
const MAX_CAMPAIGNS = 100_000;

function checkAlpha(alpha: number): void {
  if (!(alpha > 0 && alpha < 0.5))
    throw new ImepError('E_STATS_DOMAIN', `α must lie in (0, 0.5) for a false-positive check, got ${alpha}`, {
      field: 'alpha',
    });
}

/** The pass rule of a check over `campaigns` campaigns at stated rate α (module comment). */
export function fprPassRule(alpha: number, campaigns: number, passLevel = FPR_PASS_LEVEL): FprRule {
  checkAlpha(alpha);
  if (!Number.isSafeInteger(campaigns) || campaigns < 1)
    throw new ImepError('E_STATS_DOMAIN', `campaigns must be an integer ≥ 1, got ${campaigns}`, { field: 'campaigns' });
  let k = 0;
  while (k < campaigns && binomialCdf(k, campaigns, alpha) < passLevel) k++;
  return {
    campaigns,
    alpha,
    maxFalsePositives: k,
    passAtAlpha: binomialCdf(k, campaigns, alpha),
    failAtTwiceAlpha: 1 - binomialCdf(k, campaigns, 2 * alpha),
  };
}

/** The smallest B (and its rule) that fails a rule at 2α with probability ≥ power and passes one at α with ≥ passLevel. */
export function fprCheckSize(alpha: number, power = FPR_POWER, passLevel = FPR_PASS_LEVEL): FprRule {
  checkAlpha(alpha);
  for (let b = 1; b <= MAX_CAMPAIGNS; b++) {
    const r = fprPassRule(alpha, b, passLevel);
    if (r.failAtTwiceAlpha >= power) return r;
  }
  throw new ImepError(
    'E_STATS_DOMAIN',
    `no check of ≤ ${MAX_CAMPAIGNS} campaigns reaches power ${power} at α = ${alpha}`,
    {
      field: 'alpha',
    },
  );
}

/** The operating characteristic in words, e.g. "B = 233, pass iff ≤ 17 false positives: P(pass | FPR = 0.05) = 95.39%, P(fail | FPR = 0.1) = 90.11%". */
export function fprRuleText(r: FprRule): string {
  const p = (x: number): string => `${(100 * x).toFixed(2)}%`;
  return `B = ${r.campaigns}, pass iff ≤ ${r.maxFalsePositives} false positives: P(pass | FPR = ${r.alpha}) = ${p(r.passAtAlpha)}, P(fail | FPR = ${Number((2 * r.alpha).toPrecision(12))}) = ${p(r.failAtTwiceAlpha)}`;
}
