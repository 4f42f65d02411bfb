/**
 * The sandbox of a simulator server IMEP starts (`python3 -m imep_sim_bridge serve`, sandbox.ts's bubblewrap): a
 * simulator stack is third-party code (LIBERO, robosuite, ManiSkill, SAPIEN and their dependencies) running beside
 * the evaluation, so it gets what a policy host gets — its own namespaces, no capabilities, a scrubbed environment,
 * a private /tmp as HOME and working directory, and read-only binds of only what it needs:
 *
 * - the system folders, the Python it runs on (a venv and its base: where the simulator packages, LIBERO's
 *   bundled assets and `libero-config/`, and MIKASA's Mesa lavapipe ICD live) and the imep_sim_bridge package;
 * - the replay folder (adapter replay), $LIBERO_CONFIG_PATH (or ~/.libero when unset and present), ManiSkill's
 *   asset folder ($MS_ASSET_DIR, or ~/.maniskill/data when unset and present), the folders on the user's
 *   $PYTHONPATH (the server's import path includes them), and the folders listed in $IMEP_SANDBOX_READ
 *   (colon-separated, for a simulator installed elsewhere, e.g. an upstream LIBERO checkout and its datasets);
 * - writable: only the private folder of its ipc socket.
 *
 * $NUMBA_CACHE_DIR points into its private /tmp (numba compiles there; the server seeds it from the read-only in-tree
 * caches). It sees neither the campaigns folder nor the key store nor IMEP's other files. Where bubblewrap is missing the
 * server runs unsandboxed and the isolation says so (IMEP_SANDBOX=off|require as for policy hosts).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { requestedBinds, sandboxed, type Isolation, type SandboxBind, type SandboxRequest } from './sandbox.js';
import type { DeviceName } from './sandbox-devices.js';
import type { ProtectedZone, RequestedBind } from './sandbox-exposure.js';
import type { ServerCommand } from './supervisor.js';

/** Variables simulator stacks read besides the policy hosts' allowlist (sandbox.ts): renderers and asset folders. */
export const SIMULATOR_ENV_ALLOWLIST: readonly string[] = [
  'VK_DRIVER_FILES',
  'MUJOCO_EGL_DEVICE_ID',
  'LIBGL_ALWAYS_SOFTWARE',
  'GALLIUM_DRIVER',
  'MESA_GL_VERSION_OVERRIDE',
  'MS_ASSET_DIR',
  'PYTHONPATH',
  'PYTHONUNBUFFERED',
];

/** Where a sandboxed simulator server's numba keeps compiled functions: inside its private, per-process /tmp. */
export const SANDBOX_NUMBA_CACHE_DIR = '/tmp/imep-numba-cache';

/** Folders named by a colon-separated variable that exist (absolute paths only). */
function listed(value: string | undefined): string[] {
  return (value ?? '').split(':').filter((p) => p !== '' && isAbsolute(p) && existsSync(p));
}

export interface SimulatorSandboxOptions {
  readonly replayDir?: string;
  readonly bridgePackage: string;
  /** The devices `simulator.devices` declares (sandbox-devices.ts). */
  readonly devices?: readonly DeviceName[];
  /** What no bind may expose (the campaigns folder included; sandbox-exposure.ts). */
  readonly protect?: readonly ProtectedZone[];
  /** The protocol file, for refusals. */
  readonly file?: string;
  /** An argv prefix run inside the sandbox before the command (resource-limits.ts: `prlimit … --`; SandboxRequest.wrap). */
  readonly wrap?: SandboxRequest['wrap'];
}

/**
 * What a simulator server's sandbox is asked for: its data folders and the variables naming them (HOME is /tmp inside:
 * ~/.libero must be named), the replay folder, the socket folder, the declared devices.
 */
export function simulatorSandboxRequest(
  command: ServerCommand,
  endpoint: string,
  options: SimulatorSandboxOptions,
  env: NodeJS.ProcessEnv = process.env,
): { request: SandboxRequest; setEnv: Record<string, string> } {
  const bridgeDir = resolve(dirname(options.bridgePackage));
  const readOnly: SandboxBind[] = [
    ...listed(env['IMEP_SANDBOX_READ']).map((path) => ({ path, field: 'IMEP_SANDBOX_READ' })),
    // the user's PYTHONPATH (IMEP's sim-bridge folder is the package's, bound at INSIDE.bridge)
    ...listed(command.env?.['PYTHONPATH'])
      .filter((p) => resolve(p) !== bridgeDir)
      .map((path) => ({ path, field: 'PYTHONPATH' })),
  ];
  // at its own path: the adapter reports it (the run record's simulatorEnvironment names the host folder)
  if (options.replayDir !== undefined) readOnly.push({ path: options.replayDir, field: 'simulator.replayDir' });
  const setEnv: Record<string, string> = {};
  const home = env['HOME'] ?? homedir();
  const liberoConfig =
    env['LIBERO_CONFIG_PATH'] ?? (existsSync(join(home, '.libero')) ? join(home, '.libero') : undefined);
  if (liberoConfig !== undefined && existsSync(liberoConfig)) {
    readOnly.push({ path: liberoConfig, field: 'LIBERO_CONFIG_PATH' });
    setEnv['LIBERO_CONFIG_PATH'] = liberoConfig;
  }
  const assets =
    env['MS_ASSET_DIR'] ??
    (existsSync(join(home, '.maniskill', 'data')) ? join(home, '.maniskill', 'data') : undefined);
  if (assets !== undefined && existsSync(assets)) {
    readOnly.push({ path: assets, field: 'MS_ASSET_DIR' });
    setEnv['MS_ASSET_DIR'] = assets;
  }
  const writable = endpoint.startsWith('ipc://') ? [dirname(endpoint.slice('ipc://'.length))] : [];
  return {
    request: {
      readOnly,
      writable,
      bridgePackage: options.bridgePackage,
      envAllowlist: SIMULATOR_ENV_ALLOWLIST,
      pythonField: 'IMEP_PYTHON',
      who: 'simulator server',
      ...(options.devices === undefined ? {} : { devices: { names: options.devices, field: 'simulator.devices' } }),
      ...(options.protect === undefined ? {} : { protect: options.protect }),
      ...(options.file === undefined ? {} : { file: options.file }),
      ...(options.wrap === undefined ? {} : { wrap: options.wrap }),
    },
    setEnv,
  };
}

/** Every host folder a simulator server's sandbox would bind (what precommit checks, sandbox-exposure.ts). */
export function simulatorBinds(
  command: ServerCommand,
  options: SimulatorSandboxOptions,
  env: NodeJS.ProcessEnv = process.env,
): RequestedBind[] {
  return requestedBinds(command, simulatorSandboxRequest(command, 'ipc:///nonexistent/x.sock', options, env).request);
}

/** The command of a simulator server wrapped in the sandbox, and its isolation. */
export function sandboxSimulator(
  command: ServerCommand,
  endpoint: string,
  options: SimulatorSandboxOptions,
  env: NodeJS.ProcessEnv = process.env,
): { command: ServerCommand; isolation: Isolation } {
  const { request, setEnv } = simulatorSandboxRequest(command, endpoint, options, env);
  const plain = { ...command, env: { ...(command.env ?? {}), ...setEnv } };
  // numba cannot use a read-only in-tree cache: inside the sandbox it compiles into a folder of the private /tmp,
  // which the server first fills from the in-tree caches its adapters declare (sim-bridge/imep_sim_bridge/numba_cache.py)
  const wrapped = sandboxed(
    { ...plain, env: { ...plain.env, NUMBA_CACHE_DIR: SANDBOX_NUMBA_CACHE_DIR } },
    request,
    env,
  );
  // unsandboxed, /tmp is the machine's: the server uses the in-tree caches in place, as a plain python would
  return wrapped.isolation.mode === 'none' ? { command: plain, isolation: wrapped.isolation } : wrapped;
}
