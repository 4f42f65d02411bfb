/**
 * `imep cluster plan UNIT --shards N` and `imep cluster submit UNIT --shards N [...]`.
 *
 * submit: the unit must be precommitted (shards and a formal run are alternatives; a merged unit is
 * sealed). It records the shard plan (cluster/shards.json), picks the shards still to run — not complete
 * and not queued or running under an earlier submission (two processes must never write one shard) —
 * writes the array script as `cluster/submit-NNN.sbatch`, submits it with `sbatch --parsable` and appends
 * the job to `cluster/jobs.jsonl`. A resubmission after a failed, preempted or scancel'd task therefore
 * runs just those shards, and each resumes after its last durable row (src/campaign/shard.ts).
 * `--dry-run` prints the script and writes nothing.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ImepError, sha256Hex } from '../core/index.js';
import { writeFileAtomic, currentOperator, readRecord } from '../evidence/index.js';
import type { Operator } from '../evidence/index.js';
import { shardDir } from '../campaign/index.js';
import { clusterPaths, scriptName, ShardFolderRecordSchema } from './cluster-layout.js';
import { ensureShardPlan, openClusterUnit, type ClusterUnit } from './cluster-unit.js';
import { appendJob, latestJobs, readJobs } from './jobs.js';
import { defaultLauncher } from './launcher.js';
import { sbatchScript } from './sbatch-script.js';
import { arraySpec, type ShardPlan } from '../protocol/index.js';
import { ACTIVE_STATES, Slurm } from './slurm.js';

export interface PlanResult {
  readonly plan: ShardPlan;
  readonly sha256: string;
  readonly file: string;
  readonly wrote: boolean;
}

/** Refuses a unit that shards cannot run on, naming what to do instead. */
export function assertShardable(unit: ClusterUnit): void {
  if (unit.state === 'precommitted') return;
  if (unit.state === 'running') {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${unit.dir} is 'running': a formal run or a merge has started, and shards run on a precommitted unit only`,
      {
        hint: `finish it: imep cluster merge ${unit.dir} (a merge) or imep campaign resume ${unit.dir} (a formal run)`,
      },
    );
  }
  throw new ImepError(
    'E_OUT_OF_ORDER',
    `unit ${unit.dir} is '${unit.state}': its rows are in (merged or run) — there is nothing left to shard`,
    { hint: `imep campaign status ${unit.dir}` },
  );
}

/** `imep cluster plan`: the split, recorded in cluster/shards.json (atomically; idempotent). */
export async function planCluster(unitDir: string, count: number): Promise<PlanResult> {
  const unit = await openClusterUnit(unitDir);
  assertShardable(unit);
  const r = await ensureShardPlan(unit, count, { write: true });
  return { plan: r.plan, sha256: r.record.sha256, file: clusterPaths(unit.dir).shards, wrote: r.wrote };
}

export function formatPlan(r: PlanResult): string[] {
  const p = r.plan;
  const lines = [
    `${p.count} shards of ${p.units} units (${p.rows} rows), rule ${p.rule}; shard plan ${r.sha256.slice(0, 12)}… in ${r.file}`,
  ];
  for (const s of p.shards)
    lines.push(
      `shard ${s.index}/${s.count}: ${s.units.length} units, ${s.rows} rows, manifest ${s.sha256.slice(0, 16)}`,
    );
  return lines;
}

export interface SubmitOptions {
  readonly count: number;
  readonly partition?: string | null;
  readonly gpusPerTask?: number;
  readonly cpusPerTask?: number;
  readonly time?: string | null;
  /** Lockstep batch passed to each shard run (null: the runner's default). */
  readonly batch?: number | null;
  readonly dryRun?: boolean;
  /** argv prefix that runs the imep CLI (default: this node + this package's CLI). */
  readonly launcher?: readonly string[];
  /** The job's working directory (default: this process's). */
  readonly chdir?: string;
  readonly slurm?: Slurm;
  readonly operator?: Operator;
  readonly now?: () => Date;
  readonly say?: (line: string) => void;
}

export interface SubmitResult {
  readonly script: string;
  /** null for a dry run, or when nothing was left to submit. */
  readonly jobId: string | null;
  readonly shards: readonly number[];
  readonly scriptFile: string | null;
  readonly complete: readonly number[];
  readonly active: readonly number[];
}

async function shardComplete(unit: ClusterUnit, index: number, count: number): Promise<boolean> {
  const r = await readRecord(join(shardDir(unit.dir, { index, count }), 'shard.json'), ShardFolderRecordSchema);
  return (
    r.kind === 'ok' &&
    r.value.complete &&
    r.value.protocolHash === unit.protocolHash &&
    r.value.planHash === unit.plan.planHash
  );
}

export async function submitCluster(unitDir: string, opts: SubmitOptions): Promise<SubmitResult> {
  const say = opts.say ?? ((l: string) => process.stdout.write(`${l}\n`));
  const unit = await openClusterUnit(unitDir);
  assertShardable(unit);
  const dryRun = opts.dryRun === true;
  const { plan, record } = await ensureShardPlan(unit, opts.count, { write: !dryRun });
  const slurm = opts.slurm ?? new Slurm();
  const jobs = await readJobs(unit.dir);
  const latest = latestJobs(jobs, plan.count);
  const ids = [...new Set(latest.filter((j) => j !== null).map((j) => j.jobId))];
  const queued = new Set<number>();
  try {
    for (const t of await slurm.squeue(ids)) {
      if (t.task !== null && ACTIVE_STATES.has(t.state) && latest[t.task]?.jobId === t.jobId) queued.add(t.task);
    }
  } catch (e) {
    if (!dryRun) throw e;
  }
  const complete: number[] = [];
  const todo: number[] = [];
  for (let i = 0; i < plan.count; i++) {
    if (await shardComplete(unit, i, plan.count)) complete.push(i);
    else if (!queued.has(i)) todo.push(i);
  }
  const active = [...queued].sort((a, b) => a - b);
  const paths = clusterPaths(unit.dir);
  const submission = jobs.length + 1;
  const options = {
    partition: opts.partition ?? null,
    gpusPerTask: opts.gpusPerTask ?? 0,
    cpusPerTask: opts.cpusPerTask ?? 1,
    time: opts.time ?? null,
    batch: opts.batch ?? null,
  };
  const script = sbatchScript({
    unitDir: unit.dir,
    logsDir: paths.taskLogs,
    chdir: resolve(opts.chdir ?? process.cwd()),
    protocolId: unit.protocol.id,
    protocolHash: unit.protocolHash,
    planHash: unit.plan.planHash,
    shardPlanSha256: record.sha256,
    count: plan.count,
    shards: todo.length > 0 ? todo : plan.shards.map((s) => s.index),
    launcher: opts.launcher ?? defaultLauncher(),
    ...options,
  });
  if (dryRun) {
    say(script.trimEnd());
    return { script, jobId: null, shards: todo, scriptFile: null, complete, active };
  }
  if (todo.length === 0) {
    if (active.length > 0)
      say(
        `nothing to submit: shards ${active.join(', ')} are queued or running, the rest are complete; watch: imep cluster status ${unit.dir}`,
      );
    else say(`nothing to submit: all ${plan.count} shards are complete; next: imep cluster merge ${unit.dir}`);
    return { script, jobId: null, shards: [], scriptFile: null, complete, active };
  }
  await mkdir(paths.taskLogs, { recursive: true }).catch((e: unknown) => {
    throw new ImepError('E_IO', 'cannot create the task logs folder', { file: paths.taskLogs, cause: e });
  });
  const name = scriptName(submission);
  const scriptFile = join(paths.dir, name);
  await writeFileAtomic(scriptFile, script, 0o755);
  const jobId = await slurm.sbatch(scriptFile);
  await appendJob(unit.dir, {
    kind: 'imep.cluster-job',
    version: 1,
    submission,
    jobId,
    count: plan.count,
    shards: todo,
    array: arraySpec(todo),
    script: name,
    scriptSha256: sha256Hex(script),
    submittedAt: (opts.now ?? (() => new Date()))().toISOString(),
    operator: (opts.operator ?? currentOperator()).id,
    options,
  });
  const skipped = [
    complete.length > 0 ? `${complete.length} complete` : '',
    active.length > 0 ? `${active.length} queued or running` : '',
  ].filter((x) => x !== '');
  say(
    `submitted job ${jobId} (array ${arraySpec(todo)}): ${todo.length} of ${plan.count} shards of ${unit.dir}${skipped.length > 0 ? ` (skipped: ${skipped.join(', ')})` : ''}`,
  );
  say(`script: ${scriptFile}; task logs: ${paths.taskLogs}`);
  say(`watch: imep cluster status ${unit.dir}; when every shard is done: imep cluster merge ${unit.dir}`);
  return { script, jobId, shards: todo, scriptFile, complete, active };
}
