/**
 * The SLURM commands imep uses — sbatch, squeue, sacct, scancel — behind one small class whose command
 * runner can be replaced (tests). Array task states come from `squeue --array --states=all` (which also
 * lists finished tasks for MinJobAge, 300 s by default) and from `sacct` where accounting storage exists;
 * where it does not (the one-node test cluster), the shards' own files tell the rest (status.ts).
 */
import { execFile } from 'node:child_process';
import { ImepError } from '../core/index.js';
import type { RemoteHolderCheck } from '../evidence/index.js';

export interface CommandResult {
  /** Exit status; 127 when the program is not installed. */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export type CommandRunner = (program: string, args: readonly string[]) => Promise<CommandResult>;

/** Runs a program without a shell (30 s limit). */
export const execCommand: CommandRunner = (program, args) =>
  new Promise((resolve) => {
    execFile(
      program,
      [...args],
      { timeout: 30_000, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ code: 0, stdout, stderr });
        const code = (error as { code?: unknown }).code;
        if (code === 'ENOENT') return resolve({ code: 127, stdout: '', stderr: `${program}: not found` });
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr: stderr || error.message });
      },
    );
  });

/** One array task (or plain job) as the queue or accounting reports it. */
export interface TaskState {
  /** The array's job id (what sbatch printed). */
  readonly jobId: string;
  /** The array task index, null for a job that is not an array task. */
  readonly task: number | null;
  /** SLURM state word: PENDING, RUNNING, COMPLETING, COMPLETED, CANCELLED, FAILED, TIMEOUT, PREEMPTED, NODE_FAIL, … */
  readonly state: string;
  /** squeue's reason (e.g. Resources, Priority), '' when none. */
  readonly reason: string;
}

export const ACTIVE_STATES: ReadonlySet<string> = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'REQUEUED',
  'REQUEUE_HOLD',
  'REQUEUE_FED',
  'RESIZING',
  'SUSPENDED',
  'STOPPED',
  'SIGNALING',
  'STAGE_OUT',
  'RESV_DEL_HOLD',
]);

function firstLine(s: string): string {
  return s.trim().split('\n')[0]?.trim() ?? '';
}

function parseId(id: string): { jobId: string; task: number | null } | null {
  const m = /^(\d+)(?:_(\d+))?$/.exec(id.trim());
  if (!m) return null;
  return { jobId: m[1]!, task: m[2] === undefined ? null : Number(m[2]) };
}

export class Slurm {
  constructor(private readonly run: CommandRunner = execCommand) {}

  /** Whether sbatch can be run at all (installed). */
  async available(): Promise<boolean> {
    return (await this.run('sbatch', ['--version'])).code === 0;
  }

  /** `sbatch --parsable FILE` → the job id. */
  async sbatch(scriptFile: string): Promise<string> {
    const r = await this.run('sbatch', ['--parsable', scriptFile]);
    if (r.code === 127) {
      throw new ImepError('E_CLUSTER', 'sbatch is not installed here', {
        hint: 'run on a SLURM login node, or start the one-node test cluster: scripts/slurm/start-cluster.sh',
      });
    }
    if (r.code !== 0)
      throw new ImepError('E_CLUSTER', `sbatch refused the job: ${firstLine(r.stderr) || `exit ${r.code}`}`, {
        file: scriptFile,
      });
    const id = firstLine(r.stdout).split(';')[0] ?? '';
    if (!/^\d+$/.test(id))
      throw new ImepError('E_CLUSTER', `sbatch printed no job id (got ${JSON.stringify(firstLine(r.stdout))})`, {
        file: scriptFile,
      });
    return id;
  }

  /**
   * Every array task of `jobIds` the controller still knows (queued, running, or finished within
   * MinJobAge). Unknown ids are skipped; an empty list when none is known.
   */
  async squeue(jobIds: readonly string[]): Promise<TaskState[]> {
    if (jobIds.length === 0) return [];
    const r = await this.run('squeue', [
      '--noheader',
      '--array',
      '--states=all',
      `--jobs=${jobIds.join(',')}`,
      '--format=%i|%T|%r',
    ]);
    if (r.code === 127)
      throw new ImepError('E_CLUSTER', 'squeue is not installed here', { hint: 'run on a SLURM login node' });
    if (r.code !== 0) {
      if (/invalid job id/i.test(r.stderr)) return [];
      throw new ImepError('E_CLUSTER', `squeue failed: ${firstLine(r.stderr) || `exit ${r.code}`}`);
    }
    const out: TaskState[] = [];
    for (const line of r.stdout.split('\n')) {
      const [id, state, reason] = line.trim().split('|');
      const parsed = id === undefined ? null : parseId(id);
      if (parsed === null || state === undefined) continue;
      out.push({
        ...parsed,
        state: state.trim(),
        reason: reason === undefined || reason.trim() === 'None' ? '' : reason.trim(),
      });
    }
    return out;
  }

  /** Accounting records of `jobIds` (array tasks only), or null when accounting is off or sacct missing. */
  async sacct(jobIds: readonly string[]): Promise<TaskState[] | null> {
    if (jobIds.length === 0) return [];
    const r = await this.run('sacct', [
      '--noheader',
      '--parsable2',
      '--allocations',
      `--jobs=${jobIds.join(',')}`,
      '--format=JobID,State',
    ]);
    if (r.code !== 0 || /accounting storage is disabled/i.test(`${r.stdout}\n${r.stderr}`)) return null;
    const out: TaskState[] = [];
    for (const line of r.stdout.split('\n')) {
      const [id, state] = line.trim().split('|');
      const parsed = id === undefined ? null : parseId(id);
      if (parsed === null || state === undefined) continue;
      out.push({ ...parsed, state: state.trim().split(' ')[0] ?? '', reason: '' });
    }
    return out;
  }

  /** `scancel JOB[_TASK]`. */
  async scancel(jobId: string, task?: number): Promise<void> {
    const r = await this.run('scancel', [task === undefined ? jobId : `${jobId}_${task}`]);
    if (r.code !== 0) throw new ImepError('E_CLUSTER', `scancel failed: ${firstLine(r.stderr) || `exit ${r.code}`}`);
  }
}

/**
 * Whether a lock's holder on another host is gone, from SLURM (unit-lock.ts RemoteHolderCheck; shard-run registers
 * it): a holder that ran as SLURM job J is gone when J is this process's own job (a requeued task runs one instance
 * at a time: the holder was its earlier run), or when squeue no longer lists J or lists it in a state that is not
 * active (CANCELLED, TIMEOUT, PREEMPTED, NODE_FAIL, …). Null — cannot tell, the lock stays refused — when the holder
 * did not run under SLURM or squeue cannot answer.
 */
export function slurmHolderCheck(slurm: Slurm, ownJob: string | undefined): RemoteHolderCheck {
  return async (holder) => {
    if (holder.slurmJob === undefined) return null;
    if (holder.slurmJob === ownJob) return true;
    try {
      const states = await slurm.squeue([holder.slurmJob]);
      return !states.some((t) => ACTIVE_STATES.has(t.state));
    } catch {
      return null;
    }
  };
}
