/**
 * Files a simulator reads that change what a campaign's episodes are, frozen like the checkpoint: today
 * the sim-bridge replay adapter's folder of replay files (`simulator.replayDir`). At precommit their
 * digest goes into precommit.json (`simulatorHashes`, key `simulator.replayDir`); every later run of
 * the unit (run, resume, shard, probe) recomputes it before a simulator starts and refuses a change
 * (E_PROTOCOL_FROZEN naming the folder), as a changed checkpoint is refused.
 *
 * Digest of a folder: SHA-256 over the canonical JSON of its regular files, sorted by '/'-separated
 * relative path, each { path, bytes, sha256 } — so a renamed, added, removed or edited file changes it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { canonicalJson, ImepError, sha256Hex } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';
import { simulatorKindOf, type SimulatorContext } from './bridge-envs.js';

export async function folderDigest(dir: string): Promise<string> {
  const files: { path: string; bytes: number; sha256: string }[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) {
        const bytes = await readFile(full);
        files.push({ path: relative(dir, full).split(sep).join('/'), bytes: bytes.length, sha256: sha256Hex(bytes) });
      }
    }
  };
  await walk(dir);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return sha256Hex(Buffer.from(canonicalJson(files), 'utf8'));
}

/** The folders the protocol's simulator reads whose contents are frozen (SimulatorKind.inputFolders), by field. */
function inputFolders(protocol: Protocol, ctx: SimulatorContext): Readonly<Record<string, string>> {
  return simulatorKindOf(protocol, ctx.file).inputFolders?.(protocol.simulator, ctx) ?? {};
}

/** The digests to freeze for this protocol's simulator ({} when it reads no such files). */
export async function simulatorInputHashes(protocol: Protocol, ctx: SimulatorContext): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const [field, dir] of Object.entries(inputFolders(protocol, ctx))) hashes[field] = await folderDigest(dir);
  return hashes;
}

/** Refuses to run when a frozen simulator input changed since precommit. */
export async function assertSimulatorInputsUnchanged(
  protocol: Protocol,
  ctx: SimulatorContext,
  frozen: Readonly<Record<string, string>> | undefined,
): Promise<void> {
  const now = await simulatorInputHashes(protocol, ctx);
  const keys = new Set([...Object.keys(frozen ?? {}), ...Object.keys(now)]);
  for (const key of [...keys].sort()) {
    const was = frozen?.[key];
    const is = now[key];
    if (was === is) continue;
    const where = inputFolders(protocol, ctx)[key] ?? '(missing)';
    throw new ImepError(
      'E_PROTOCOL_FROZEN',
      was === undefined
        ? `${key} (${where}) was not frozen at precommit; this unit cannot read it`
        : `${key} (${where}) hashes to ${(is ?? 'nothing').slice(0, 12)}… but the precommit froze ${was.slice(0, 12)}…`,
      {
        file: ctx.file,
        field: key,
        hint: 'restore the simulator files the unit was precommitted with; a new set of files is a new campaign',
      },
    );
  }
}
