/**
 * The sandbox IMEP starts a policy host in (a policy it did not write is code it must not trust): with bubblewrap
 * (Debian `bubblewrap`), the host runs in its own user, pid, ipc, uts, cgroup and network namespaces as uid/gid 65534
 * (where user namespaces work), in its own session, with every capability dropped, a scrubbed environment (an
 * allowlist of variables; PATH and HOME set), a private /tmp as its working directory and HOME, and a filesystem of
 * read-only binds: the system (/usr, /bin, /lib…), only the parts of /etc a Python program needs (ETC_ALLOWLIST: no
 * shadow, gshadow, sudoers, ssh), the Python it runs on, and IMEP's folders at neutral paths (INSIDE: imep_sim_bridge
 * at /imep/bridge, the module folders at /imep/policy/<i>) — and, writable, only the private folder of its ipc socket
 * (at /imep/ipc). bubblewrap reads its options on stdin (`--args 0`), so no command line inside names a host path.
 * It sees neither the campaigns folder, nor the key store, nor IMEP's other files, nor the parent's command line or
 * environment (its /proc is its own); a bind that would expose one of them is refused (sandbox-exposure.ts). Device
 * nodes are bound only where the protocol declares them (sandbox-devices.ts). docs/sandbox.md is the user's page.
 *
 * Where bubblewrap is missing or cannot make namespaces here, the host runs unsandboxed and the isolation says so
 * (`mode: 'none'` with the reason), which the run prints and records — never silently. `IMEP_SANDBOX=off` turns it
 * off on purpose (recorded the same way); `IMEP_SANDBOX=require` refuses to start a host without it.
 *
 * The seam for wrappers (resource limits): `sandboxed()` returns one ServerCommand { file: 'bwrap', args, input };
 * a wrapper prepends its own program to file/args and passes stdin through.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ImepError } from '../core/index.js';
import { resolveDevices, type DeviceName } from './sandbox-devices.js';
import {
  assertNoExposure,
  protectedZones,
  realish,
  type ProtectedZone,
  type RequestedBind,
} from './sandbox-exposure.js';
import type { ServerCommand } from './supervisor.js';

export type Isolation =
  | {
      readonly mode: 'bubblewrap';
      readonly readOnly: readonly string[];
      readonly writable: readonly string[];
      readonly env: readonly string[];
      /** The uid the process has inside (null: bubblewrap could not make a user namespace here, so IMEP's own). */
      readonly uid: number | null;
      /** The device nodes bound (their paths inside), and the driver files they brought. */
      readonly devices: readonly string[];
      readonly driverFiles: readonly string[];
    }
  | { readonly mode: 'none'; readonly reason: string };

/** Variables a sandboxed host may inherit (values are taken from IMEP's environment when set); PATH is set, not inherited. */
export const SANDBOX_ENV_ALLOWLIST: readonly string[] = [
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

/** The unprivileged uid and gid a sandboxed process has inside (nobody / nogroup). */
export const SANDBOX_UID = 65534;

/** Where IMEP's own folders appear inside: nothing there names where the checkout or the socket lives. */
export const INSIDE = {
  bridge: '/imep/bridge',
  ipc: '/imep/ipc',
  policy: '/imep/policy',
} as const;

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The parts of /etc a Python program (and a simulator's renderer) needs: users and groups by name, the dynamic
 * linker's cache, Debian's alternatives (BLAS), time zone, locale, TLS certificates, fonts, the Python's own
 * /etc/python3.X, and the Vulkan / GLVND / OpenCL vendor folders. Never shadow, gshadow, sudoers, ssh, ssl/private.
 */
export const ETC_ALLOWLIST: readonly string[] = [
  'passwd',
  'group',
  'nsswitch.conf',
  'host.conf',
  'hosts',
  'localtime',
  'timezone',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'mime.types',
  'os-release',
  'lsb-release',
  'debian_version',
  'fonts',
  'locale.alias',
  'locale.conf',
  'default/locale',
  'gai.conf',
  'protocols',
  'services',
  'matplotlibrc',
  'vulkan',
  'glvnd',
  'OpenCL',
  'drirc',
];

/** The /etc entries bound into a sandbox (ETC_ALLOWLIST and /etc/python3*, those that exist). */
export function etcEntries(etc = '/etc'): string[] {
  const python = existsSync(etc) ? readdirSync(etc).filter((n) => /^python3(\.\d+)?$/.test(n)) : [];
  return [...ETC_ALLOWLIST, ...python].map((n) => join(etc, n)).filter((p) => existsSync(p));
}

type Probe = { ok: true; userns: boolean } | { ok: false; reason: string };
let probed: Probe | undefined;

const probeRun = (extra: readonly string[]) =>
  spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', ...extra, '--die-with-parent', '--new-session', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
  });

/**
 * Whether bubblewrap runs here (checked once per process: it needs unprivileged or root user namespaces), and whether
 * it can make a user namespace with an unprivileged uid inside (userns false: a setuid bubblewrap where user namespaces
 * are off; the process then keeps IMEP's uid, and the isolation line says so).
 */
export function bubblewrapWorks(): Probe {
  if (probed !== undefined) return probed;
  const uid = String(SANDBOX_UID);
  const r = probeRun(['--unshare-user', '--uid', uid, '--gid', uid]);
  if (r.error === undefined && r.status === 0) return (probed = { ok: true, userns: true });
  const plain = probeRun([]);
  if (plain.error !== undefined) {
    probed = {
      ok: false,
      reason:
        (plain.error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'bubblewrap is not installed (apt-get install bubblewrap)'
          : `bubblewrap did not run: ${plain.error.message}`,
    };
  } else if (plain.status !== 0) {
    probed = {
      ok: false,
      reason: `bubblewrap cannot make namespaces here: ${(plain.stderr || `exit ${plain.status}`).trim().split('\n')[0]}`,
    };
  } else probed = { ok: true, userns: false };
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

/** Removes binds that lie inside another one of the list at the same offset (bwrap binds the outer one). */
function outermost(pairs: readonly (readonly [string, string])[]): [string, string][] {
  const seen = new Set<string>();
  const uniq = pairs
    .map(([s, t]): [string, string] => [s, resolve(t)])
    .filter(([s, t]) => (seen.has(`${s}\0${t}`) ? false : (seen.add(`${s}\0${t}`), true)))
    .sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const under = (p: string, q: string): string | undefined =>
    q === '/' ? p.slice(1) : p.startsWith(`${q}/`) ? p.slice(q.length + 1) : undefined;
  return uniq.filter(
    ([s, t]) =>
      !uniq.some(([qs, qt]) => {
        if (qs === s && qt === t) return false;
        const rest = under(t, qt);
        return rest !== undefined && (qs === '/' ? s === `/${rest}` : s === `${qs}/${rest}`);
      }),
  );
}

/** A folder the sandbox binds read-only: where from, which field asked for it, and where it appears inside. */
export interface SandboxBind {
  readonly path: string;
  /** The protocol field or variable that asks for it (named when it is refused). */
  readonly field: string;
  /** Where it appears inside (default: its own path; IMEP's folders get neutral ones, INSIDE). */
  readonly inside?: string;
}

export interface SandboxRequest {
  /** Folders the host may read (its module's folders, a replay folder); the system, Python and imep_sim_bridge are added. */
  readonly readOnly: readonly SandboxBind[];
  /** The private folder of its ipc socket (writable; appears inside at INSIDE.ipc). */
  readonly writable: readonly string[];
  /** The imep_sim_bridge package folder (appears inside at INSIDE.bridge/imep_sim_bridge). */
  readonly bridgePackage: string;
  /** Variables it may inherit besides SANDBOX_ENV_ALLOWLIST (a simulator's asset folders, e.g. MS_ASSET_DIR). */
  readonly envAllowlist?: readonly string[];
  /**
   * An argv prefix run inside the sandbox before the command (resource-limits.ts: `prlimit … --`), or a function of
   * whether the sandbox has its own uid (a user namespace: RLIMIT_NPROC counts only the sandbox's processes).
   */
  readonly wrap?: readonly string[] | ((ownUid: boolean) => readonly string[]);
  /** The field or variable that names the interpreter (refusals name it): policy.python, IMEP_PYTHON. */
  readonly pythonField?: string;
  /** The devices the protocol declares (sandbox-devices.ts) and the field that declares them. */
  readonly devices?: { readonly names: readonly DeviceName[]; readonly field: string; readonly devRoot?: string };
  /** What no bind may expose (sandbox-exposure.ts; default: protectedZones() of this environment, no campaigns folder). */
  readonly protect?: readonly ProtectedZone[];
  /** For refusals: "policy host", "simulator server", and the protocol file. */
  readonly who?: string;
  readonly file?: string;
}

/** Every host folder a request binds, with the field that asks for it (what sandbox-exposure.ts checks). */
export function requestedBinds(command: ServerCommand, request: SandboxRequest): RequestedBind[] {
  return [
    ...pythonDirs(command.file).map((path) => ({ path, field: request.pythonField ?? 'IMEP_PYTHON' })),
    { path: request.bridgePackage, field: 'the imep_sim_bridge package' },
    ...request.readOnly.map((b) => ({ path: b.path, field: b.field })),
    ...request.writable.map((path) => ({ path, field: 'the socket folder (TMPDIR)' })),
  ];
}

/** Rewrites host paths (and ipc:// endpoints under them) to where they appear inside; others are returned as they are. */
function translator(pairs: readonly (readonly [string, string])[]): (s: string) => string {
  const sorted = [...pairs].sort((a, b) => b[0].length - a[0].length);
  return (s) => {
    const scheme = s.startsWith('ipc://') ? 'ipc://' : '';
    const p = s.slice(scheme.length);
    for (const [host, inside] of sorted) {
      if (p === host || p.startsWith(`${host}/`)) return `${scheme}${inside}${p.slice(host.length)}`;
    }
    return s;
  };
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
  // nothing it binds may expose the campaigns folder, the key store, IMEP's state or HOME (refused, never trimmed)
  assertNoExposure(requestedBinds(command, request), request.protect ?? protectedZones({ env }), {
    who: request.who ?? command.label,
    ...(request.file === undefined ? {} : { file: request.file }),
  });
  const devices =
    request.devices === undefined
      ? { nodes: [], driverFiles: [] }
      : resolveDevices(request.devices.names, request.devices.field, {
          ...(request.devices.devRoot === undefined ? {} : { devRoot: request.devices.devRoot }),
        });
  // every bind's source is the real path that was checked above (sandbox-exposure.ts realish: a `..` after a symbolic
  // link goes up from where the link lands), never the path as written
  const own = (p: string): [string, string] => [realish(p), resolve(p)];
  // the system, /etc's needed parts, the Python and the data folders an adapter names by absolute path: at their own paths
  const ownPath = request.readOnly.filter((b) => b.inside === undefined).map((b) => b.path);
  const readOnly = outermost([
    ...SYSTEM_DIRS.filter((d) => existsSync(d)).map(own),
    ...etcEntries().map(own),
    ...pythonDirs(command.file).map(own),
    ...ownPath.filter((d) => existsSync(d)).map(own),
    ...devices.driverFiles.map(own),
  ]);
  // IMEP's folders at neutral paths: the package, the module folders, the socket folder
  const neutral: [string, string][] = [[realish(request.bridgePackage), `${INSIDE.bridge}/imep_sim_bridge`]];
  for (const b of request.readOnly)
    if (b.inside !== undefined && existsSync(b.path)) neutral.push([realish(b.path), b.inside]);
  const writable = outermost(request.writable.map(own)).map(([d], i): [string, string] => [
    d,
    i === 0 ? INSIDE.ipc : `${INSIDE.ipc}${i}`,
  ]);
  // host paths as written (and as resolved as text) name what they are bound at
  const aliases: [string, string][] = [
    [request.bridgePackage, `${INSIDE.bridge}/imep_sim_bridge`],
    ...request.readOnly.flatMap((b): [string, string][] =>
      b.inside !== undefined ? [[b.path, b.inside]] : [[b.path, resolve(b.path)]],
    ),
    ...request.writable.flatMap((d): [string, string][] => {
      const at = writable.find(([w]) => w === realish(d) || realish(d).startsWith(`${w}/`));
      return at === undefined ? [] : [[d, `${at[1]}${realish(d).slice(at[0].length)}`]];
    }),
  ];
  const inside = translator([...aliases.filter(([h, t]) => h !== t), ...neutral, ...writable]);
  const bridgeDir = resolve(dirname(request.bridgePackage)); // on PYTHONPATH: the package's parent, INSIDE.bridge
  const targets = [...readOnly.map(([, t]) => t), ...neutral.map(([, t]) => t), INSIDE.bridge];
  // PYTHONPATH: each entry where it appears inside; one that is not bound does not exist there and is dropped
  const pythonPath = (command.env?.['PYTHONPATH'] ?? '')
    .split(':')
    .filter((p) => p !== '')
    .map((p) => (resolve(p) === bridgeDir ? INSIDE.bridge : inside(p)))
    .filter((p) => targets.some((t) => p === t || p.startsWith(`${t}/`)));
  const childEnv: Record<string, string> = {};
  const names = [...new Set([...SANDBOX_ENV_ALLOWLIST, ...(request.envAllowlist ?? [])])].filter(
    (k) => env[k] !== undefined && command.env?.[k] === undefined && k !== 'PYTHONPATH',
  );
  for (const k of names) childEnv[k] = env[k] as string;
  for (const [k, v] of Object.entries(command.env ?? {})) if (k !== 'PYTHONPATH') childEnv[k] = v;
  if (pythonPath.length > 0) childEnv['PYTHONPATH'] = pythonPath.join(':');
  childEnv['HOME'] = '/tmp';
  childEnv['PATH'] = [...new Set([dirname(command.file), '/usr/local/bin', '/usr/bin', '/bin'])].join(':');
  const uid = works.userns ? SANDBOX_UID : null;
  const wrap = typeof request.wrap === 'function' ? request.wrap(uid !== null) : (request.wrap ?? []);
  const options = ['--die-with-parent', '--new-session', '--unshare-all', '--cap-drop', 'ALL', '--clearenv'];
  if (uid !== null) options.push('--unshare-user', '--uid', String(uid), '--gid', String(uid));
  options.push('--hostname', 'sandbox');
  for (const [k, v] of Object.entries(childEnv)) options.push('--setenv', k, v);
  // a private /tmp first, so that binds below it (a module or a socket folder under /tmp) are made inside it
  options.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  for (const [d, t] of readOnly) options.push('--ro-bind', d, t);
  for (const [d, t] of neutral) options.push('--ro-bind', d, t);
  for (const [d, t] of writable) options.push('--bind', d, t);
  for (const n of devices.nodes) options.push('--dev-bind', n.source, n.target);
  options.push('--chdir', '/tmp');
  // the options travel on bwrap's stdin (--args 0), so the command line inside names no host path; the program's own
  // arguments are rewritten to the inside paths
  return {
    command: {
      file: 'bwrap',
      args: ['--args', '0', '--', ...wrap, command.file, ...command.args.map(inside)],
      input: `${options.join('\0')}\0`,
      env: {},
      extendEnv: false,
      label: command.label,
    },
    isolation: {
      mode: 'bubblewrap',
      readOnly: [...readOnly.map(([d]) => d), ...neutral.map(([d]) => d)],
      writable: writable.map(([d]) => d),
      env: Object.keys(childEnv),
      uid,
      devices: devices.nodes.map((n) => n.target),
      driverFiles: devices.driverFiles,
    },
  };
}

/** One line for the terminal, the run record and the report. */
export function describeIsolation(isolation: Isolation): string {
  if (isolation.mode === 'none') return `isolation: none (${isolation.reason})`;
  const uid = isolation.uid === null ? "IMEP's uid (no user namespace here)" : `uid ${isolation.uid}`;
  const devices = isolation.devices.length === 0 ? 'no devices' : `devices ${isolation.devices.join(', ')}`;
  return `isolation: bubblewrap (own namespaces, ${uid}, no capabilities, scrubbed environment, minimal /etc; reads ${isolation.readOnly.length} folders, writes only its socket folder; ${devices})`;
}
