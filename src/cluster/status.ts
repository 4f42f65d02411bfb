/**
 * `imep cluster status UNIT`: per shard, its state and durable rows. SLURM says what is queued or running
 * (`squeue --array --states=all`, plus `sacct` where accounting storage exists); the shard folders say
 * what is done (their `shard.json` complete flag and the durable lines of their rows file) — so a task
 * that ended without completing its shard (scancel'd, preempted, failed, timed out, or aged out of the
 * controller) reads as `failed`, with the rows it kept, and is resumed by the next `imep cluster submit`.
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ImepError } from '../core/index.js';
import { NEXT_COMMAND, readRecord } from '../evidence/index.js';
import { shardDir } from '../campaign/index.js';
import { ShardFolderRecordSchema } from './cluster-layout.js';
import { openClusterUnit, readShardPlanRecord, shardRowsDone, type ClusterUnit } from './cluster-unit.js';
import { latestJobs, readJobs } from './jobs.js';
import { planShards } from '../protocol/index.js';
import { ACTIVE_STATES, Slurm, type TaskState } from './slurm.js';

export const SHARD_STATES = ['done', 'running', 'pending', 'failed', 'not submitted', 'foreign'] as const;
export type ShardState = (typeof SHARD_STATES)[number];

export interface ShardStatus {
  readonly index: number;
  readonly count: number;
  readonly state: ShardState;
  /** Durable rows in the shard's rows file, and the rows it must write. */
  readonly rows: number;
  readonly planned: number;
  /** `JOB_TASK` of the latest submission that ran this shard, or null. */
  readonly job: string | null;
  /** SLURM's word for that task (null when SLURM no longer knows it). */
  readonly slurmState: string | null;
  /** A short why (queue reason, or what ended the task). */
  readonly note: string;
}

export interface ClusterStatus {
  readonly unit: string;
  readonly unitState: string;
  readonly count: number;
  readonly shardPlanSha256: string | null;
  /** Where task states came from. */
  readonly source: 'squeue+sacct' | 'squeue' | 'files';
  readonly shards: readonly ShardStatus[];
  readonly next: string;
}

/** The split a unit's shards use: cluster/shards.json, else the one split found in `<unit>.shards/`. */
export async function shardCountOf(unit: ClusterUnit): Promise<{ count: number; sha256: string | null }> {
  const record = await readShardPlanRecord(unit);
  if (record !== null) return { count: record.count, sha256: record.sha256 };
  const names = await readdir(`${unit.dir}.shards`).catch(() => [] as string[]);
  const counts = new Set(
    names.map((n) => /^shard-\d+-of-(\d+)$/.exec(n)?.[1]).filter((c): c is string => c !== undefined),
  );
  if (counts.size === 1) return { count: Number([...counts][0]), sha256: null };
  throw new ImepError(
    'E_OUT_OF_ORDER',
    counts.size === 0
      ? `unit ${basename(unit.dir)} has no shard plan and no shard folders`
      : `unit ${basename(unit.dir)} has shard folders of ${counts.size} different splits and no shard plan`,
    {
      file: unit.dir,
      hint: 'split it first: imep cluster plan UNIT --shards N (or imep cluster submit UNIT --shards N)',
    },
  );
}

async function shardFolderState(
  unit: ClusterUnit,
  index: number,
  count: number,
): Promise<{ complete: boolean; foreign: string | null; rows: number }> {
  const dir = shardDir(unit.dir, { index, count });
  const r = await readRecord(join(dir, 'shard.json'), ShardFolderRecordSchema);
  const rows = await shardRowsDone(unit.dir, index, count);
  if (r.kind === 'missing') return { complete: false, foreign: null, rows };
  if (r.kind === 'bad') return { complete: false, foreign: `shard.json ${r.reason}`, rows };
  if (r.value.protocolHash !== unit.protocolHash || r.value.planHash !== unit.plan.planHash) {
    return {
      complete: false,
      foreign: `belongs to another campaign (protocol ${r.value.protocolHash.slice(0, 12)}…)`,
      rows,
    };
  }
  return { complete: r.value.complete, foreign: null, rows };
}

const RUNNING = new Set(['RUNNING', 'COMPLETING', 'CONFIGURING', 'SIGNALING', 'STAGE_OUT']);

export interface StatusOptions {
  readonly slurm?: Slurm;
}

export async function clusterStatus(unitDir: string, opts: StatusOptions = {}): Promise<ClusterStatus> {
  const unit = await openClusterUnit(unitDir);
  const { count, sha256 } = await shardCountOf(unit);
  const slurm = opts.slurm ?? new Slurm();
  const jobs = await readJobs(unit.dir);
  const latest = latestJobs(jobs, count);
  const ids = [...new Set(latest.filter((j) => j !== null).map((j) => j.jobId))];
  let source: ClusterStatus['source'] = 'files';
  const known = new Map<string, TaskState>();
  if (ids.length > 0) {
    const acct = await slurm.sacct(ids);
    for (const t of acct ?? []) known.set(`${t.jobId}_${t.task ?? ''}`, t);
    for (const t of await slurm.squeue(ids)) known.set(`${t.jobId}_${t.task ?? ''}`, t);
    source = acct === null ? 'squeue' : 'squeue+sacct';
  }
  const planned = planShards(unit.plan, count).shards.map((m) => m.rows);
  const shards: ShardStatus[] = [];
  for (let index = 0; index < count; index++) {
    const folder = await shardFolderState(unit, index, count);
    const job = latest[index] ?? null;
    const task = job === null ? undefined : known.get(`${job.jobId}_${index}`);
    const base = {
      index,
      count,
      rows: folder.rows,
      planned: planned[index] ?? folder.rows,
      job: job === null ? null : `${job.jobId}_${index}`,
      slurmState: task?.state ?? null,
    };
    let state: ShardState;
    let note = '';
    if (folder.foreign !== null) {
      state = 'foreign';
      note = folder.foreign;
    } else if (folder.complete) state = 'done';
    else if (task !== undefined && ACTIVE_STATES.has(task.state)) {
      state = RUNNING.has(task.state) ? 'running' : 'pending';
      note = task.reason;
    } else if (job === null) state = 'not submitted';
    else {
      state = 'failed';
      note =
        task === undefined
          ? 'the task ended without completing the shard'
          : `${task.state.toLowerCase()} before the shard completed`;
    }
    shards.push({ ...base, state, note });
  }
  const rel = unit.dir;
  let next: string;
  if (unit.state !== 'precommitted')
    next = unit.state === 'running' ? `imep cluster merge ${rel}` : `${NEXT_COMMAND[unit.state]} ${rel}`;
  else if (shards.every((s) => s.state === 'done')) next = `imep cluster merge ${rel}`;
  else if (shards.some((s) => s.state === 'foreign'))
    next = `remove the foreign shard folder(s) named above, then imep cluster submit ${rel} --shards ${count}`;
  else if (shards.some((s) => s.state === 'failed' || s.state === 'not submitted'))
    next = `imep cluster submit ${rel} --shards ${count} (runs only the shards not done and not queued; each resumes from its last durable row)`;
  else next = `wait, then imep cluster status ${rel}`;
  return { unit: unit.dir, unitState: unit.state, count, shardPlanSha256: sha256, source, shards, next };
}

export function formatClusterStatus(s: ClusterStatus): string[] {
  const done = s.shards.filter((x) => x.state === 'done').length;
  const lines = [
    `unit ${s.unit}: ${s.unitState}; ${s.count} shards${s.shardPlanSha256 ? ` (plan ${s.shardPlanSha256.slice(0, 12)}…)` : ''}, ${done} done; task states from ${s.source}`,
  ];
  for (const x of s.shards) {
    const job = x.job === null ? '' : `  job ${x.job}${x.slurmState ? ` ${x.slurmState}` : ''}`;
    const note = x.note ? `  (${x.note})` : '';
    lines.push(
      `shard ${x.index}/${x.count}: ${x.state.padEnd(13)} ${String(x.rows).padStart(6)}/${x.planned} rows${job}${note}`,
    );
  }
  lines.push(`next: ${s.next}`);
  return lines;
}
