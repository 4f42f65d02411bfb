/**
 * Resource limits of the hosts IMEP starts (a policy host, a simulator server): memory, processes, CPU time and a
 * per-call deadline, registered per kind in the protocol (`policy.limits`, `simulator.limits`) with finite defaults,
 * and enforced by the OS, not by the host's goodwill:
 *
 * - rlimits, set by util-linux `prlimit` right before the host's program runs — inside the sandbox when there is one
 *   (so RLIMIT_NPROC counts the sandbox's own user namespace, not every process of the user): RLIMIT_DATA (private
 *   writable memory of each process: an allocation past it fails, and IMEP's servers exit on a MemoryError),
 *   RLIMIT_CPU (CPU seconds of each process: SIGXCPU, then SIGKILL), RLIMIT_CORE 0 and, for a non-root user inside a
 *   sandbox with its own uid (a user namespace), RLIMIT_NPROC (root is exempt from it: the kernel does not count root's
 *   processes; a setuid bubblewrap without a user namespace keeps the user's uid, where it would count every process of
 *   the user, so it is left out and the line says so);
 * - a cgroup where one is writable (cgroup-limits.ts): memory.max / pids.max of the whole host;
 * - the call deadline: past it the host is killed, its whole process group and cgroup, and restarted
 *   (ServerSupervisor.kill, RemotePolicy's host recovery, the server pool's recovery); the episode is an execution
 *   failure.
 *
 * `describeLimits` is the one line the terminal, the run record and the report show: each limit and what enforced
 * it, or that nothing could (never silently).
 */
import { existsSync } from 'node:fs';
import type { ServerCommand } from './supervisor.js';
import { cgroupEntryPrefix, placeInCgroup, type CgroupPlacement } from './cgroup-limits.js';

export type HostKind = 'policy host' | 'simulator server';

export interface HostLimits {
  /** Memory per process (RLIMIT_DATA) and of the whole host where a memory cgroup is writable, MiB. */
  readonly memoryMiB: number;
  /** Processes and threads at once (pids cgroup; RLIMIT_NPROC in the sandbox for a non-root user). */
  readonly processes: number;
  /** CPU seconds per process (RLIMIT_CPU). */
  readonly cpuSeconds: number;
  /** The deadline of one call, s: past it the host is killed and restarted. */
  readonly callDeadlineS: number;
}

/**
 * Defaults. A policy host: 16 GiB (a 7B VLA in half precision loads ~15 GB through host memory), 512 tasks (threads
 * included: torch and OpenBLAS start one per core), 7 CPU-days, 60 s per call. A simulator server: LIBERO
 * (robosuite + MuJoCo) takes 1–2 GB per environment and MIKASA (ManiSkill3 + SAPIEN, lavapipe Vulkan) several GB and
 * one rendering thread per core, times the worker processes of vectorised hosting: 32 GiB per process, 4096 tasks,
 * 30 CPU-days, 30 s per step (60 s per reset, 120 s per make — the bridge's own deadlines).
 */
export const DEFAULT_HOST_LIMITS: Readonly<Record<HostKind, HostLimits>> = {
  'policy host': { memoryMiB: 16_384, processes: 512, cpuSeconds: 604_800, callDeadlineS: 60 },
  'simulator server': { memoryMiB: 32_768, processes: 4096, cpuSeconds: 2_592_000, callDeadlineS: 30 },
};

/** The registered limits over the kind's defaults. */
export function resolveHostLimits(kind: HostKind, registered: Partial<HostLimits> | undefined): HostLimits {
  const d = DEFAULT_HOST_LIMITS[kind];
  return {
    memoryMiB: registered?.memoryMiB ?? d.memoryMiB,
    processes: registered?.processes ?? d.processes,
    cpuSeconds: registered?.cpuSeconds ?? d.cpuSeconds,
    callDeadlineS: registered?.callDeadlineS ?? d.callDeadlineS,
  };
}

const PRLIMIT_CANDIDATES = ['/usr/bin/prlimit', '/bin/prlimit'];

function prlimitPath(): string | null {
  return PRLIMIT_CANDIDATES.find((p) => existsSync(p)) ?? null;
}

const isRoot = (): boolean => process.getuid?.() === 0;

export interface HostLimiter {
  readonly kind: HostKind;
  readonly limits: HostLimits;
  /**
   * The argv prefix a sandbox runs its command under (prlimit … --; RLIMIT_NPROC only when the sandbox has its own uid,
   * ownUid: a user namespace); [] without prlimit.
   */
  readonly insideSandbox: (ownUid: boolean) => readonly string[];
  /** The cgroups the host enters (empty where none could be made). */
  readonly cgroups: readonly string[];
  /** The command as started: rlimits around it unless the sandbox applied them inside, then the cgroup entry. */
  finish(command: ServerCommand, sandboxed: boolean): ServerCommand;
  /**
   * "limits: memory 16384 MiB per process (RLIMIT_DATA) …" — what is in force and what enforces it; ownUid: the
   * sandbox has its own uid (Isolation.uid not null), where alone RLIMIT_NPROC is set.
   */
  describe(sandboxed: boolean, ownUid?: boolean): string;
}

function rlimitArgs(prlimit: string, limits: HostLimits, nproc: boolean): string[] {
  const bytes = limits.memoryMiB * 1024 * 1024;
  const args = [prlimit, `--data=${bytes}:${bytes}`, `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds}`, '--core=0:0'];
  if (nproc) args.push(`--nproc=${limits.processes}:${limits.processes}`);
  args.push('--');
  return args;
}

/**
 * The limiter of one host kind: it makes the host's cgroup now (each spawn and restart of the host enters the same
 * one) and builds the prlimit prefix. `env` may turn cgroups off (IMEP_CGROUPS=off).
 */
export function hostLimiter(
  kind: HostKind,
  registered: Partial<HostLimits> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): HostLimiter {
  const limits = resolveHostLimits(kind, registered);
  const prlimit = prlimitPath();
  const root = isRoot();
  const placement: CgroupPlacement | null = placeInCgroup(limits.memoryMiB * 1024 * 1024, limits.processes, env);
  const cgroups = placement?.dirs ?? [];
  return {
    kind,
    limits,
    insideSandbox: (ownUid) => (prlimit === null ? [] : rlimitArgs(prlimit, limits, ownUid && !root)),
    cgroups,
    finish(command, sandboxed) {
      let file = command.file;
      let args = [...command.args];
      if (!sandboxed && prlimit !== null) {
        // without the sandbox's user namespace RLIMIT_NPROC would count every process of the user: left out
        [file, ...args] = [...rlimitArgs(prlimit, limits, false), file, ...args] as [string, ...string[]];
      }
      if (cgroups.length > 0) [file, ...args] = [...cgroupEntryPrefix(cgroups), file, ...args] as [string, ...string[]];
      return { ...command, file, args, cgroups };
    },
    describe(sandboxed, ownUid = false) {
      const rl = prlimit !== null;
      const memory = [rl ? 'RLIMIT_DATA per process' : null, placement?.enforces.memory ?? null].filter(Boolean);
      const nprocHere = rl && sandboxed && ownUid && !root;
      const procs = [nprocHere ? 'RLIMIT_NPROC' : null, placement?.enforces.processes ?? null].filter(Boolean);
      const why = root
        ? 'root is exempt from RLIMIT_NPROC and no writable pids cgroup'
        : rl && sandboxed
          ? "RLIMIT_NPROC needs the sandbox's own uid (bubblewrap made no user namespace here, so it would count every process of the user), and no writable pids cgroup"
          : rl
            ? 'RLIMIT_NPROC needs the sandbox, and no writable pids cgroup'
            : 'prlimit is missing and no writable pids cgroup';
      const parts = [
        `memory ${limits.memoryMiB} MiB (${memory.length > 0 ? memory.join(', ') : 'NOT enforced: prlimit is missing (apt-get install util-linux)'})`,
        `processes ${limits.processes} (${procs.length > 0 ? procs.join(', ') : `NOT enforced: ${why}`})`,
        `CPU ${limits.cpuSeconds} s per process (${rl ? 'RLIMIT_CPU' : 'NOT enforced: prlimit is missing'})`,
        `call deadline ${limits.callDeadlineS} s (then the ${kind} is killed and restarted)`,
      ];
      return `limits: ${parts.join('; ')}`;
    },
  };
}
