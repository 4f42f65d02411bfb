/**
 * Where a campaign's evidence unit lives: `<campaigns dir>/<protocol id>-<first 12 hex of the protocol
 * hash>/`. The unit's id (and its key in the seed registry) is the protocol id, which is what other
 * protocols name under `seeds.reuse`.
 *
 * One frozen protocol has one unit. A protocol file whose hash differs from the unit already made for
 * its id was edited after precommit: refused with E_PROTOCOL_FROZEN (restore it, or amend the unit; a
 * new campaign needs a new protocol id), never a second unit.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError } from '../core/index.js';

export const HASH_CHARS = 12;

export function unitFolderName(protocolId: string, protocolHash: string): string {
  return `${protocolId}-${protocolHash.slice(0, HASH_CHARS)}`;
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Unit folders already made for `protocolId` (full paths, sorted). */
export async function unitsOf(campaignsDir: string, protocolId: string): Promise<string[]> {
  const names = await readdir(campaignsDir, { withFileTypes: true }).catch(() => []);
  const re = new RegExp(`^${protocolId.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}-[0-9a-f]{${HASH_CHARS}}$`);
  return names
    .filter((d) => d.isDirectory() && re.test(d.name))
    .map((d) => join(campaignsDir, d.name))
    .sort();
}

/**
 * The unit folder for a protocol; refuses (E_PROTOCOL_FROZEN) when another unit of the same protocol
 * id exists, i.e. the protocol file was edited after its precommit.
 */
export async function unitDirFor(
  campaignsDir: string,
  protocolId: string,
  protocolHash: string,
  file: string,
): Promise<{ dir: string; exists: boolean }> {
  const dir = join(campaignsDir, unitFolderName(protocolId, protocolHash));
  if (await exists(join(dir, 'unit.json'))) return { dir, exists: true };
  const others = (await unitsOf(campaignsDir, protocolId)).filter((d) => d !== dir);
  const other = others[0];
  if (other !== undefined) {
    throw new ImepError(
      'E_PROTOCOL_FROZEN',
      `the protocol was edited after precommit: it hashes to ${protocolHash.slice(0, HASH_CHARS)}…, but unit ${other} froze protocol "${protocolId}" with another hash`,
      {
        file,
        hint: `restore the frozen version (${join(other, 'protocol.json')}); record changes with \`imep campaign amend ${other} --text …\`; a new campaign needs a new protocol id`,
      },
    );
  }
  return { dir, exists: false };
}
