/**
 * Where the cluster layer keeps things. The unit's own `cluster/` folder is INSIDE the unit, so the seal
 * binds it; everything a running SLURM task writes goes APART from the unit, next to the runner's shard
 * folders, so that nothing can append to a file of the unit after it is sealed:
 *
 * ```
 * <unit>/cluster/
 *   shards.json                 the shard plan (shard-plan.ts): rule, N, every shard's units, seq ranges
 *                               and manifest hash, self-hashed; written atomically by plan/submit
 *   submit-NNN.sbatch           the array script of submission NNN (001, 002, …), exactly as submitted
 *   jobs.jsonl                  one line per submission: job id, shards, script + its SHA-256, who, when
 *   logs/, sessions/            copies, taken by the merge just before the seal, of the scratch ones below
 *   merge.json                  the merge: each shard's manifest hash, row count, rows-file SHA-256 and operators
 * <unit>.shards/                scratch, written by the tasks (never sealed)
 *   shard-I-of-N/               the runner's shard folder: shard.json, rows.jsonl, timings.jsonl, traces/
 *                               (src/campaign/shard.ts)
 *   logs/shard-I-of-N.job-J.out|err   SLURM's stdout/stderr of array task I of job J
 *   sessions/shard-I-of-N.jsonl every run of shard I (start and end lines): host, SLURM ids,
 *                               CUDA_VISIBLE_DEVICES, the policy runtime, rows at start and end
 * ```
 */
import { join } from 'node:path';
import { z } from 'zod';
import { SHARD_RULE } from '../protocol/index.js';

export const CLUSTER_DIR = 'cluster';

export interface ClusterPaths {
  readonly dir: string;
  readonly shards: string;
  readonly jobs: string;
  /** Sealed copies (merge). */
  readonly logs: string;
  readonly sessions: string;
  readonly merge: string;
  /** Scratch, written by the tasks. */
  readonly scratch: string;
  readonly taskLogs: string;
  readonly taskSessions: string;
}

export function clusterPaths(unitDir: string): ClusterPaths {
  const dir = join(unitDir, CLUSTER_DIR);
  const scratch = `${unitDir}.shards`;
  return {
    dir,
    shards: join(dir, 'shards.json'),
    jobs: join(dir, 'jobs.jsonl'),
    logs: join(dir, 'logs'),
    sessions: join(dir, 'sessions'),
    merge: join(dir, 'merge.json'),
    scratch,
    taskLogs: join(scratch, 'logs'),
    taskSessions: join(scratch, 'sessions'),
  };
}

/** `submit-001.sbatch`, … (relative to the cluster folder). */
export function scriptName(submission: number): string {
  return `submit-${String(submission).padStart(3, '0')}.sbatch`;
}

export function sessionFile(unitDir: string, index: number, count: number): string {
  return join(clusterPaths(unitDir).taskSessions, `shard-${index}-of-${count}.jsonl`);
}

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const Range = z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]);

export const ShardManifestSchema = z.object({
  index: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  units: z.array(z.object({ task: z.string(), seed: z.number().int().nonnegative(), scopeId: z.string() })),
  seqs: z.array(Range),
  rows: z.number().int().nonnegative(),
  sha256: hex64,
});

export const ShardPlanRecordSchema = z.object({
  kind: z.literal('imep.cluster-shards'),
  version: z.literal(1),
  rule: z.literal(SHARD_RULE),
  protocolId: z.string(),
  protocolHash: hex64,
  planHash: z.string(),
  count: z.number().int().positive(),
  units: z.number().int().nonnegative(),
  rows: z.number().int().nonnegative(),
  shards: z.array(ShardManifestSchema),
  sha256: hex64,
});
export type ShardPlanRecord = z.infer<typeof ShardPlanRecordSchema>;

export const JobRecordSchema = z.object({
  kind: z.literal('imep.cluster-job'),
  version: z.literal(1),
  submission: z.number().int().positive(),
  jobId: z.string().regex(/^\d+$/),
  count: z.number().int().positive(),
  shards: z.array(z.number().int().nonnegative()).min(1),
  array: z.string(),
  script: z.string(),
  scriptSha256: hex64,
  submittedAt: z.string(),
  operator: z.string(),
  options: z.object({
    partition: z.string().nullable(),
    gpusPerTask: z.number().int().nonnegative(),
    cpusPerTask: z.number().int().positive(),
    time: z.string().nullable(),
    batch: z.number().int().positive().nullable(),
  }),
});
export type JobRecord = z.infer<typeof JobRecordSchema>;

/** The shard folder's record is the runner's own schema (src/campaign/shard.ts, version 1). */
export {
  ShardRecordSchema as ShardFolderRecordSchema,
  type ShardRecord as ShardFolderRecord,
} from '../campaign/index.js';

export const MergeRecordSchema = z.object({
  kind: z.literal('imep.cluster-merge'),
  version: z.literal(1),
  count: z.number().int().positive(),
  shardPlanSha256: hex64,
  rows: z.number().int().nonnegative(),
  shards: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      manifestSha256: hex64,
      rows: z.number().int().nonnegative(),
      rowsSha256: hex64,
      /** Operator ids that ran the shard (its shard.json); each is in the run record as a 'shard' session. */
      operators: z.array(z.string()).min(1),
    }),
  ),
  runId: z.string(),
  operator: z.string(),
  mergedAt: z.string(),
});
export type MergeRecord = z.infer<typeof MergeRecordSchema>;
