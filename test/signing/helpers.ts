import { chmod, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { canonicalPrettyJson } from '../../src/core/canonical-json.js';
import { selfHash } from '../../src/evidence/io/record-file.js';
import { KEYS_DIR_ENV } from '../../src/signing/key-store.js';
import { signRecord } from '../../src/signing/sign-record.js';
import type { PrevLink } from '../../src/signing/signature-block.js';
import type { VerifyResult } from '../../src/evidence/verify/verify-types.js';
import { copyUnit, tempDir } from '../evidence/helpers.js';

/** Points IMEP_KEYS_DIR at a fresh temp folder for the test file; returns it and a restore function. */
export async function isolateKeys(): Promise<{ dir: string; restore: () => void }> {
  const before = process.env[KEYS_DIR_ENV];
  const dir = join(await tempDir('imep-keys-'), 'keys');
  process.env[KEYS_DIR_ENV] = dir;
  return {
    dir,
    restore: () => {
      if (before === undefined) delete process.env[KEYS_DIR_ENV];
      else process.env[KEYS_DIR_ENV] = before;
    },
  };
}

export type JsonRecord = Record<string, unknown>;

export async function readJson(dir: string, rel: string): Promise<JsonRecord> {
  return JSON.parse(await readFile(join(dir, rel), 'utf8')) as JsonRecord;
}

/** Writes a record the way imep does (canonical pretty JSON), through read-only modes; recomputes its self-hash unless told not to. */
export async function writeJson(
  dir: string,
  rel: string,
  record: JsonRecord,
  opts: { rehash?: boolean } = {},
): Promise<void> {
  const out: JsonRecord = { ...record };
  if (opts.rehash !== false) {
    delete out['sha256'];
    out['sha256'] = selfHash(out);
  }
  const file = join(dir, rel);
  await chmod(dirname(file), 0o755);
  await chmod(file, 0o644).catch(() => undefined);
  await writeFile(file, canonicalPrettyJson(out));
}

/** Edits a record (optionally re-signing it as `signer` with `prev`), keeping it self-consistent. */
export async function rewrite(
  dir: string,
  rel: string,
  edit: (r: JsonRecord) => void,
  resign?: { signer: string; prev?: PrevLink | null; keysDir?: string },
): Promise<void> {
  const r = await readJson(dir, rel);
  edit(r);
  if (resign) {
    const old = r['signature'] as { prev?: PrevLink | null } | undefined;
    delete r['signature'];
    delete r['sha256'];
    const signed = await signRecord(r, {
      signer: resign.signer,
      prev: resign.prev === undefined ? (old?.prev ?? null) : resign.prev,
      force: true,
      ...(resign.keysDir ? { keysDir: resign.keysDir } : {}),
    });
    await writeJson(dir, rel, signed);
  } else {
    await writeJson(dir, rel, r);
  }
}

/** Numbered copies (`case-N`) of template units under a test file's root, known once its beforeAll has run. */
export function unitCopies(rootOf: () => string): (template: string) => Promise<string> {
  let n = 0;
  return async (template) => {
    const dir = join(rootOf(), `case-${++n}`);
    await copyUnit(template, dir);
    return dir;
  };
}

/** The failed verification, or a thrown error when it passed. */
export function failed(r: VerifyResult): Extract<VerifyResult, { ok: false }> {
  if (r.ok) throw new Error('expected verification to fail');
  return r;
}
