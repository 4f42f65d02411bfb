/**
 * The hidden temporary folder a new unit is built in before it is renamed into place (campaign-setup.ts
 * `createAndPrecommit`): its name, which leftovers of earlier precommits may be removed, and the refusal when
 * another imep process put the same unit in place first.
 *
 * The name carries the pid of the process building it: `.<unit folder>.tmp-<pid>-<6 hex>`. A leftover is
 * removed only when that process is gone, so two `imep campaign run`s of one protocol started together never
 * delete each other's folder; the one that renames second is refused with one line (E_OUT_OF_ORDER, exit 2)
 * and leaves nothing behind — the unit the other put in place is untouched and carries on.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ImepError } from '../core/index.js';

/** The temporary folder this process builds unit folder `folder` in, inside `campaignsDir`. */
export function precommitFolder(campaignsDir: string, folder: string, pid: number = process.pid): string {
  return join(campaignsDir, `.${folder}.tmp-${pid}-${randomBytes(3).toString('hex')}`);
}

/**
 * The entries of `names` that are leftovers of precommits of `folder` whose process is gone (`alive(pid)`
 * false). A name that does not parse as ours is never returned.
 */
export function stalePrecommitFolders(
  names: readonly string[],
  folder: string,
  alive: (pid: number) => boolean,
): string[] {
  const prefix = `.${folder}.tmp-`;
  return names.filter((name) => {
    if (!name.startsWith(prefix)) return false;
    const m = /^(\d+)-[0-9a-f]{6}$/.exec(name.slice(prefix.length));
    if (m === null) return false;
    const pid = Number(m[1]);
    return Number.isSafeInteger(pid) && pid > 0 && !alive(pid);
  });
}

/** Whether a rename into `target` failed because `target` exists already (another process put it there). */
export function targetTaken(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EISDIR';
}

/** The refusal for a precommit that lost the race for unit folder `dir`. */
export function precommittedElsewhere(dir: string, cause: unknown): ImepError {
  return new ImepError(
    'E_OUT_OF_ORDER',
    'this unit was precommitted by another imep process while this one prepared it',
    {
      file: dir,
      hint: `one writer per unit: that process runs it; see \`imep campaign status ${dir}\`, and resume it there if it stops`,
      cause,
    },
  );
}
