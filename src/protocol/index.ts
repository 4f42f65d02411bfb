/** Public face of protocols: schema, loading, cross-field checks, canonical JSON, hashes, plan. */
export { PROTOCOL_VERSION, PENDING_SHA256, ProtocolSchema } from './schema.js';
export { kindField, kindFieldInfo, type KindFieldInfo, type KindBlockOf } from './kind-field.js';
export type {
  Allowlists,
  BootstrapConfig,
  BoundMethod,
  Criterion,
  EnvEntry,
  Estimand,
  EstimandKind,
  ExecutionFailurePolicy,
  FailureBudget,
  Gate,
  GateKind,
  GoNoGo,
  HolmFamily,
  InstallPoint,
  Mde,
  MemoryConfig,
  Protocol,
  ProtocolCondition,
  ProtocolConditionKind,
  ProtocolInput,
  Seeds,
  Simulator,
  ValidityChecks,
  Wave,
} from './schema.js';
export { faceOf, hasRole, kindsWithRole } from './schema-conditions.js';
export { BOUND_METHODS } from './schema-analysis.js';
export { loadProtocol, loadProtocolSync, parseProtocol, type LoadedProtocol } from './load.js';
export { assertCrossChecked, crossCheck } from './cross-check.js';
export { ProtocolError, type LocatedIssue, type ProtocolIssue } from './issues.js';
export { canonicalBytes, canonicalHash, canonicalJson, canonicalNumber, type JsonValue } from '../core/index.js';
export { protocolHash } from './protocol-hash.js';
export { claimText, claimWords } from './claim-words.js';
export { CriterionSchema } from './schema-analysis.js';
export { protocolJsonSchema, protocolJsonSchemaText, PROTOCOL_SCHEMA_ID } from './json-schema.js';
export {
  buildPlan,
  episodeIdOf,
  episodesPerUnit,
  scopeIdOf,
  PLAN_VERSION,
  type Plan,
  type PlannedEpisode,
} from './plan.js';
export {
  assertPlanSize,
  describeEstimate,
  planEstimate,
  planRows,
  PLAN_ROWS_CONFIRM,
  PLAN_ROWS_MAX,
  type PlanEstimate,
} from './plan-size.js';
export { assertNoSeedOverlap, firstSeeds, seedCount, seedRanges, type RegisteredSeeds } from './seeds.js';
export { assertFreezable, checkpointFile, checkpointOf, verifyCheckpoint } from './checkpoint.js';
export {
  EXECUTION_NOISE_SCOPES,
  EXECUTION_NOISE_STREAM,
  ExecutionNoiseSchema,
  noisyAction,
  noiseStreamLabel,
  noiseStreamRecipe,
  type ExecutionNoise,
} from '../core/index.js';
export type { NoiseEpisode } from '../core/index.js';
export { MdeSchema } from './schema-analysis.js';
export { Kwargs, NonEmptyText, PositiveInt, Seed, SeedInt, Slug } from './schema-common.js';
export type { Frames } from './schema-frames.js';
export type { PolicyBlock } from './schema.js';
export { PolicyBlockSchema, MEMORY_CONSOLIDATION_MODES, HISTORY_PADS, MAX_HISTORY_WINDOW, memoryK } from './schema.js';

export {
  SHARD_RULE,
  arraySpec,
  checkShardCount,
  fromRanges,
  manifestHash,
  parseShard,
  planShards,
  planUnits,
  shardFilter,
  toRanges,
  type SeqRange,
  type ShardManifest,
  type ShardPlan,
  type ShardSpec,
  type ShardUnit,
} from './shard-plan.js';
export { envField, perTaskId, suiteFamilyId } from './suite-expand.js';
export { SuiteSchema } from './schema-suite.js';
