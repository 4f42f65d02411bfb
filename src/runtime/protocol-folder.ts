/**
 * Where a folder a protocol names lies: an absolute path as written, a relative one under the first of `roots` that
 * holds it (the working folder, then the package root — as checkpoint.path resolves); undefined when none does.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

export function findProtocolFolder(dir: string, roots: readonly string[]): string | undefined {
  if (isAbsolute(dir)) return existsSync(dir) ? dir : undefined;
  return roots.map((r) => resolve(r, dir)).find((p) => existsSync(p));
}

/** "" for an absolute path, else " (looked in ROOTS)": the tail of a refusal that names where it looked. */
export function lookedIn(dir: string, roots: readonly string[]): string {
  return isAbsolute(dir) ? '' : ` (looked in ${roots.join(', ')})`;
}
