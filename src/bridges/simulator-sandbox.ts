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
import { dirname, isAbsolute, join } from 'node:path';
import { sandboxed, type Isolation } from './sandbox.js';
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

/** The command of a simulator server wrapped in the sandbox, and its isolation. */
export function sandboxSimulator(
  command: ServerCommand,
  endpoint: string,
  options: { readonly replayDir?: string; readonly bridgePackage: string; readonly wrap?: readonly string[] },
  env: NodeJS.ProcessEnv = process.env,
): { command: ServerCommand; isolation: Isolation } {
  const readOnly: string[] = [...listed(env['IMEP_SANDBOX_READ']), ...listed(command.env?.['PYTHONPATH'])];
  if (options.replayDir !== undefined) readOnly.push(options.replayDir);
  const setEnv: Record<string, string> = {};
  const home = homedir();
  const liberoConfig =
    env['LIBERO_CONFIG_PATH'] ?? (existsSync(join(home, '.libero')) ? join(home, '.libero') : undefined);
  if (liberoConfig !== undefined && existsSync(liberoConfig)) {
    readOnly.push(liberoConfig);
    setEnv['LIBERO_CONFIG_PATH'] = liberoConfig; // HOME is /tmp inside: ~/.libero must be named
  }
  const assets =
    env['MS_ASSET_DIR'] ??
    (existsSync(join(home, '.maniskill', 'data')) ? join(home, '.maniskill', 'data') : undefined);
  if (assets !== undefined && existsSync(assets)) {
    readOnly.push(assets);
    setEnv['MS_ASSET_DIR'] = assets;
  }
  const writable = endpoint.startsWith('ipc://') ? [dirname(endpoint.slice('ipc://'.length))] : [];
  const plain = { ...command, env: { ...(command.env ?? {}), ...setEnv } };
  // numba cannot use a read-only in-tree cache: inside the sandbox it compiles into a folder of the private /tmp,
  // which the server first fills from the in-tree caches its adapters declare (sim-bridge/imep_sim_bridge/numba_cache.py)
  const wrapped = sandboxed(
    { ...plain, env: { ...plain.env, NUMBA_CACHE_DIR: SANDBOX_NUMBA_CACHE_DIR } },
    {
      readOnly,
      writable,
      bridgePackage: options.bridgePackage,
      envAllowlist: SIMULATOR_ENV_ALLOWLIST,
      ...(options.wrap === undefined ? {} : { wrap: options.wrap }),
    },
    env,
  );
  // unsandboxed, /tmp is the machine's: the server uses the in-tree caches in place, as a plain python would
  return wrapped.isolation.mode === 'none' ? { command: plain, isolation: wrapped.isolation } : wrapped;
}
