/**
 * src/campaign — the campaign runner (public face): protocol → plan → lockstep episodes through
 * the intervention hooks → deterministic rows in seq order → evidence unit. See campaign.ts for the
 * `imep campaign run` sequence, run-plan.ts for segments and resume, episode-loop.ts for the loop.
 */
export type { RunCampaignOptions, Through } from './campaign.js';
export type { CampaignOptions } from './campaign-setup.js';
export { inProcessLiteEnvs, openSimulators, simulatorKindOf } from './bridge-envs.js';
export type { SimulatorContext, SimulatorOptions, Simulators } from './bridge-envs.js';
export type { RunPlanInput, Segment } from './run-plan.js';
export { runSegmentLoop } from './episode-loop.js';
export type { LoopInput } from './episode-loop.js';
export { conditionPlan } from './condition-plan.js';
export type { ConditionPlan } from './condition-plan.js';
export type { DonorPlan } from './donors.js';
export { RowRecorder } from './row-recorder.js';
export { RowSink } from './row-sink.js';
export { FailureBudgetWatch } from './failure-budget.js';
export type { FinishedRow, RowTarget, TraceLine } from './row-sink.js';
export { ReadSummaryBuilder, emptyReadSummary } from './read-summary.js';
export { ActionDigest, EMPTY_ACTION_DIGEST } from './action-digest.js';
export { ProgressDisplay } from './progress.js';
export type { ProgressStream } from './progress.js';
export { RunStop } from './run-stop.js';
export { rateText, etaText, rateAndEta } from './rate-text.js';
export { assertHostedPolicyUnchanged, hostedPolicyDigest, remotePolicyProvider } from './remote-policy-provider.js';
export type { RemotePolicyContext, RemotePolicyProvider } from './remote-policy-provider.js';
export { parseShard, shardDir, shardFilter, openShard } from './shard.js';
export type { ShardSpec, ShardRecord, OpenShard } from './shard.js';
export { unitFolderName, unitDirFor } from './unit-dir.js';
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
export { ShardRecordSchema } from './shard.js';
export {
  policyRuntimeKinds,
  policyRuntimeKindOf,
  policyRuntimeOf,
  registerPolicyRuntimeKind,
  type MemoryAccess,
  type PolicyRuntimeContext,
  type PolicyRuntimeKind,
} from './policy-runtime-kind.js';
export { checkpointRuntime } from './checkpoint-runtime.js';
export { remoteRuntime } from './remote-runtime.js';
export { RemotePolicySchema, remotePolicyConfig, type RemotePolicyConfig } from './remote-policy-config.js';
export { serverRuntimeKind, type ServerRuntimeOptions } from './server-runtime.js';
export {
  assertPolicyServerUnchanged,
  policyServerDigest,
  policyServerKey,
  serverMetadataJson,
} from './server-policy-record.js';
export {
  DEFAULT_SERVER_DEADLINE_MS,
  SERVER_POLICY_FIELDS,
  SERVER_RUNTIMES,
  checkServerProtocol,
  serverPolicyConfig,
  type ServerPolicyConfig,
  type ServerRuntimeName,
} from './server-policy-config.js';
export { precommitCampaign, resumeCampaign, runCampaign } from './campaign.js';
export { smallRunCampaign } from './campaign-variants.js';
export { DEFAULT_BATCH, PACKAGE_ROOT, checkpointSource, precommitCheckInput, protocolRoots } from './campaign-setup.js';
export { runPrecommitChecks, PRECOMMIT_CHECKS } from './precommit-checks.js';
export { assemble, withAssembly, type Assembly } from './assemble.js';
