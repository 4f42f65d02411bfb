/** Shared helpers of the policy tests. */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImepError, isImepError } from '../../src/core/errors.js';

export const LITE_MEMVLA = join(import.meta.dirname, '..', '..', 'checkpoints', 'lite-memvla');
export const LITE_BLIND = join(import.meta.dirname, '..', '..', 'checkpoints', 'lite-blind');

/** A scratch copy of a checkpoint folder. */
export function copyCheckpoint(src: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'imep-ckpt-')), 'ckpt');
  cpSync(src, dir, { recursive: true });
  return dir;
}

/** Rewrites model.json of a checkpoint folder through `edit`. */
export function editManifest(dir: string, edit: (m: Record<string, any>) => void): void {
  const file = join(dir, 'model.json');
  const m = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  edit(m);
  writeFileSync(file, JSON.stringify(m, null, 2));
}

/** Awaits a promise expected to reject with an ImepError; returns it. */
export async function imepRejection(p: Promise<unknown>): Promise<ImepError> {
  try {
    await p;
  } catch (e) {
    if (isImepError(e)) return e;
    throw e;
  }
  throw new Error('expected an ImepError, got success');
}
