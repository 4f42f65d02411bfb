/**
 * What a sandbox must never expose, whatever a protocol or the environment binds into it (issue 32 item 1):
 *
 * - the campaigns folder (the run's output folder: plans, rows being written, arrival-order keys);
 * - IMEP's own state: `~/.imep` (the default key store `~/.imep/keys`), the key store where key-store.ts finds it
 *   (`IMEP_KEYS_DIR`, a relative value from the working directory) and every absolute path an `IMEP_*` variable
 *   names — except IMEP_PYTHON (the interpreter, bound on purpose) and
 *   IMEP_SANDBOX_READ (the operator's extra sandbox folders, themselves checked as binds);
 * - HOME itself: a bind may lie inside HOME (a module folder, a venv) but never be HOME or contain it;
 * - HOME's private folders (HOME_PRIVATE: ~/.ssh, ~/.gnupg, ~/.aws, ~/.config, …): neither bound nor contained.
 *
 * A bind exposes a protected folder when it is that folder, contains it, or (except for HOME) lies inside it; paths are
 * compared by their real paths as the kernel resolves them (a symbolic link, or a `..` after one, is no way round). `findExposure` names the first such pair;
 * `assertNoExposure` refuses it in one line naming the field that asked for the bind and what it would expose.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { ImepError } from '../core/index.js';

/** A folder (or file) the sandbox is asked to bind, and the protocol field or variable that asks. */
export interface RequestedBind {
  readonly path: string;
  readonly field: string;
}

export interface ProtectedZone {
  readonly path: string;
  /** For the message: "the campaigns folder", "the key store (IMEP_KEYS_DIR)". */
  readonly what: string;
  /** Whether a bind inside it is allowed (HOME: yes, subfolders that are not private; everything else: no). */
  readonly insideAllowed?: boolean;
}

/** HOME's private folders: credentials, keys, tokens and shell histories (relative to HOME). */
export const HOME_PRIVATE: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config',
  '.kube',
  '.docker',
  '.netrc',
  '.git-credentials',
  '.password-store',
  '.pki',
  '.local/share/keyrings',
  '.cache/huggingface',
  '.huggingface',
  '.npmrc',
  '.pypirc',
  '.mozilla',
  '.vnc',
  '.bash_history',
  '.zsh_history',
  '.python_history',
  '.imep',
];

/** IMEP_* variables that name what the sandbox is given on purpose, not IMEP's state. */
const NOT_STATE = new Set(['IMEP_PYTHON', 'IMEP_SANDBOX', 'IMEP_SANDBOX_READ']);

/**
 * The real path of `p`, as the kernel (and bubblewrap) would reach it: libc's realpath (`realpathSync.native`: Node's
 * own `realpathSync` removes `..` as text first) on the path as written, so a
 * `..` after a symbolic link goes up from where the link lands (`mods/link/..` with `link -> ~/.imep/keys/sub` is
 * ~/.imep/keys, not mods). Only components that do not exist are resolved as text (p need not exist). A relative p is
 * taken from the working directory.
 */
export function realish(p: string): string {
  const abs = isAbsolute(p) ? p : `${process.cwd()}/${p}`;
  try {
    return realpathSync.native(abs);
  } catch {
    // walk it: each existing prefix by its real path, the rest (and a `..` after it) as text
    let cur = '/';
    for (const c of abs.split('/')) {
      if (c === '' || c === '.') continue;
      if (c === '..') {
        cur = dirname(cur);
        continue;
      }
      const next = join(cur, c);
      try {
        cur = realpathSync.native(next);
      } catch {
        cur = next;
      }
    }
    return cur;
  }
}

/**
 * Where the key store is (the rule of src/signing/key-store.ts `keysDir`, which bridges may not import; a test holds
 * the two together): IMEP_KEYS_DIR when set (a relative value from the working directory), else ~/.imep/keys.
 */
export function keyStoreDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const fromEnv = env['IMEP_KEYS_DIR']?.trim();
  return fromEnv ? resolve(fromEnv) : join(home, '.imep', 'keys');
}

const inside = (p: string, dir: string): boolean => dir === '/' || p.startsWith(`${dir}/`);

/** The protected folders of this machine and run (campaignsDir: the run's output folder, when known). */
export function protectedZones(
  options: {
    readonly campaignsDir?: string | undefined;
    readonly env?: NodeJS.ProcessEnv;
    readonly home?: string;
  } = {},
): ProtectedZone[] {
  const env = options.env ?? process.env;
  const home = options.home ?? env['HOME'] ?? homedir();
  const zones: ProtectedZone[] = [];
  if (options.campaignsDir !== undefined)
    zones.push({ path: options.campaignsDir, what: 'the campaigns folder (plans, rows, arrival-order keys)' });
  zones.push({ path: join(home, '.imep', 'keys'), what: 'the key store (~/.imep/keys)' });
  // the key store where the key store itself looks for it (a relative IMEP_KEYS_DIR from the working directory)
  if (env['IMEP_KEYS_DIR']?.trim()) zones.push({ path: keyStoreDir(env, home), what: 'the key store (IMEP_KEYS_DIR)' });
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('IMEP_') || NOT_STATE.has(k) || k === 'IMEP_KEYS_DIR' || v === undefined) continue;
    // only absolute values: the others are names and switches (IMEP_OPERATOR, IMEP_SIGNING, IMEP_CGROUPS), not folders
    for (const p of v.split(':')) if (isAbsolute(p)) zones.push({ path: p, what: `IMEP's state (${k})` });
  }
  for (const p of HOME_PRIVATE)
    zones.push({
      path: join(home, p),
      what: p === '.imep' ? "IMEP's own state (~/.imep)" : `a private folder of HOME (~/${p})`,
    });
  zones.push({
    path: home,
    what: 'your home folder (HOME): bind only the subfolders the process needs',
    insideAllowed: true,
  });
  return zones;
}

/** The first bind that exposes a protected zone, and the zone; undefined when none does. */
export function findExposure(
  binds: readonly RequestedBind[],
  zones: readonly ProtectedZone[],
): { readonly bind: RequestedBind; readonly zone: ProtectedZone } | undefined {
  const real = zones.map((z) => ({ zone: z, paths: [...new Set([resolve(z.path), realish(z.path)])] }));
  for (const bind of binds) {
    const b = realish(bind.path);
    for (const { zone, paths } of real) {
      if (paths.some((z) => b === z || inside(z, b) || (zone.insideAllowed !== true && inside(b, z))))
        return { bind, zone };
    }
  }
  return undefined;
}

/** Refuses (E_PROTOCOL_INVALID, one line) a bind that would expose a protected zone to `who`. */
export function assertNoExposure(
  binds: readonly RequestedBind[],
  zones: readonly ProtectedZone[],
  context: { readonly who: string; readonly file?: string },
): void {
  const hit = findExposure(binds, zones);
  if (hit === undefined) return;
  const { bind, zone } = hit;
  const same = realish(bind.path) === realish(zone.path);
  throw new ImepError(
    'E_PROTOCOL_INVALID',
    `${bind.path} would be bound into the sandboxed ${context.who}, exposing ${zone.what}${same ? '' : ` at ${zone.path}`}`,
    {
      ...(context.file === undefined ? {} : { file: context.file }),
      field: bind.field,
      hint: 'bind only the folders the process must import (a module in its own folder, a venv); keep campaigns, keys and HOME out of them',
    },
  );
}
