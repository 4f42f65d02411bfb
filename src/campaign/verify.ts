import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ImepError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { comparePaths, hashFile, listEntries, merkleRoot, type FoundEntry, type ManifestEntry } from './manifest.js';
import { CloseoutRecordSchema, type CloseoutRecord } from './post-seal-records.js';
import { readRecord, selfHashOk } from './record-file.js';
import { SealRecordSchema, type SealRecord } from './seal.js';
import { assertAllowed } from './lifecycle.js';
import { UNIT_FILES, unitPaths } from './unit-layout.js';
import { readUnitState } from './unit-state.js';
import { checkAdjudicationRecords, checkAmendmentsAfterSeal } from './verify-pending.js';
import type { VerifyFailed, VerifyIssue, VerifyOk, VerifyResult } from './verify-types.js';
import { checkUnitSignatures } from '../signing/unit-signatures.js';

export type { TamperKind, VerifyFailed, VerifyIssue, VerifyOk, VerifyResult } from './verify-types.js';
export { TAMPER_KINDS } from './verify-types.js';

/**
 * Verification of a sealed (or closed) unit: every file is re-hashed and compared with the
 * manifests; the result names the FIRST bad file in sorted path order and what happened to it:
 *   modified  — same size, other bytes (or a record that no longer matches its own SHA-256)
 *   truncated — shorter than recorded;  appended — longer than recorded
 *   missing   — gone;  renamed — gone, and its exact bytes are present under a new (unlisted) name
 *   stray     — a file no manifest or post-seal record accounts for
 * A seal.json or closeout.json that cannot be read or does not match its own SHA-256 and Merkle
 * root is reported as modified and its manifest is not used. Everything but seal.json is bound by
 * the seal; seal.json, the amendment log and adjudication/ are bound by the closeout. Before the
 * closeout, seal.json itself can only be checked for internal consistency — someone able to rewrite
 * it consistently is caught only by the root cited outside the unit (`expectedRoot`) — or, for a signed
 * unit, by the signature chain (src/signing/chain.ts): each signed record's signature must verify with a
 * key of the trust store, name the previous record's current hash, and an adjudication must not be signed
 * by the key of an operator who ran the conditions (unless an override is recorded: then a warning in
 * `signatures.findings`). Signature errors are issues of kind 'signature' naming the record.
 */

export interface VerifyOptions {
  /** A Merkle root cited elsewhere (paper, registry): the unit's root must equal it. */
  readonly expectedRoot?: string;
  /** The signature trust store (default: IMEP_KEYS_DIR or ~/.imep/keys). */
  readonly keysDir?: string;
  /** Refuse unsigned records (default: unsigned units verify; only a record unsigned after a signed one fails). */
  readonly requireSignatures?: boolean;
}

type Expected = ManifestEntry;

async function readManifestRecord<S extends typeof SealRecordSchema | typeof CloseoutRecordSchema>(
  dir: string,
  path: string,
  schema: S,
): Promise<{ record: z.infer<S> | null; issue: VerifyIssue | null; present: boolean }> {
  const r = await readRecord(join(dir, path), schema);
  if (r.kind === 'missing') return { record: null, issue: null, present: false };
  if (r.kind === 'bad') return { record: null, issue: { path, kind: 'modified', detail: `${path} ${r.reason}` }, present: true };
  const rec = r.value as SealRecord | CloseoutRecord;
  if (!selfHashOk(rec) || merkleRoot(rec.files) !== rec.merkle.root) {
    return { record: null, issue: { path, kind: 'modified', detail: `${path} does not match its own SHA-256 / Merkle root` }, present: true };
  }
  return { record: r.value as z.infer<S>, issue: null, present: true };
}

function compare(exp: Expected, act: FoundEntry | undefined, hash: string | undefined): VerifyIssue | null {
  if (act === undefined) return { path: exp.path, kind: 'missing', detail: `expected ${exp.size} bytes` };
  if (act.type !== 'file') return { path: exp.path, kind: 'modified', detail: `replaced by a ${act.type === 'symlink' ? 'symbolic link' : 'special file'}` };
  if (act.size < exp.size) return { path: exp.path, kind: 'truncated', detail: `${act.size} bytes; sealed ${exp.size}` };
  if (act.size > exp.size) return { path: exp.path, kind: 'appended', detail: `${act.size} bytes; sealed ${exp.size}` };
  if (hash !== exp.sha256) return { path: exp.path, kind: 'modified', detail: 'same size, different SHA-256' };
  return null;
}

export async function verifyUnit(dir: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  const entries = await listEntries(dir);
  const actual = new Map(entries.map((e) => [e.path, e]));
  const hashes = new Map<string, string>();
  for (const e of entries) if (e.type === 'file') hashes.set(e.path, await hashFile(join(dir, e.path)));

  const sealR = await readManifestRecord(dir, UNIT_FILES.seal, SealRecordSchema);
  const closeR = await readManifestRecord(dir, UNIT_FILES.closeout, CloseoutRecordSchema);
  const adjPrefix = `${UNIT_FILES.adjudicationDir}/`;
  const adjFiles = entries.filter((e) => e.path.startsWith(adjPrefix)).map((e) => e.path);
  const issues: VerifyIssue[] = [];
  if (!sealR.present) {
    const header = await readRecord(unitPaths(dir).header, z.looseObject({ status: z.string(), id: z.string() }));
    const saysSealed = header.kind === 'ok' && header.value.status === 'sealed';
    if (!saysSealed && !closeR.present && adjFiles.length === 0) {
      const snap = await readUnitState(dir);
      assertAllowed(snap.header.id, snap.state, 'adjudicate', dir); // throws: not sealed yet
    }
    if (closeR.record === null) {
      issues.push({ path: UNIT_FILES.seal, kind: 'missing', detail: 'the unit was sealed but seal.json is gone (if `imep campaign seal` was interrupted, run it again)' });
    }
  }
  if (closeR.issue) issues.push(closeR.issue);
  const seal = sealR.record;
  const closeout = closeR.record;

  const expected = new Map<string, Expected>();
  const known = new Set<string>([UNIT_FILES.seal, UNIT_FILES.closeout]);
  for (const f of seal?.files ?? []) expected.set(f.path, f);
  for (const f of closeout?.files ?? []) expected.set(f.path, f);
  let pending: string[] = [];
  if (closeout === null) {
    if (seal !== null) {
      const found = await checkAmendmentsAfterSeal(dir, seal, actual.has(UNIT_FILES.amendments));
      const gone = found[0]?.kind === 'missing';
      const movedTo = gone ? await findMovedLog(dir, entries, expected, known, seal) : undefined;
      issues.push(...(movedTo === undefined ? found : [{ path: UNIT_FILES.amendments, kind: 'renamed' as const, detail: `its bytes are now at ${movedTo}`, renamedTo: movedTo }]));
      if (movedTo !== undefined) known.add(movedTo);
    }
    known.add(UNIT_FILES.amendments);
    const check = await checkAdjudicationRecords(dir, adjFiles, seal === null ? null : (hashes.get(UNIT_FILES.seal) ?? null), hashes);
    issues.push(...check.issues);
    for (const p of check.known) known.add(p);
    for (const a of check.expected) expected.set(a.path, a);
    pending = [...check.known, ...check.expected.map((a) => a.path), ...((actual.get(UNIT_FILES.amendments)?.size ?? 0) > (seal?.amendments.bytes ?? 0) ? [UNIT_FILES.amendments] : [])];
    for (const i of check.issues) known.add(i.path);
  }
  // Without a usable seal manifest, only the closeout's scope can be judged: no stray reports.
  const strayScope = (path: string): boolean => seal !== null || path === UNIT_FILES.seal || path.startsWith(adjPrefix);

  const missing: VerifyIssue[] = [];
  for (const exp of expected.values()) {
    const issue = compare(exp, actual.get(exp.path), hashes.get(exp.path));
    if (issue?.kind === 'missing') missing.push(issue);
    else if (issue) issues.push(issue);
  }
  const strays = entries.filter((e) => !expected.has(e.path) && !known.has(e.path));
  for (const m of missing) {
    const exp = expected.get(m.path)!;
    const idx = strays.findIndex((s) => s.type === 'file' && s.size === exp.size && hashes.get(s.path) === exp.sha256);
    if (idx === -1) issues.push(m);
    else {
      const [to] = strays.splice(idx, 1);
      issues.push({ path: m.path, kind: 'renamed', detail: `its bytes are now at ${to!.path}`, renamedTo: to!.path });
    }
  }
  for (const s of strays.filter((e) => strayScope(e.path))) issues.push({ path: s.path, kind: 'stray', detail: s.type === 'file' ? 'not in any manifest' : `a ${s.type} not in any manifest` });

  // seal.json's own defect is reported unless the closeout manifest already classified it precisely.
  if (sealR.issue && !issues.some((i) => i.path === UNIT_FILES.seal)) issues.push(sealR.issue);

  const root = closeout?.merkle.root ?? seal?.merkle.root ?? null;
  if (opts.expectedRoot !== undefined && root !== null && root !== opts.expectedRoot) {
    if (closeout !== null) issues.push({ path: UNIT_FILES.closeout, kind: 'modified', detail: `root ${root} is not the expected ${opts.expectedRoot}` });
    else if (!closeR.present) {
      issues.push({
        path: UNIT_FILES.closeout,
        kind: 'missing',
        detail: `the expected root ${opts.expectedRoot} is not the seal root and closeout.json is absent (removed, or the expected root is wrong)`,
      });
    }
  }
  const signatures = await checkUnitSignatures(dir, { ...(opts.keysDir === undefined ? {} : { keysDir: opts.keysDir }), ...(opts.requireSignatures ? { requireSigned: true } : {}) });
  // a broken link that follows from a file already reported (changed, missing, renamed) is not reported again
  const reported = new Set(issues.map((i) => i.path));
  for (const f of signatures.findings) {
    if (f.severity === 'error' && !f.related.some((p) => reported.has(p))) issues.push({ path: f.path, kind: 'signature', detail: `${f.finding}: ${f.detail}` });
  }
  const unitId = seal?.unitId ?? closeout?.unitId ?? null;
  if (issues.length > 0 || seal === null || root === null) {
    const sorted = dedupe(issues).sort((a, b) => comparePaths(a.path, b.path));
    return { ok: false, unitId, first: sorted[0]!, issues: sorted, filesChecked: entries.length, signatures } satisfies VerifyFailed;
  }
  return {
    ok: true,
    unitId: seal.unitId,
    scope: closeout ? 'closeout' : 'seal',
    root,
    sealRoot: seal.merkle.root,
    filesChecked: entries.length,
    pending: [...new Set(pending)].sort(comparePaths),
    signatures,
  } satisfies VerifyOk;
}

/** A file, not otherwise accounted for, that starts with the sealed amendment log's bytes. */
async function findMovedLog(dir: string, entries: readonly FoundEntry[], expected: ReadonlyMap<string, Expected>, known: ReadonlySet<string>, seal: SealRecord): Promise<string | undefined> {
  for (const e of entries) {
    if (e.type !== 'file' || expected.has(e.path) || known.has(e.path) || e.size < seal.amendments.bytes) continue;
    const head = (await readFile(join(dir, e.path))).subarray(0, seal.amendments.bytes);
    if (sha256Hex(head) === seal.amendments.sha256) return e.path;
  }
  return undefined;
}

function dedupe(issues: VerifyIssue[]): VerifyIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\u0000${i.kind}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One line for a failed verification. */
export function describeIssue(issue: VerifyIssue): string {
  return `${issue.path}: ${issue.kind}${issue.renamedTo ? ` → ${issue.renamedTo}` : ''} (${issue.detail})`;
}

/** Verifies and throws E_UNIT_TAMPERED naming the first bad file. */
export async function assertUnitIntact(dir: string, opts: VerifyOptions = {}): Promise<VerifyOk> {
  const r = await verifyUnit(dir, opts);
  if (r.ok) return r;
  const more = r.issues.length > 1 ? ` (+${r.issues.length - 1} more)` : '';
  throw new ImepError('E_UNIT_TAMPERED', `${r.first.kind}${r.first.renamedTo ? ` → ${r.first.renamedTo}` : ''}: ${r.first.detail}${more}`, {
    file: join(dir, r.first.path),
    hint: 'restore the unit from an intact copy; `imep campaign verify` lists every difference',
  });
}
