import { sha256Hex, canonicalJson } from '../../core/index.js';
import { AmendmentSchema } from '../records/amendment.js';
import type { z } from 'zod';
import { parseRecordBytes, selfHashOk, type RecordRead } from '../io/record-file.js';
import { AdjudicationRecordSchema, CrossCheckRecordSchema } from '../records/post-seal-records.js';
import type { ManifestEntry } from '../manifest.js';
import type { SealRecord } from '../records/seal-record.js';
import { ADJUDICATION_RECORD_RE, CROSS_CHECK_RECORD_RE, UNIT_FILES } from '../unit-layout.js';
import type { VerifyIssue } from './verify-types.js';

/**
 * The checks for what a sealed unit may gain before its closeout: amendments appended after the
 * seal (the sealed prefix must be intact and the new lines must extend the hash chain, each
 * classified 'after-formal-data'), and adjudication records (schema, self-hash, their number, the
 * seal they name) with their listed artifacts — which verify.ts then admits only under the record's own
 * adjudication/NNN/ (verify-claims.ts). Adjudication records are checked before and after the closeout
 * alike. Only regular files are records. Used by verify.ts only, which hands over the very bytes it hashed
 * (these checks never open a file again: a swap between the hashing and a check cannot be seen here).
 */

/** The bytes verify.ts read (and hashed) for a unit-relative path; null when it holds none (absent). */
export type HeldBytes = (path: string) => Buffer | null;

export interface PendingCheck {
  /** Paths accepted as legitimate post-seal records (not stray). */
  readonly known: string[];
  /** Each adjudication record's artifacts, with the record's path and number (NNN of its file name). */
  readonly artifacts: { readonly record: string; readonly nnn: string; readonly entries: readonly ManifestEntry[] }[];
  readonly issues: VerifyIssue[];
  /** Records naming another seal.json than the one present: reported by verify.ts unless seal.json's own change already is. */
  readonly otherSeal: VerifyIssue[];
}

/** `bytes`: the amendment log as verify.ts hashed it (null when absent). */
export function checkAmendmentsAfterSeal(bytes: Buffer | null, seal: SealRecord): VerifyIssue[] {
  const path = UNIT_FILES.amendments;
  const sealed = seal.amendments;
  if (bytes === null)
    return sealed.bytes > 0 ? [{ path, kind: 'missing', detail: `the seal bound ${sealed.count} amendment(s)` }] : [];
  if (bytes.length < sealed.bytes)
    return [{ path, kind: 'truncated', detail: `${bytes.length} bytes; the seal bound the first ${sealed.bytes}` }];
  if (sha256Hex(bytes.subarray(0, sealed.bytes)) !== sealed.sha256) {
    return [{ path, kind: 'modified', detail: 'the amendments bound by the seal were changed' }];
  }
  if (bytes.length === sealed.bytes) return [];
  const tail = bytes.subarray(sealed.bytes).toString('utf8');
  const appended = (detail: string): VerifyIssue[] => [{ path, kind: 'appended', detail }];
  if (!tail.endsWith('\n')) return appended('bytes after the sealed amendments do not end in a complete line');
  let prev = sealed.headSha256;
  const lines = tail.slice(0, -1).split('\n');
  for (const [i, text] of lines.entries()) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return appended(`post-seal line ${i + 1} is not JSON`);
    }
    const a = AmendmentSchema.safeParse(value);
    if (!a.success || canonicalJson(value) !== text)
      return appended(`post-seal line ${i + 1} is not an amendment written by imep`);
    if (a.data.prevSha256 !== prev || a.data.id !== `A${sealed.count + i + 1}`)
      return appended(`post-seal line ${i + 1} does not extend the hash chain`);
    if (a.data.classification !== 'after-formal-data')
      return appended(`post-seal amendment ${a.data.id} is not classified after-formal-data`);
    prev = sha256Hex(text);
  }
  return [];
}

export function checkAdjudicationRecords(
  names: readonly string[],
  bytesOf: HeldBytes,
  sealSha256: string | null,
  hashes: ReadonlyMap<string, string>,
): PendingCheck {
  const known: string[] = [];
  const artifacts: PendingCheck['artifacts'] = [];
  const issues: VerifyIssue[] = [];
  const otherSeal: VerifyIssue[] = [];
  const prefix = `${UNIT_FILES.adjudicationDir}/`;
  const read = <S extends z.ZodType>(path: string, schema: S): RecordRead<z.infer<S>> => {
    const bytes = bytesOf(path);
    return bytes === null ? { kind: 'missing' } : parseRecordBytes(bytes, schema);
  };
  for (const path of names) {
    const name = path.slice(prefix.length);
    const adj = ADJUDICATION_RECORD_RE.exec(name);
    if (adj !== null) {
      const r = read(path, AdjudicationRecordSchema);
      if (r.kind !== 'ok' || !selfHashOk(r.value)) {
        issues.push({
          path,
          kind: 'modified',
          detail: r.kind === 'bad' ? `record ${r.reason}` : 'record does not match its own SHA-256',
        });
        continue;
      }
      known.push(path);
      if (sealSha256 !== null && r.value.sealSha256 !== sealSha256)
        otherSeal.push({ path, kind: 'modified', detail: 'it names a different seal.json' });
      if (r.value.number !== Number(adj[1]))
        issues.push({
          path,
          kind: 'modified',
          detail: `its number field says ${r.value.number}, its file name ${adj[1]}`,
        });
      artifacts.push({ record: path, nnn: adj[1]!, entries: r.value.artifacts });
    } else if (CROSS_CHECK_RECORD_RE.test(name)) {
      const r = read(path, CrossCheckRecordSchema);
      if (r.kind !== 'ok' || !selfHashOk(r.value)) {
        issues.push({
          path,
          kind: 'modified',
          detail: r.kind === 'bad' ? `record ${r.reason}` : 'record does not match its own SHA-256',
        });
        continue;
      }
      known.push(path);
      const judgedPath = `${prefix}${r.value.adjudicationFile}`;
      const judged = hashes.get(judgedPath);
      if (judged === undefined) issues.push({ path: judgedPath, kind: 'missing', detail: `${name} cross-checked it` });
      else if (judged !== r.value.adjudicationSha256)
        issues.push({ path, kind: 'modified', detail: `it names ${r.value.adjudicationFile} with another SHA-256` });
    }
  }
  // Records are numbered 001, 002, …: a gap is a removed record.
  for (const [re, stem] of [
    [ADJUDICATION_RECORD_RE, 'adjudication'],
    [CROSS_CHECK_RECORD_RE, 'cross-check'],
  ] as const) {
    const numbers = names
      .map((p) => re.exec(p.slice(prefix.length))?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number);
    const max = Math.max(0, ...numbers);
    for (let n = 1; n < max; n++) {
      if (!numbers.includes(n))
        issues.push({
          path: `${prefix}${stem}-${String(n).padStart(3, '0')}.json`,
          kind: 'missing',
          detail: `a later ${stem} record exists`,
        });
    }
  }
  return { known, artifacts, issues, otherSeal };
}
