/**
 * src/cluster — SLURM sharding, submission and merge (public face). A precommitted unit is split by unit
 * (shard-plan.ts), run as one sbatch array (submit.ts → each task: shard-run.ts), watched (status.ts) and
 * merged into the unit's formal run, byte-identical to a single-process run, then sealed (merge.ts).
 */
export {
  SHARD_RULE,
  arraySpec,
  checkShardCount,
  fromRanges,
  manifestHash,
  planShards,
  planUnits,
  toRanges,
} from '../protocol/index.js';
export type { SeqRange, ShardManifest, ShardPlan, ShardUnit } from '../protocol/index.js';
export {
  CLUSTER_DIR,
  clusterPaths,
  scriptName,
  sessionFile,
  JobRecordSchema,
  MergeRecordSchema,
  ShardPlanRecordSchema,
} from './cluster-layout.js';
export type { ClusterPaths, JobRecord, MergeRecord, ShardPlanRecord } from './cluster-layout.js';
export { ensureShardPlan, openClusterUnit, readShardPlanRecord, shardPlanRecord } from './cluster-unit.js';
export type { ClusterUnit } from './cluster-unit.js';
export { checkPartition, checkTime, jobNameFor, sbatchScript, shellQuote } from './sbatch-script.js';
export type { SbatchInput } from './sbatch-script.js';
export { ACTIVE_STATES, Slurm, execCommand } from './slurm.js';
export type { CommandResult, CommandRunner, TaskState } from './slurm.js';
export { readJobs } from './jobs.js';
export { defaultLauncher } from './launcher.js';
export { assertShardable, formatPlan, planCluster, submitCluster } from './submit.js';
export type { PlanResult, SubmitOptions, SubmitResult } from './submit.js';
export { clusterStatus, formatClusterStatus, shardCountOf, SHARD_STATES } from './status.js';
export type { ClusterStatus, ShardState, ShardStatus } from './status.js';
export { MERGE_RUN_PREFIX, mergeCluster, mergeLines } from './merge.js';
export type { MergeOptions, MergeResult } from './merge.js';
export { runShardOfUnit, type ShardRunOptions, type ShardRunResult } from './shard-run.js';
