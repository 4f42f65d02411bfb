/**
 * Per campaign design: how often EVERY registered criterion of its template read 'holds' over the design's real
 * IMEP campaigns (with the exact Clopper–Pearson interval of that rate), and the pooled exact-repeat floor (the
 * C-vs-A outcome changes the units' adjudications counted). On a design whose truth is "none" every 'holds' is a
 * false positive. Pure.
 */
import type { CampaignTemplate } from './campaign-protocol.js';
import { rateWithInterval, type RateWithInterval } from './operating-characteristics.js';
import type { CampaignBandResult } from './result.js';

export interface CriterionRate extends RateWithInterval {
  readonly criterion: string;
  readonly rule: string;
  readonly estimand: string;
  /** The criterion's registered α (alphaPerComponent), when it has one. */
  readonly alpha: number | null;
  /** How many campaigns got each verdict word. */
  readonly verdicts: Readonly<Record<string, number>>;
}

export interface PooledFloor {
  readonly estimand: string;
  /** Summed over the campaigns: A succeeds and C fails (b), the reverse (c), paired units (n). */
  readonly b: number;
  readonly c: number;
  readonly n: number;
  /** Campaigns whose replicate changed at least one outcome. */
  readonly campaignsWithChanges: number;
  /** The largest per-campaign upper bound on ρ_C (the floor a criterion with aboveUpperBoundOf must clear). */
  readonly maxUpper: number | null;
}

export function criterionRates(template: CampaignTemplate, campaigns: readonly CampaignBandResult[]): CriterionRate[] {
  return template.protocol.criteria.map((k) => {
    const verdicts: Record<string, number> = {};
    for (const c of campaigns) {
      const word = c.criteria[k.id] ?? 'missing';
      verdicts[word] = (verdicts[word] ?? 0) + 1;
    }
    const alpha =
      'alphaPerComponent' in k && typeof k.alphaPerComponent === 'number'
        ? k.alphaPerComponent
        : 'alpha' in k && typeof k.alpha === 'number'
          ? k.alpha
          : null;
    return {
      criterion: k.id,
      rule: k.rule,
      estimand: k.estimand,
      alpha,
      verdicts,
      ...rateWithInterval(verdicts['holds'] ?? 0, campaigns.length),
    };
  });
}

export function pooledFloor(campaigns: readonly CampaignBandResult[]): PooledFloor | null {
  const floors = campaigns.map((c) => c.replicateFloor).filter((f) => f !== null);
  const first = floors[0];
  if (first === undefined) return null;
  const uppers = floors.map((f) => f.upper).filter((u) => u !== null);
  return {
    estimand: first.estimand,
    b: floors.reduce((s, f) => s + f.b, 0),
    c: floors.reduce((s, f) => s + f.c, 0),
    n: floors.reduce((s, f) => s + f.n, 0),
    campaignsWithChanges: floors.filter((f) => f.b + f.c > 0).length,
    maxUpper: uppers.length === 0 ? null : Math.max(...uppers),
  };
}
