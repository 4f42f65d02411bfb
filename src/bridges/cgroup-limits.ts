/**
 * A cgroup of its own for each host IMEP starts, where the machine lets IMEP make one (resource-limits.ts): a child of
 * IMEP's own cgroup in the cgroup v2 hierarchy (`memory.max`, `memory.swap.max`, `pids.max` where those controllers
 * are available to it) and, where cgroup v2 offers no pids controller, of IMEP's cgroup in a writable cgroup v1 `pids`
 * hierarchy (`pids.max`; root is exempt from RLIMIT_NPROC, a pids cgroup is not). The host enters its cgroups before
 * it execs (a shell prefix writes its pid into each `cgroup.procs`), so nothing it forks starts outside them; a
 * cgroup also lets the supervisor kill every process of the host at once (`cgroup.kill`, or each pid listed).
 *
 * Nothing here is required: where no cgroup can be made, the limits are rlimits alone and the run record says so.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CgroupPlacement {
  /** The cgroup folders the host enters (v2 first). */
  readonly dirs: readonly string[];
  /** What each enforces, e.g. "memory.max (cgroup v2)", "pids.max (cgroup v1)". */
  readonly enforces: { readonly memory: string | null; readonly processes: string | null };
}

interface Mounts {
  readonly v2: string | null;
  readonly v1pids: string | null;
}

function mounts(): Mounts {
  let v2: string | null = null;
  let v1pids: string | null = null;
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return { v2, v1pids };
  }
  for (const line of text.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (pre === undefined || post === undefined) continue;
    const point = pre.split(' ')[4];
    const [fstype, , options] = post.split(' ');
    if (point === undefined) continue;
    if (fstype === 'cgroup2' && v2 === null) v2 = point;
    if (fstype === 'cgroup' && (options ?? '').split(',').includes('pids') && v1pids === null) v1pids = point;
  }
  return { v2, v1pids };
}

/** IMEP's own cgroup path in a hierarchy: the v2 one (`0::/path`) or the v1 one that holds `controller`. */
function ownPath(controller: string | null): string | null {
  let text: string;
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const [id, ctrls, path] = line.split(':');
    if (path === undefined) continue;
    if (controller === null ? id === '0' && ctrls === '' : (ctrls ?? '').split(',').includes(controller)) return path;
  }
  return null;
}

const made: string[] = [];
let seq = 0;
let exitHook = false;

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function makeChild(parent: string): string | null {
  const dir = join(parent, `imep-${process.pid}-${++seq}`);
  try {
    mkdirSync(dir);
  } catch {
    return null;
  }
  made.push(dir);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', removeCgroups);
  }
  return dir;
}

/** Removes the cgroups this process made (those still holding a process stay; the kernel refuses). */
export function removeCgroups(): void {
  for (const dir of made.splice(0).reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      // still populated: the host outlived its stop (it is killed with --die-with-parent or its group)
    }
  }
}

/** A cgroup (or two) for one host with `memoryBytes` and `processes` written where the controllers exist. */
export function placeInCgroup(memoryBytes: number, processes: number, env: NodeJS.ProcessEnv): CgroupPlacement | null {
  if ((env['IMEP_CGROUPS'] ?? 'auto').toLowerCase() === 'off') return null;
  const m = mounts();
  const dirs: string[] = [];
  let memory: string | null = null;
  let pids: string | null = null;
  const own2 = m.v2 === null ? null : ownPath(null);
  if (m.v2 !== null && own2 !== null) {
    const dir = makeChild(join(m.v2, own2));
    if (dir !== null) {
      dirs.push(dir);
      const controllers = existsSync(join(dir, 'cgroup.controllers'))
        ? readFileSync(join(dir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/)
        : [];
      if (controllers.includes('memory') && tryWrite(join(dir, 'memory.max'), String(memoryBytes))) {
        tryWrite(join(dir, 'memory.swap.max'), '0');
        memory = 'memory.max (cgroup v2)';
      }
      if (controllers.includes('pids') && tryWrite(join(dir, 'pids.max'), String(processes)))
        pids = 'pids.max (cgroup v2)';
    }
  }
  const own1 = m.v1pids === null ? null : ownPath('pids');
  if (pids === null && m.v1pids !== null && own1 !== null) {
    const dir = makeChild(join(m.v1pids, own1));
    if (dir !== null) {
      if (tryWrite(join(dir, 'pids.max'), String(processes))) {
        dirs.push(dir);
        pids = 'pids.max (cgroup v1)';
      } else {
        try {
          rmdirSync(dir);
        } catch {
          // left for removeCgroups
        }
      }
    }
  }
  return dirs.length === 0 ? null : { dirs, enforces: { memory, processes: pids } };
}

/**
 * The argv prefix that puts the process into `dirs` and then execs the rest: `/bin/sh -c '…' imep-cgroup N d1 … dN`.
 * A host that cannot enter its cgroup does not start (exit 126, saying why on stderr): it never runs unlimited.
 * The shell exports the working folder as PWD, which the program it execs would inherit — bubblewrap's own
 * process, pid 1 inside the sandbox, whose /proc/1/environ the host can read: unset first, so nothing names it.
 */
export function cgroupEntryPrefix(dirs: readonly string[]): string[] {
  const script =
    'unset PWD OLDPWD; n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || { echo "imep: cannot enter cgroup $1" >&2; exit 126; }; shift; n=$((n-1)); done; exec "$@"';
  return ['/bin/sh', '-c', script, 'imep-cgroup', String(dirs.length), ...dirs];
}

/**
 * Removes a stopped host's cgroups: whatever is left in them (children it left behind) is killed, and each folder
 * removed once empty (waiting up to `waitMs`); one still populated then stays, for removeCgroups at exit.
 */
export async function releaseCgroups(dirs: readonly string[], waitMs = 2000): Promise<void> {
  killCgroups(dirs);
  const until = Date.now() + waitMs;
  for (const dir of dirs) {
    for (;;) {
      try {
        rmdirSync(dir);
        const i = made.indexOf(dir);
        if (i >= 0) made.splice(i, 1);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT' || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}

/** The processes listed in a cgroup (none when it is gone or unreadable). */
function procsIn(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Kills every process in `dirs` (cgroup.kill where the kernel has it, else SIGKILL to each listed pid). */
export function killCgroups(dirs: readonly string[]): void {
  for (const dir of dirs) {
    if (existsSync(join(dir, 'cgroup.kill')) && tryWrite(join(dir, 'cgroup.kill'), '1')) continue;
    for (const pid of procsIn(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Kills every process in `dirs` until none is listed (waiting up to `waitMs`; a process forked meanwhile is killed on
 * the next round), so that a fresh host entering them shares their limits with nothing its predecessor left behind
 * (a child that left the host's process group). Returns whether they are empty.
 */
export async function clearCgroups(dirs: readonly string[], waitMs = 2000): Promise<boolean> {
  const until = Date.now() + waitMs;
  for (;;) {
    killCgroups(dirs);
    if (dirs.every((dir) => procsIn(dir).length === 0)) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}
