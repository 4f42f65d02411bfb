import { randomBytes } from 'node:crypto';
import { chmod, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ImepError, isImepError, canonicalPrettyJson } from '../../core/index.js';

/**
 * Whole-file writes that never leave a half-written file behind:
 * serialise in memory → write a temp file `.<name>.tmp-<pid>-<hex>` in the same directory →
 * fsync it → rename over the target → fsync the directory. A failure at any step removes the temp
 * file and throws E_IO naming the target path; the target keeps its previous content (or stays
 * absent). A process killed mid-write can leave a temp file, which `removeStaleTemps` clears
 * (seal and resume call it); temp files are never committed data.
 */

const TEMP_MARK = '.tmp-';

export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.includes(TEMP_MARK);
}

function errnoCode(e: unknown): string {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : 'error';
}

/** What to do about a failed write, by errno: nothing is half-written, so the command can simply be run again. */
const RERUN = 'then run the command again (`imep campaign resume UNIT` continues a run from its last durable row)';
const HINT_BY_ERRNO: Readonly<Record<string, string>> = {
  ENOSPC: `the file system is full: free space, ${RERUN}`,
  EDQUOT: `the disk quota is exhausted: free space or raise the quota, ${RERUN}`,
  EFBIG: `the file reached the process's file-size limit (ulimit -f / RLIMIT_FSIZE): raise it, ${RERUN}`,
  EROFS: `the file system is mounted read-only: use a writable campaigns folder, ${RERUN}`,
  EACCES: 'the folder is not writable by this user: fix its permissions or use another --campaigns-dir',
  EPERM: 'the folder is not writable by this user: fix its permissions or use another --campaigns-dir',
};

export function ioError(path: string, doing: string, cause: unknown, hint?: string): ImepError {
  const why = cause instanceof Error ? cause.message : String(cause);
  const code = errnoCode(cause);
  return new ImepError('E_IO', `could not ${doing} (${code}): ${why}`, {
    file: path,
    hint: hint ?? HINT_BY_ERRNO[code] ?? 'check that the directory exists, is writable and has free space',
    cause,
  });
}

/** Writes every byte (FileHandle.write may write fewer than asked). */
export async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, off, bytes.length - off);
    off += bytesWritten;
  }
}

/** fsync a directory so that a create/rename in it is durable. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch (e) {
    throw ioError(dir, 'fsync the directory', e);
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

export type Bytes = Uint8Array | string;

function toBytes(data: Bytes): Uint8Array {
  return typeof data === 'string' ? new TextEncoder().encode(data) : data;
}

/**
 * Atomically replaces `path` with `data` (bytes, text, or a producer called before anything touches
 * the disk — a throwing producer leaves the file system untouched).
 */
export async function writeFileAtomic(path: string, data: Bytes | (() => Bytes), mode = 0o644): Promise<void> {
  let bytes: Uint8Array;
  try {
    bytes = toBytes(typeof data === 'function' ? data() : data);
  } catch (e) {
    const why = isImepError(e) ? e.oneLine() : e instanceof Error ? e.message : String(e);
    throw new ImepError('E_IO', `could not serialise the content; nothing was written: ${why}`, {
      file: path,
      cause: e,
    });
  }
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}${TEMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`);
  let fh: FileHandle | undefined;
  let step = 'create a temporary file';
  try {
    fh = await open(temp, 'wx', mode);
    step = 'write';
    await writeAll(fh, bytes);
    step = 'fsync';
    await fh.sync();
    await fh.close();
    fh = undefined;
    step = 'rename the temporary file into place';
    await rename(temp, path);
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw ioError(path, `${step}; nothing was written`, e);
  }
  await fsyncDir(dir);
}

/** Atomically writes a value in the deterministic pretty canonical JSON form. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, () => canonicalPrettyJson(value));
}

/** Removes leftover temp files (from a killed process) under `root`; returns their relative paths. */
export async function removeStaleTemps(root: string): Promise<string[]> {
  const removed: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const relPath = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(join(dir, entry.name), relPath);
      else if (isTempName(entry.name)) {
        await unlink(join(dir, entry.name));
        removed.push(relPath);
      }
    }
  };
  try {
    await walk(root, '');
  } catch (e) {
    throw ioError(root, 'clear leftover temporary files', e);
  }
  return removed;
}

/**
 * Runs `fn` with owner-write permission temporarily granted on `paths` (files or directories that
 * exist), restoring each original mode afterwards. Used to add post-seal records to a unit whose
 * files are 0444 and directories 0555 (root ignores those bits; other users need this).
 */
export async function withOwnerWrite<T>(paths: readonly string[], fn: () => Promise<T>): Promise<T> {
  const restored: { path: string; mode: number }[] = [];
  try {
    for (const p of paths) {
      const st = await stat(p).catch(() => undefined);
      if (st === undefined) continue;
      const mode = st.mode & 0o7777;
      if ((mode & 0o200) === 0) {
        await chmod(p, mode | 0o200).catch((e: unknown) =>
          Promise.reject(ioError(p, 'grant owner write for a post-seal record', e)),
        );
        restored.push({ path: p, mode });
      }
    }
    return await fn();
  } finally {
    for (const { path, mode } of restored.reverse()) await chmod(path, mode).catch(() => undefined);
  }
}
