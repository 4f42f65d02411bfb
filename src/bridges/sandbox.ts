/**
 * The sandbox IMEP starts a policy host in (a policy it did not write is code it must not trust): with bubblewrap
 * (Debian `bubblewrap`), the host runs in its own user, pid, ipc, uts, cgroup and network namespaces, in its own
 * session, with every capability dropped, a scrubbed environment (an allowlist of variables), a private /tmp as its
 * working directory and HOME, and a filesystem of read-only binds: the system (/usr, /bin, /lib…, /etc), the Python
 * it runs on, IMEP's `imep_sim_bridge` package and the folders the protocol declares for its module — and, writable,
 * only the private folder of its ipc socket. It sees neither the campaigns folder (plans, rows being written), nor
 * the key store, nor IMEP's other files, nor the parent's command line or environment (its /proc is its own).
 *
 * Where bubblewrap is missing or cannot make namespaces here, the host runs unsandboxed and the isolation says so
 * (`mode: 'none'` with the reason), which the run prints and records — never silently. `IMEP_SANDBOX=off` turns it
 * off on purpose (recorded the same way); `IMEP_SANDBOX=require` refuses to start a host without it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ImepError } from '../core/index.js';
import type { ServerCommand } from './supervisor.js';

export type Isolation =
  | {
      readonly mode: 'bubblewrap';
      readonly readOnly: readonly string[];
      readonly writable: readonly string[];
      readonly env: readonly string[];
    }
  | { readonly mode: 'none'; readonly reason: string };

/** Variables a sandboxed host may inherit (values are taken from IMEP's environment when set). */
export const SANDBOX_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'PYTHONHASHSEED',
  'OMP_NUM_THREADS',
  'OPENBLAS_NUM_THREADS',
  'OPENBLAS_CORETYPE',
  'OPENBLAS_L2_SIZE',
  'MKL_NUM_THREADS',
  'MUJOCO_GL',
  'PYOPENGL_PLATFORM',
  'EGL_PLATFORM',
  'VK_ICD_FILENAMES',
  'LIBERO_CONFIG_PATH',
  'CUDA_VISIBLE_DEVICES',
];

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

let probed: { ok: true } | { ok: false; reason: string } | undefined;

/** Whether bubblewrap runs here (checked once per process: it needs unprivileged or root user namespaces). */
export function bubblewrapWorks(): { ok: true } | { ok: false; reason: string } {
  if (probed !== undefined) return probed;
  const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', '--new-session', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (r.error !== undefined) {
    probed = {
      ok: false,
      reason:
        (r.error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'bubblewrap is not installed (apt-get install bubblewrap)'
          : `bubblewrap did not run: ${r.error.message}`,
    };
  } else if (r.status !== 0) {
    probed = {
      ok: false,
      reason: `bubblewrap cannot make namespaces here: ${(r.stderr || `exit ${r.status}`).trim().split('\n')[0]}`,
    };
  } else probed = { ok: true };
  return probed;
}

/**
 * The folders a Python interpreter needs: its own prefix and, for a virtual environment, its base's. A prefix
 * reached through a symbolic link is bound under its real path too: what the venv's files name by absolute path
 * (MIKASA's Vulkan ICD `library_path`, written at setup) is the real one.
 */
export function pythonDirs(python: string): string[] {
  const file = isAbsolute(python) ? python : resolve(python);
  if (!existsSync(file)) return [];
  const prefix = dirname(dirname(file)); // …/bin/python → …
  const out = [prefix];
  try {
    out.push(realpathSync(prefix));
  } catch {
    // unreadable: the host will fail to start, and say so
  }
  const cfg = join(prefix, 'pyvenv.cfg');
  if (existsSync(cfg)) {
    const home = /^home\s*=\s*(.+)$/m.exec(readFileSync(cfg, 'utf8'))?.[1]?.trim();
    if (home !== undefined) out.push(dirname(home));
  }
  try {
    out.push(dirname(dirname(realpathSync(file))));
  } catch {
    // a dangling link: the host will fail to start, and say so
  }
  return out;
}

/** Removes paths that lie inside another one of the list (bwrap binds the outer one). */
function outermost(paths: readonly string[]): string[] {
  const uniq = [...new Set(paths.map((p) => resolve(p)))].sort();
  return uniq.filter((p) => !uniq.some((q) => q !== p && (p.startsWith(`${q}/`) || q === '/')));
}

export interface SandboxRequest {
  /** Folders the host may read (its module's folders); the Python and imep_sim_bridge are added. */
  readonly readOnly: readonly string[];
  /** Folders the host may write (its socket's private folder). */
  readonly writable: readonly string[];
  /** The imep_sim_bridge package folder. */
  readonly bridgePackage: string;
  /** Variables it may inherit besides SANDBOX_ENV_ALLOWLIST (a simulator's asset folders, e.g. MS_ASSET_DIR). */
  readonly envAllowlist?: readonly string[];
  /** An argv prefix run inside the sandbox before the command (resource-limits.ts: `prlimit … --`). */
  readonly wrap?: readonly string[];
}

/** A server command whose program does not exist: the user's to fix (exit 2), naming the program and IMEP_PYTHON. */
export function commandNotFound(command: ServerCommand): ImepError {
  return new ImepError('E_SIM_UNAVAILABLE', `${command.label}: ${command.file} not found`, {
    hint: 'install it or set IMEP_PYTHON',
  });
}

/** The command wrapped in the sandbox, and the isolation it gets (or why it gets none). */
export function sandboxed(
  command: ServerCommand,
  request: SandboxRequest,
  env: NodeJS.ProcessEnv = process.env,
): { command: ServerCommand; isolation: Isolation } {
  const want = (env['IMEP_SANDBOX'] ?? 'auto').toLowerCase();
  if (want === 'off') return { command, isolation: { mode: 'none', reason: 'turned off (IMEP_SANDBOX=off)' } };
  // inside the sandbox the program bwrap execs is no longer the one spawned: a missing one is named here, as the
  // supervisor names it when it spawns the program itself
  if (command.file.includes('/') && !existsSync(command.file)) throw commandNotFound(command);
  const works = bubblewrapWorks();
  if (!works.ok) {
    if (want === 'require') {
      throw new ImepError('E_SIM_UNAVAILABLE', `IMEP_SANDBOX=require, but ${works.reason}`, {
        field: 'IMEP_SANDBOX',
        hint: 'install bubblewrap, or unset IMEP_SANDBOX to run the host unsandboxed (recorded as isolation: none)',
      });
    }
    return { command, isolation: { mode: 'none', reason: works.reason } };
  }
  const readOnly = outermost([
    ...SYSTEM_DIRS.filter((d) => existsSync(d)),
    ...pythonDirs(command.file),
    request.bridgePackage,
    ...request.readOnly.filter((d) => existsSync(d)),
  ]);
  const writable = outermost(request.writable);
  const names = [...new Set([...SANDBOX_ENV_ALLOWLIST, ...(request.envAllowlist ?? [])])].filter(
    (k) => env[k] !== undefined && command.env?.[k] === undefined,
  );
  const args = ['--die-with-parent', '--new-session', '--unshare-all', '--cap-drop', 'ALL', '--clearenv'];
  for (const k of names) args.push('--setenv', k, env[k] as string);
  for (const [k, v] of Object.entries(command.env ?? {})) args.push('--setenv', k, v);
  args.push('--setenv', 'HOME', '/tmp');
  // a private /tmp first, so that binds below it (a module or a socket folder under /tmp) are made inside it
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  for (const d of readOnly) args.push('--ro-bind', d, d);
  for (const d of writable) args.push('--bind', d, d);
  args.push('--chdir', '/tmp', '--', ...(request.wrap ?? []), command.file, ...command.args);
  return {
    command: { file: 'bwrap', args, env: {}, extendEnv: false, label: command.label },
    isolation: { mode: 'bubblewrap', readOnly, writable, env: [...names, ...Object.keys(command.env ?? {}), 'HOME'] },
  };
}

/** One line for the terminal, the run record and the report. */
export function describeIsolation(isolation: Isolation): string {
  if (isolation.mode === 'none') return `isolation: none (${isolation.reason})`;
  return `isolation: bubblewrap (own namespaces, no capabilities, scrubbed environment; reads ${isolation.readOnly.length} folders, writes only its socket folder)`;
}
