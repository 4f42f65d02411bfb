/**
 * The calibration result (calibration.json, format imep-calibration v2): types only.
 * v2 added `campaignDesigns` (campaign-level designs through IMEP's verdict path; null when the suite has
 * none) and `checks.campaignVerdicts`; within v2, campaign designs gained `template`, `executionNoise`, `criteria`
 * and `replicateFloor`, and `checks.noisy` (null when no campaign design registers execution noise).
 */
import type { Mde, ExecutionNoise } from '../protocol/index.js';
import type { CriterionRate, PooledFloor } from './criterion-rates.js';
import type { NoisyChecks } from './noisy-checks.js';
import type { CampaignUnitResult } from './campaign-run.js';
import type { PairedTest } from '../stats/index.js';
import type { LadderReadout } from './ladder-readout.js';
import type { Agreement, RateWithInterval } from './operating-characteristics.js';

export interface CampaignResult extends LadderReadout {
  readonly band: number;
  /** First and last seed of the band. */
  readonly seeds: readonly [number, number];
  /** Units removed from S/T (fail closed). */
  readonly removed: number;
  /** Fact-conditioned designs: units whose latched index in A equals their fact (the injection table check). */
  readonly latchMatchesFact: number | null;
}

export interface DesignResult {
  readonly id: string;
  readonly checkpoint: string;
  readonly truth: 'fact-use' | 'none';
  readonly planted: { readonly mode: 'fact-conditioned' | 'unconditioned'; readonly delta: number } | null;
  readonly description: string | null;
  readonly campaigns: readonly CampaignResult[];
  readonly pooled: {
    readonly bOnlyT: number;
    readonly cOnlyS: number;
    readonly both: number;
    readonly n: number;
    readonly rhoS: number;
    readonly rhoT: number;
    readonly theta: number;
  };
  readonly simulationParameters: {
    readonly n: number;
    readonly pB: number;
    readonly pC: number;
    readonly rho: number;
    readonly theta: number;
    readonly source: string;
  };
  readonly real: RateWithInterval & { readonly kind: 'power' | 'false-positive-rate' };
  readonly simulated: RateWithInterval & {
    readonly kind: 'power' | 'false-positive-rate';
    readonly seed: number | string;
    readonly prng: string;
    readonly meanB: number;
    readonly meanC: number;
  };
  readonly predicted: {
    readonly power: number;
    readonly mcError: number;
    readonly replicates: number;
    readonly seed: number | string;
    readonly exactPower: number;
  };
  readonly agreementReal: Agreement;
  readonly agreementSimulated: Agreement;
}

/** One campaign-level unit (a seed band of a campaign design): its registered verdict and the frozen test on its counts. */
export interface CampaignBandResult extends CampaignUnitResult {
  readonly band: number;
  /** First and last seed of the band (the same seeds for every task of the template). */
  readonly seeds: readonly [number, number];
  /** The suite's frozen detection test (mde.inputs.test at α) on this unit's (b′, c′): what the stats-level model counts. */
  readonly test: { readonly p: number; readonly detected: boolean };
  /** Whether verdict 'holds' coincides with the frozen test detecting. */
  readonly verdictMatchesTest: boolean;
}

export interface CampaignDesignResult {
  readonly id: string;
  readonly checkpoint: string;
  readonly truth: 'fact-use' | 'none';
  readonly description: string | null;
  readonly campaigns: readonly CampaignBandResult[];
  readonly pooled: {
    readonly bOnlyT: number;
    readonly cOnlyS: number;
    readonly n: number;
    readonly removed: number;
    readonly theta: number;
  };
  /** How many campaigns got each verdict word of the registered criterion. */
  readonly verdicts: Readonly<Record<string, number>>;
  /** The template the design ran (campaigns.template or the design's own). */
  readonly template: string;
  /** The registered execution noise substituted into it; null for a noise-free design. */
  readonly executionNoise: ExecutionNoise | null;
  /** Every registered criterion of the template: how often it read 'holds' (false positives when truth is none). */
  readonly criteria: readonly CriterionRate[];
  /** The exact-repeat floor pooled over the campaigns (null when the template has no ρ against a kind-C condition). */
  readonly replicateFloor: PooledFloor | null;
  readonly simulationParameters: DesignResult['simulationParameters'];
  /** Detection = the registered verdict 'holds'. */
  readonly real: DesignResult['real'];
  readonly simulated: DesignResult['simulated'];
  readonly predicted: DesignResult['predicted'];
  readonly agreementReal: Agreement;
  readonly agreementSimulated: Agreement;
}

export interface CampaignDesignsResult {
  readonly template: {
    readonly file: string;
    readonly sha256: string;
    readonly criterion: {
      readonly id: string;
      readonly estimand: string;
      readonly rule: string;
      readonly method: string;
    };
  };
  readonly substituted: readonly string[];
  readonly operators: { readonly runner: string; readonly adjudicator: string };
  readonly lifecycle: string;
  /** Seeds per band (units per task); the registered value beside it. */
  readonly n: number;
  readonly registeredN: number;
  readonly campaignsPerDesign: number;
  readonly registeredCampaigns: number;
  readonly bandsStart: number;
  readonly note: string;
  readonly designs: readonly CampaignDesignResult[];
}

export interface FrozenRowCheck {
  readonly assumedDiscordance: number;
  readonly frozenEffect: number | null;
  readonly achievedPower: number;
  readonly simulated: RateWithInterval;
  readonly agreement: Agreement;
}

export interface CalibrationResult {
  readonly format: 'imep-calibration';
  readonly version: 2;
  readonly suite: { readonly id: string; readonly title: string; readonly file: string; readonly sha256: string };
  readonly checkpoints: readonly { readonly name: string; readonly path: string; readonly sha256: string }[];
  readonly design: {
    readonly quick: boolean;
    readonly n: number;
    readonly registeredN: number;
    readonly realCampaignsPerDesign: number;
    readonly simulatedCampaignsPerDesign: number;
    readonly test: PairedTest;
    readonly alpha: number;
    readonly env: string;
    readonly ladder: string;
  };
  readonly decoders: readonly {
    readonly checkpoint: string;
    readonly fitSeeds: readonly [number, number];
    readonly fitUnits: number;
    readonly fitCorrect: number;
    readonly centroids: readonly (readonly number[])[];
  }[];
  readonly frozenMde: {
    readonly inputs: Mde['inputs'];
    readonly outputs: Mde['outputs'];
    readonly rows: readonly FrozenRowCheck[];
  };
  readonly designs: readonly DesignResult[];
  readonly campaignDesigns: CampaignDesignsResult | null;
  readonly checks: {
    readonly falsePositive: {
      readonly limit: number;
      readonly rule: string;
      readonly designs: readonly {
        readonly id: string;
        readonly upper95: number;
        readonly campaigns: number;
        readonly passed: boolean;
      }[];
    };
    readonly power: {
      readonly minimum: number;
      readonly rule: string;
      readonly designs: readonly {
        readonly id: string;
        readonly real: number;
        readonly simulated: number;
        readonly passed: boolean;
      }[];
    };
    readonly agreement: {
      readonly zLimit: number;
      readonly compared: number;
      readonly agreeing: number;
      readonly passed: boolean;
    };
    /** Campaign-level designs: every registered verdict ('holds' or not) coincides with the frozen test on the unit's (b′, c′). */
    readonly campaignVerdicts: {
      readonly rule: string;
      readonly campaigns: number;
      readonly matching: number;
      readonly passed: boolean;
    };
    /** Noisy campaign designs (execution noise): every rule's false-positive rate and the positive control's power; null without any. */
    readonly noisy: NoisyChecks | null;
  };
}
