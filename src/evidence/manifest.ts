import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ioError } from './io/atomic-write.js';
import { Sha256HexSchema } from './unit-layout.js';

/**
 * File manifests and the IMEP Merkle root (scheme `imep-merkle-v1`).
 *
 * A manifest lists files by relative path ('/'-separated), size in bytes and SHA-256 of the bytes,
 * sorted by the UTF-8 bytes of the path (not locale order).
 *
 * Merkle root, defined:
 *   leaf_i = SHA-256( utf8(path_i) ‖ 0x00 ‖ utf8(sha256hex_i) )        in sorted path order
 *   level k+1 = SHA-256( left ‖ right ) over adjacent pairs of level k  (raw 32-byte digests);
 *               an odd last node is promoted to the next level unchanged
 *   root = the single node left, as lowercase hex; the root of an empty manifest is SHA-256 of no bytes.
 * A leaf's preimage is at least 66 bytes (non-empty path, NUL, 64 hex chars) and an inner node's is
 * exactly 64, so a leaf can never be passed off as an inner node. The size is not in the leaf: the
 * SHA-256 already binds the content; sizes serve to classify damage (truncated / appended).
 */

export const MERKLE_SCHEME = 'imep-merkle-v1';

export const ManifestEntrySchema = z.object({
  path: z.string().min(1),
  size: z.number().int().nonnegative(),
  sha256: Sha256HexSchema,
});
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

export function comparePaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function sha256(...parts: Uint8Array[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

export function merkleLeaf(entry: Pick<ManifestEntry, 'path' | 'sha256'>): Buffer {
  return sha256(Buffer.from(entry.path, 'utf8'), Buffer.from([0]), Buffer.from(entry.sha256, 'utf8'));
}

/** The Merkle root of a manifest (entries are sorted here; the input order does not matter). */
export function merkleRoot(entries: readonly Pick<ManifestEntry, 'path' | 'sha256'>[]): string {
  let level = [...entries].sort((a, b) => comparePaths(a.path, b.path)).map(merkleLeaf);
  if (level.length === 0) return sha256().toString('hex');
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(sha256(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) next.push(level[level.length - 1]!);
    level = next;
  }
  return level[0]!.toString('hex');
}

export interface FoundEntry {
  readonly path: string;
  readonly type: 'file' | 'symlink' | 'other';
  readonly size: number;
}

/** Every entry under `root` (recursively, symlinks not followed): non-directories and directories apart, each sorted by path. */
export async function listTree(root: string): Promise<{ entries: FoundEntry[]; directories: string[] }> {
  const out: FoundEntry[] = [];
  const directories: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      throw ioError(dir, 'list', e);
    }
    for (const name of names) {
      const abs = join(dir, name);
      const relPath = rel === '' ? name : `${rel}/${name}`;
      const st = await lstat(abs).catch((e: unknown) => {
        throw ioError(abs, 'stat', e);
      });
      if (st.isDirectory()) {
        directories.push(relPath);
        await walk(abs, relPath);
      } else
        out.push({
          path: relPath,
          type: st.isFile() ? 'file' : st.isSymbolicLink() ? 'symlink' : 'other',
          size: st.size,
        });
    }
  };
  await walk(root, '');
  return { entries: out.sort((a, b) => comparePaths(a.path, b.path)), directories: directories.sort(comparePaths) };
}

/** Every non-directory entry under `root` (recursively, symlinks not followed), sorted by path. */
export async function listEntries(root: string): Promise<FoundEntry[]> {
  return (await listTree(root)).entries;
}

export async function hashFile(path: string): Promise<string> {
  const h = createHash('sha256');
  try {
    for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  } catch (e) {
    throw ioError(path, 'read for hashing', e);
  }
  return h.digest('hex');
}

/** Builds manifest entries for the given relative paths (regular files) under `root`. */
export async function buildManifest(root: string, paths: readonly string[]): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  for (const path of [...paths].sort(comparePaths)) {
    const abs = join(root, path);
    const st = await lstat(abs).catch((e: unknown) => {
      throw ioError(abs, 'stat', e);
    });
    out.push({ path, size: st.size, sha256: await hashFile(abs) });
  }
  return out;
}
