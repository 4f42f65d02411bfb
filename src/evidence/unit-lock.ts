/**
 * One writer per unit (or per shard): a lock file beside what it guards, created exclusively (O_EXCL), holding
 * the holder's pid, host and start time. Two `imep campaign run/resume` of one unit (or two tasks of one shard)
 * would otherwise append the same rows twice, or one would wait forever for seqs the other wrote.
 *
 * The lock lives outside the unit folder (`<unit>.lock`, `<unit>.shards/shard-i-of-N.lock`), so it is never part
 * of what is sealed. A lock whose holder is gone (same host, pid no longer running: a crash, kill -9, a node
 * reboot's recycled namespace) is taken over, and the takeover says whose it was. A lock held on another host is
 * refused with the holder named and how to clear it — unless a remote-holder check (setRemoteHolderCheck; the
 * cluster layer registers one that asks SLURM about the holder's job) says the holder is gone.
 *
 * A process holding locks removes them when it is told to stop (SIGTERM — what scancel, preemption and a time
 * limit send first — or SIGINT) and exits with 128 + the signal's number, as it would have without the handler —
 * unless a stop-signal owner takes the signal (setStopSignalOwner: the CLI's clean stop of a formal run).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, open, readFile, rename, rm, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ImepError } from '../core/index.js';

export interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
  readonly command: string;
  /** The SLURM job the holder ran as (`<array job>_<task>`, or the job id), when it ran under SLURM. */
  readonly slurmJob?: string;
}

/** Whether a lock's holder on another host is gone: true (take the lock over), false (alive), null (cannot tell). */
export type RemoteHolderCheck = (holder: Holder) => Promise<boolean | null>;

let remoteHolderCheck: RemoteHolderCheck | null = null;

/** Registers how holders on other hosts are checked (null: they never are, and their locks are refused). */
export function setRemoteHolderCheck(check: RemoteHolderCheck | null): void {
  remoteHolderCheck = check;
}

/** A process's SLURM job (`<array job>_<task>`, or the job id), from the environment SLURM gives its tasks. */
export function slurmJobOf(env: NodeJS.ProcessEnv): string | undefined {
  const array = env['SLURM_ARRAY_JOB_ID'],
    task = env['SLURM_ARRAY_TASK_ID'];
  if (array !== undefined && task !== undefined) return `${array}_${task}`;
  return env['SLURM_JOB_ID'];
}

export interface UnitLock {
  readonly file: string;
  /** The stale holder this lock was taken over from, if any. */
  readonly tookOverFrom: Holder | null;
  /** Removes the lock (if it is still this process's). */
  release(): Promise<void>;
}

/** Lock files held by this process (a holder with this process's pid is either one of these or stale). */
const heldHere = new Set<string>();

/** Whether a process with this pid exists on this host (one of another user counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM'; // exists, owned by another user
  }
}

async function readHolder(file: string): Promise<Holder | null> {
  try {
    return holderOf(await readFile(file, 'utf8'));
  } catch {
    return null; // missing, or half written by a holder that died while writing it
  }
}

function holderOf(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string') return null;
    return {
      pid: h.pid,
      host: h.host,
      startedAt: String(h.startedAt ?? '?'),
      command: String(h.command ?? '?'),
      ...(typeof h.slurmJob === 'string' ? { slurmJob: h.slurmJob } : {}),
    };
  } catch {
    return null; // missing, or half written by a holder that died while writing it
  }
}

/**
 * Creates the lock file WITH its content in one step: the holder is written to a private temp file, which is then
 * hard-linked to the lock's name (EEXIST when it is taken). Another taker therefore never reads a lock file that
 * exists but is still empty — which it would take for a lock left half-written by a dead holder and move aside,
 * so that both takers went on as holders (and both runs then failed on each other's rows).
 */
async function tryCreate(file: string, me: Holder): Promise<boolean> {
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  let handle;
  try {
    handle = await open(tmp, 'wx');
    try {
      await handle.writeFile(`${JSON.stringify(me)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(tmp, file);
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === 'EEXIST') return false;
    throw new ImepError('E_IO', 'cannot create the lock file', { file, cause: e });
  } finally {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}

/** Lock files this process is taking right now: a second taker in this process refuses at once. */
const takingHere = new Set<string>();

/**
 * Takes the lock `file` for `what` (a phrase naming the guarded unit or shard, for messages), or throws
 * E_OUT_OF_ORDER naming the live holder.
 */
export async function acquireLock(file: string, what: string): Promise<UnitLock> {
  if (takingHere.has(file)) {
    throw new ImepError('E_OUT_OF_ORDER', `${what} is being written by another imep run in this process`, {
      file,
      hint: 'wait for it to finish (two writers of one unit would append the same rows twice)',
    });
  }
  takingHere.add(file);
  try {
    return await takeLock(file, what);
  } finally {
    takingHere.delete(file);
  }
}

async function takeLock(file: string, what: string): Promise<UnitLock> {
  const slurmJob = slurmJobOf(process.env);
  const me: Holder = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    command: process.argv.slice(2).join(' '),
    ...(slurmJob === undefined ? {} : { slurmJob }),
  };
  let tookOverFrom: Holder | null = null;
  for (let tries = 0; tries < 3; tries++) {
    if (!heldHere.has(file) && (await tryCreate(file, me))) return lockOf(file, me, tookOverFrom);
    const holder = await readHolder(file);
    const remote = holder !== null && holder.host !== me.host;
    // another host's holder is taken over only when the registered check says it is gone
    const remoteGone = remote && remoteHolderCheck !== null && (await remoteHolderCheck(holder)) === true;
    if (remote && !remoteGone) {
      const job = holder.slurmJob === undefined ? '' : `, SLURM job ${holder.slurmJob}`;
      throw new ImepError(
        'E_OUT_OF_ORDER',
        `${what} is being written by pid ${holder.pid} on host ${holder.host}${job} (since ${holder.startedAt}: imep ${holder.command})`,
        {
          file,
          hint: `wait for it to finish; if that process is gone, remove ${file} and run again`,
        },
      );
    }
    if (!remoteGone && (heldHere.has(file) || (holder !== null && holder.pid !== me.pid && processAlive(holder.pid)))) {
      throw new ImepError(
        'E_OUT_OF_ORDER',
        `${what} is being written by another imep ${holder === null || holder.pid === me.pid ? 'run in this process' : `process (pid ${holder.pid}, since ${holder.startedAt}: imep ${holder.command})`}`,
        {
          file,
          hint: `wait for it to finish (two writers of one unit would append the same rows twice); if pid ${holder?.pid ?? '?'} is not that imep process (the machine restarted and the number was reused), remove ${file}`,
        },
      );
    }
    // stale (its process is gone) or unreadable: move it aside atomically — of two racing takers only one
    // renames this file, and both then race for the O_EXCL create above
    const aside = `${file}.stale-${process.pid}-${Date.now()}`;
    try {
      await rename(file, aside);
      await unlink(aside).catch(() => undefined);
      tookOverFrom = holder;
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT')
        throw new ImepError('E_IO', 'cannot clear a stale lock file', { file, cause: e });
    }
  }
  throw new ImepError('E_OUT_OF_ORDER', `${what}: could not take the lock (another process keeps taking it)`, {
    file,
    hint: 'run again once the other process has finished',
  });
}

/** The lock of a unit (`<unit>.lock`), taken by everything that writes its formal run: run/resume, merge, fail-run. */
export function lockUnit(dir: string): Promise<UnitLock> {
  return acquireLock(`${dir}.lock`, `unit ${dir}`);
}

/** The lock of a shard folder (`<unit>.shards/shard-i-of-N.lock`), taken by the task that runs the shard. */
export function lockShard(shardDir: string, what: string): Promise<UnitLock> {
  return acquireLock(`${shardDir}.lock`, what);
}

/** The signals after which a holder removes its locks before it exits (what scancel, preemption and time limits send first). */
const STOP_SIGNALS = { SIGTERM: 15, SIGINT: 2 } as const;
let stopHandlers = false;
/** Each held lock's holder, to remove only what is still this process's when a stop signal comes. */
const holders = new Map<string, Holder>();

/**
 * The owner of the stop signals while one is set (the CLI's clean stop of a run, src/cli/interrupt.ts): this module's
 * handler then leaves the signal to it — the owner drains and ends the run, or calls releaseLocksNow and exits itself.
 */
let signalOwner: (() => boolean) | null = null;

/** Hands SIGINT/SIGTERM to `owner` while it returns true (null: this module removes the locks and exits, as before). */
export function setStopSignalOwner(owner: (() => boolean) | null): void {
  signalOwner = owner;
}

/** Removes every lock this process holds, synchronously (an exit on a signal; nothing else may use the units after). */
export function releaseLocksNow(): void {
  removeHeldLocksNow();
}

function removeHeldLocksNow(): void {
  for (const [file, me] of holders) {
    try {
      const h = holderOf(readFileSync(file, 'utf8'));
      if (h !== null && h.pid === me.pid && h.host === me.host && h.startedAt === me.startedAt) unlinkSync(file);
    } catch {
      // already gone, or unreadable: nothing of ours to remove
    }
  }
  holders.clear();
}

function removeLocksOnStop(): void {
  if (stopHandlers) return;
  stopHandlers = true;
  for (const [signal, number] of Object.entries(STOP_SIGNALS)) {
    process.on(signal as NodeJS.Signals, () => {
      if (signalOwner?.() === true) return;
      removeHeldLocksNow();
      process.exit(128 + number);
    });
  }
}

function lockOf(file: string, me: Holder, tookOverFrom: Holder | null): UnitLock {
  heldHere.add(file);
  holders.set(file, me);
  removeLocksOnStop();
  let released = false;
  return {
    file,
    tookOverFrom,
    release: async () => {
      if (released) return;
      released = true;
      heldHere.delete(file);
      holders.delete(file);
      const holder = await readHolder(file);
      if (holder !== null && holder.pid === me.pid && holder.host === me.host && holder.startedAt === me.startedAt)
        await unlink(file).catch(() => undefined);
    },
  };
}
