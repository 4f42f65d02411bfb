/** src/calibration — known-answer calibration of the A/S/T ladder (`imep calibrate`); see docs/calibration.md. */
export type { CalibrateOptions } from './calibrate.js';
export { bandSeeds, checkSuite, loadSuite, parseSuite } from './load-suite.js';
export type { LoadedSuite } from './load-suite.js';
export { SuiteSchema, SUITE_VERSION } from './suite-schema.js';
export type { CampaignDesign, Campaigns, Design, Suite, SuiteCheckpoint } from './suite-schema.js';
export { PlantedEffectPolicy } from './planted-effect-policy.js';
export type { Latch, PlantedEffectOptions, PlantedMode, WrappablePolicy } from './planted-effect-policy.js';
export { decodeFact, fitFactDecoder, summariseRead } from './fact-decoder.js';
export type { FactDecoderSpec, FitExample } from './fact-decoder.js';
export { runLadder } from './ladder-run.js';
export type { LadderInput, LadderPolicy, LadderRun, LadderTask, UnitOutcome } from './ladder-run.js';
export { detects, ladderCounts, ladderReadout } from './ladder-readout.js';
export type { LadderCounts, LadderOutcome, LadderReadout } from './ladder-readout.js';
export { simulateCampaigns } from './stats-simulation.js';
export type { SimulationInput, SimulationResult } from './stats-simulation.js';
export { agreement, rateWithInterval } from './operating-characteristics.js';
export type { Agreement, RateWithInterval } from './operating-characteristics.js';
export { powerCurveSpec } from './figure.js';
export type { WrittenCalibration } from './write-calibration.js';
export type {
  CalibrationResult,
  CampaignBandResult,
  CampaignDesignResult,
  CampaignDesignsResult,
  CampaignResult,
  DesignResult,
  FrozenRowCheck,
} from './result.js';
export type { CampaignDesignOptions } from './campaign-designs.js';
export { campaignBandSeeds, deriveProtocol, loadCampaignTemplate } from './campaign-protocol.js';
export type { CampaignTemplate, DerivedProtocol } from './campaign-protocol.js';
export type { CampaignUnitInput, CampaignUnitResult } from './campaign-run.js';
export { designRates } from './design-rates.js';
export type { DesignRates, RatesInput } from './design-rates.js';
export { noisyChecks, noisyLines } from './noisy-checks.js';
export { FPR_PASS_LEVEL, FPR_POWER, fprCheckSize, fprPassRule, fprRuleText } from './fpr-check-size.js';
export type { FprRule } from './fpr-check-size.js';
export type { NoisyChecks, NoisyFalsePositive, NoisyPower } from './noisy-checks.js';
export { criterionRates, pooledFloor } from './criterion-rates.js';
export type { CriterionRate, PooledFloor } from './criterion-rates.js';
