/** ChainBench: chain manifests, decision readouts, the decision ladder, replay with constructive pairing. */
export { canonicalJson, canonicalPrettyJson, canonicalHash as canonicalSha256 } from '../core/index.js';
export {
  CHAIN_MANIFEST_FORMAT,
  CHAIN_MANIFEST_VERSION,
  ChainManifestSchema,
  chainManifestJsonSchema,
  type Chain,
  type ChainManifest,
  type Episode,
  type Fact,
  type FeatureSpec,
} from './manifest-schema.js';
export {
  validateManifest,
  validateChainStructure,
  validateChainQuery,
  type ValidateOptions,
} from './manifest-validate.js';
export {
  LITE_MAX_K,
  LITE_OBJECT_NAMES,
  LiteQueryObserver,
  type QueryObserver,
  type QueryProbe,
} from './query-frame.js';
export {
  chainHash,
  freezeManifest,
  loadManifest,
  manifestHash,
  parseManifest,
  parseManifestData,
  writeManifest,
  type FrozenManifest,
} from './manifest-io.js';
export { generateChainManifest, type GenerateOptions } from './generator.js';
export { diffManifests, type ManifestDiff, type ChainChange } from './manifest-diff.js';
export { EventEmbedder, DEFAULT_FEATURES } from './embeddings.js';
export { buildChainRecords, chainMemory, type ChainEvent, type ChainRecordSet, type MemorySet } from './records.js';
export { LooCentroids, centroidDigest } from './centroids.js';
export {
  fallbackChoice,
  nearestCentroid,
  selectDecidingRecord,
  FALLBACK_MODES,
  type FallbackMode,
  type Selection,
} from './readout.js';
export {
  DECISION_CONDITIONS,
  centroidsOf,
  decisionConditions,
  shuffledRecords,
  type ConditionDecisions,
  type ConditionFn,
  type ConditionSpec,
  type Decision,
  type DecisionCondition,
} from './conditions.js';
export { LADDER_CONDITIONS, runDecisionLadder, type LadderResult, type LadderRow } from './ladder.js';
export {
  decideAll,
  parseDecisionTable,
  decisionTableText,
  DecisionTableSchema,
  type DecisionTable,
} from './decisions.js';
export {
  LiteChainExecutor,
  SimEnvironmentChainExecutor,
  type ChainExecutor,
  type ExecutionOutcome,
  type ExecutionRun,
  type ExecutorIdentity,
} from './executor.js';
export type { BridgeExecutorOptions } from './bridge-executor.js';
export {
  replayDecisions,
  planReplay,
  executionKey,
  REPLAY_FLOOR_CONDITION,
  type ReplayResult,
  type ReplayRow,
  type ReplayConditionInput,
  type ReplayPlan,
  type ChainReplay,
} from './replay.js';
export type { BuiltUnit, SealedUnitRead } from './unit-io.js';
export type { DecisionRow, DecisionUnitRead, WrittenDecisionUnit } from './decision-unit.js';
export type { PairingProof, ReplayUnitRead, ReplayUnitRow, WrittenReplayUnit } from './replay-unit.js';
export { summarizeDecisions, summarizeReplay, type DecisionSummary, type ReplaySummary } from './results.js';
export { identifiersOf, randomRenaming, renameManifest, renameRecords } from './renaming.js';
export { auditLabelEquivariance, type AuditedReadout, type EquivarianceAudit } from './equivariance.js';
