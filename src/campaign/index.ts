/**
 * src/campaign/runner — the campaign runner (public face): protocol → plan → lockstep episodes through
 * the intervention hooks → deterministic rows in seq order → evidence unit. See campaign.ts for the
 * `imep campaign run` sequence, run-plan.ts for segments and resume, episode-loop.ts for the loop.
 */
export { precommitCampaign, resumeCampaign, runCampaign } from './campaign.js';
export type { RunCampaignOptions, Through } from './campaign.js';
export { DEFAULT_BATCH, PACKAGE_ROOT, checkpointRoot } from './campaign-setup.js';
export type { CampaignOptions } from './campaign-setup.js';
export { withSimulators } from './campaign-setup.js';
export { inProcessLiteEnvs, openSimulators, SIM_BRIDGE_ADAPTERS } from './bridge-envs.js';
export type { SimulatorContext, SimulatorOptions, Simulators } from './bridge-envs.js';
export { smallPlan, smallRunCampaign } from './campaign-variants.js';
export { checkCondition, checkFacts, checkRuntime, noFactError, preflightPlan, runPlan, segmentsOf, taskContext, taskEntries } from './run-plan.js';
export type { RunPlanInput, Segment } from './run-plan.js';
export { runSegmentLoop } from './episode-loop.js';
export type { LoopInput } from './episode-loop.js';
export { conditionPlan } from './condition-plan.js';
export type { ConditionPlan } from './condition-plan.js';
export { prepareDonors } from './donors.js';
export type { DonorPlan } from './donors.js';
export { RowRecorder } from './row-recorder.js';
export { RowSink } from './row-sink.js';
export type { FinishedRow, RowTarget, TraceLine } from './row-sink.js';
export { ReadSummaryBuilder, emptyReadSummary } from './read-summary.js';
export { ActionDigest, EMPTY_ACTION_DIGEST } from './action-digest.js';
export { ProgressDisplay } from './progress.js';
export type { ProgressStream } from './progress.js';
export { assertCheckpointServes, checkpointPolicyProvider } from './checkpoint-policy.js';
export { assertHostedPolicyUnchanged, hostedPolicyDigest, remotePolicyProvider } from './remote-policy-provider.js';
export type { RemotePolicyContext, RemotePolicyProvider } from './remote-policy-provider.js';
export { parseShard, shardDir, shardFilter, openShard } from './shard.js';
export type { ShardSpec, ShardRecord, OpenShard } from './shard.js';
export { unitFolderName, unitDirFor } from './unit-dir.js';
export { adjudicateStep, closeoutStep, crossCheckStep, reportStep, defaultReportDir, sameOperatorOverride } from '../app/pipeline.js';
export type {
  EnvProvider,
  EpisodeClock,
  EpisodeEnd,
  FailureInfo,
  PolicyProvider,
  RunnerPolicy,
  RunnerSubscriber,
  SegmentInfo,
  SlotMemory,
  TaskContext,
  TaskEntry,
  SpecSource,
  UnitJob,
  UnitOutcome,
} from './types.js';
