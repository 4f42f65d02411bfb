/**
 * The sbatch array script of one submission (pure text). Array task I runs shard I of N:
 *
 *   exec <node> <imep cli> cluster shard-run <unit> --shard "${SLURM_ARRAY_TASK_ID}/N"
 *
 * (`imep cluster shard-run` is `imep campaign run <unit>/protocol.json --shard I/N` on the unit's frozen
 * protocol, plus a session record naming the host, the SLURM ids and the GPU SLURM gave the task through
 * CUDA_VISIBLE_DEVICES.) Every path is absolute; stdout/stderr go to `<unit>.shards/logs/`
 * (scratch; the merge copies them into `<unit>/cluster/logs/` before the seal).
 */
import { ImepError } from '../core/index.js';
import { arraySpec, SHARD_RULE } from '../protocol/index.js';

export interface SbatchInput {
  /** Absolute unit folder. */
  readonly unitDir: string;
  /** Absolute folder for SLURM's output/error files. */
  readonly logsDir: string;
  /** The job's working directory (absolute; where checkpoint paths resolve, as for the submitter). */
  readonly chdir: string;
  readonly protocolId: string;
  readonly protocolHash: string;
  readonly planHash: string;
  readonly shardPlanSha256: string;
  readonly count: number;
  /** The array task indices (= shard indices) to run. */
  readonly shards: readonly number[];
  /** argv prefix that runs the imep CLI: [node, ...node flags, cli entry] (absolute paths). */
  readonly launcher: readonly string[];
  readonly partition: string | null;
  readonly gpusPerTask: number;
  readonly cpusPerTask: number;
  readonly time: string | null;
  readonly batch: number | null;
}

/** POSIX single-quoting. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./=:@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** SLURM job names: the protocol id, prefixed, limited to safe characters. */
export function jobNameFor(protocolId: string): string {
  return `imep-${protocolId.replace(/[^A-Za-z0-9._-]/g, '_')}`.slice(0, 64);
}

const TIME_RE = /^(\d+|\d+:\d{2}|\d+:\d{2}:\d{2}|\d+-\d+|\d+-\d+:\d{2}|\d+-\d+:\d{2}:\d{2}|UNLIMITED|INFINITE)$/;

/** --time in a form SLURM accepts (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS). */
export function checkTime(time: string): string {
  if (!TIME_RE.test(time)) {
    throw new ImepError('E_USAGE', `'${time}' is not a SLURM time limit`, {
      field: '--time',
      hint: 'use minutes, HH:MM:SS or D-HH:MM:SS (e.g. 90, 01:30:00, 1-00:00:00)',
    });
  }
  return time;
}

export function checkPartition(partition: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(partition)) {
    throw new ImepError('E_USAGE', `'${partition}' is not a partition name`, {
      field: '--partition',
      hint: 'letters, digits, ".", "_" or "-"; see `sinfo`',
    });
  }
  return partition;
}

/** A path that goes into an #SBATCH line as it is: no whitespace or quotes, which #SBATCH lines cannot carry. */
function directiveDir(path: string, field: string): string {
  if (/[\s"'\\]/.test(path)) {
    throw new ImepError(
      'E_USAGE',
      `the path ${JSON.stringify(path)} has whitespace or quotes, which #SBATCH lines cannot carry`,
      {
        field,
        hint: 'keep the campaigns directory and working directory on paths without spaces',
      },
    );
  }
  return path;
}

/** A path in an #SBATCH filename pattern (--output, --error): '%' doubled, as SLURM reads '%x' as a pattern there. --chdir takes none. */
function directivePath(path: string, field: string): string {
  return directiveDir(path, field).replace(/%/g, '%%');
}

export function sbatchScript(o: SbatchInput): string {
  if (o.launcher.length === 0) throw new ImepError('E_INTERNAL', 'empty launcher');
  if (!Number.isSafeInteger(o.gpusPerTask) || o.gpusPerTask < 0)
    throw new ImepError('E_USAGE', `must be a non-negative integer, got ${o.gpusPerTask}`, {
      field: '--gpus-per-task',
    });
  if (!Number.isSafeInteger(o.cpusPerTask) || o.cpusPerTask < 1)
    throw new ImepError('E_USAGE', `must be a positive integer, got ${o.cpusPerTask}`, { field: '--cpus-per-task' });
  for (const i of o.shards)
    if (!(Number.isSafeInteger(i) && i >= 0 && i < o.count))
      throw new ImepError('E_INTERNAL', `shard ${i} outside 0..${o.count - 1}`);
  const logs = directivePath(o.logsDir, '--campaigns-dir');
  const log = (ext: string): string => `${logs}/shard-%a-of-${o.count}.job-%A.${ext}`;
  const lines = [
    '#!/bin/bash',
    '# imep cluster submit: one SLURM array task per shard of an evidence unit. Written by imep; the',
    "# submitted copy's SHA-256 is in cluster/jobs.jsonl.",
    `#   unit      ${o.unitDir}`,
    `#   protocol  ${o.protocolId} (protocol ${o.protocolHash.slice(0, 12)}…, plan ${o.planHash.slice(0, 12)}…)`,
    `#   shards    ${o.count} by unit (${SHARD_RULE}), shard plan ${o.shardPlanSha256.slice(0, 12)}… (cluster/shards.json)`,
    `#SBATCH --job-name=${jobNameFor(o.protocolId)}`,
    `#SBATCH --array=${arraySpec(o.shards)}`,
    '#SBATCH --ntasks=1',
    `#SBATCH --cpus-per-task=${o.cpusPerTask}`,
    `#SBATCH --chdir=${directiveDir(o.chdir, 'cwd')}`,
    `#SBATCH --output=${log('out')}`,
    `#SBATCH --error=${log('err')}`,
  ];
  if (o.partition !== null) lines.push(`#SBATCH --partition=${checkPartition(o.partition)}`);
  if (o.gpusPerTask > 0) lines.push(`#SBATCH --gres=gpu:${o.gpusPerTask}`);
  if (o.time !== null) lines.push(`#SBATCH --time=${checkTime(o.time)}`);
  const cmd = [
    ...o.launcher.map(shellQuote),
    'cluster',
    'shard-run',
    shellQuote(o.unitDir),
    '--shard',
    `"\${SLURM_ARRAY_TASK_ID}/${o.count}"`,
  ];
  if (o.batch !== null) cmd.push('--batch', String(o.batch));
  lines.push(
    'set -euo pipefail',
    '# SLURM sets CUDA_VISIBLE_DEVICES to the GPU(s) of this task; the shard run records it (<unit>.shards/sessions/).',
    `exec ${cmd.join(' ')}`,
    '',
  );
  return lines.join('\n');
}
