/**
 * What a sandbox must never expose, whatever a protocol or the environment binds into it (issue 32 item 1):
 *
 * - the campaigns folder (the run's output folder: plans, rows being written, arrival-order keys);
 * - IMEP's own state: `~/.imep` (the default key store `~/.imep/keys`) and every absolute path an `IMEP_*` variable
 *   names (the key store `IMEP_KEYS_DIR` included) — except IMEP_PYTHON (the interpreter, bound on purpose) and
 *   IMEP_SANDBOX_READ (the operator's extra sandbox folders, themselves checked as binds);
 * - HOME itself: a bind may lie inside HOME (a module folder, a venv) but never be HOME or contain it;
 * - HOME's private folders (HOME_PRIVATE: ~/.ssh, ~/.gnupg, ~/.aws, ~/.config, …): neither bound nor contained.
 *
 * A bind exposes a protected folder when it is that folder, contains it, or (except for HOME) lies inside it; paths are
 * compared by their real paths (a symbolic link is no way round). `findExposure` names the first such pair;
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

/** The real path of `p`: its nearest existing ancestor resolved, the rest appended (p need not exist). */
export function realish(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const up = dirname(abs);
    return up === abs ? abs : join(realish(up), basename(abs));
  }
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
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('IMEP_') || NOT_STATE.has(k) || v === undefined) continue;
    for (const p of v.split(':'))
      if (isAbsolute(p))
        zones.push({ path: p, what: k === 'IMEP_KEYS_DIR' ? 'the key store (IMEP_KEYS_DIR)' : `IMEP's state (${k})` });
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
