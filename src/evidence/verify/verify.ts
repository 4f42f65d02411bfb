import { readFile } from 'node:fs/promises';
import { ARRIVAL_ORDER_FILE } from '../records/arrival-order-record.js';
import { arrivalOrderIssues } from './arrival-order.js';
import { join } from 'node:path';
import { z } from 'zod';
import { ImepError, sha256Hex, cliName } from '../../core/index.js';
import { comparePaths, hashFile, listTree, merkleRoot, type FoundEntry } from '../manifest.js';
import { CloseoutRecordSchema, type CloseoutRecord } from '../records/post-seal-records.js';
import { parseRecordBytes, readRecord, selfHashOk } from '../io/record-file.js';
import { ioError } from '../io/atomic-write.js';
import { verifiedReadTestHooks, type VerifiedUnit } from '../io/verified-read.js';
import { SealRecordSchema, type SealRecord } from '../records/seal-record.js';
import { assertAllowed } from '../lifecycle.js';
import { ADJUDICATION_RECORD_RE, CROSS_CHECK_RECORD_RE, UNIT_FILES, unitPaths } from '../unit-layout.js';
import { readUnitState } from '../unit-state.js';
import { checkAdjudicationRecords, checkAmendmentsAfterSeal } from './verify-pending.js';
import { artifactScope, Claims, closeoutScope, sealScope, type Claim } from './verify-claims.js';
import { STRAY_DIRECTORY_DETAIL, strayDirectories } from '../unit-directories.js';
import { attestedFile } from '../attestation/index.js';
import { attestationIssues } from './verify-attestations.js';
import type { VerifyFailed, VerifyIssue, VerifyOk, VerifyResult } from './verify-types.js';
import { checkUnitSignatures } from './unit-signatures.js';
import { describeUntrusted, keysDir, trustOf } from '../../signing/index.js';

export type { TamperKind, VerifyFailed, VerifyIssue, VerifyOk, VerifyResult } from './verify-types.js';
export { TAMPER_KINDS } from './verify-types.js';

/**
 * Verification of a sealed (or closed) unit: every file is re-hashed and compared with the
 * manifests; the result names the FIRST bad file in sorted path order and what happened to it:
 *   modified  — same size, other bytes (or a record that no longer matches its own SHA-256)
 *   truncated — shorter than recorded;  appended — longer than recorded
 *   missing   — gone;  renamed — gone, and its exact bytes are present under a new (unlisted) name
 *   stray     — a file no manifest or post-seal record accounts for, or a directory holding no file
 *               that the layout does not make (unit-directories.ts)
 * A seal.json or closeout.json that cannot be read or does not match its own SHA-256 and Merkle
 * root is reported as modified and its manifest is not used. Everything but seal.json is bound by
 * the seal; seal.json, the amendment log and adjudication/ are bound by the closeout; each adjudication
 * record binds its artifacts under adjudication/NNN/ (checked before and after the closeout). A record
 * may claim only its own scope and never a sealed file (verify-claims.ts): a record claiming more is
 * reported, naming its field and the path, and its claim is not used. Before the
 * closeout, seal.json itself can only be checked for internal consistency — someone able to rewrite
 * it consistently is caught only by the root cited outside the unit (`expectedRoot`) — or, for a signed
 * unit, by the signature chain (src/signing/chain.ts): each signed record's signature must verify with a
 * key of the trust store, name the previous record's current hash, and an adjudication must not be signed
 * by the key of an operator who ran the conditions (unless an override is recorded: then a warning in
 * `signatures.findings`). Signature errors are issues of kind 'signature' naming the record.
 */

export interface VerifyOptions {
  /**
   * A Merkle root cited elsewhere (paper, registry): the unit's root must equal it — the seal's, or for a
   * closed unit the closeout's or the seal's (the closeout binds seal.json); `rootMatched` says which.
   */
  readonly expectedRoot?: string;
  /** The signature trust store (default: IMEP_KEYS_DIR or ~/.imep/keys). */
  readonly keysDir?: string;
  /** Refuse unsigned records (default: unsigned units verify; only a record unsigned after a signed one fails). */
  readonly requireSignatures?: boolean;
}

/** A Merkle root as `expectedRoot` takes it: 64 hex digits (lowercased), else E_USAGE naming the option. */
export function parseExpectedRoot(text: string): string {
  const t = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(t)) {
    throw new ImepError(
      'E_USAGE',
      `'${t.length > 80 ? `${t.slice(0, 80)}…` : t}' is not a Merkle root (64 hex digits expected)`,
      {
        field: '--expected-root',
        hint: 'give the full root printed by `imep campaign seal` / `closeout` / `verify`',
      },
    );
  }
  return t.toLowerCase();
}

/**
 * The files verify's later checks parse (the amendment log's prefix and chain, the adjudication and cross-check
 * records, the signature chain's records, the run record's operators): read ONCE into memory by the hashing pass,
 * and every check works from those buffers, so no check sees bytes other than the ones hashed. Every other file
 * (rows.jsonl can be tens of MB) is only hashed, streaming.
 */
function heldForChecks(path: string): boolean {
  if (path === UNIT_FILES.amendments || path === UNIT_FILES.precommit || path === UNIT_FILES.runRecord) return true;
  if (attestedFile(path) !== null) return true;
  const adj = `${UNIT_FILES.adjudicationDir}/`;
  if (!path.startsWith(adj)) return false;
  const name = path.slice(adj.length);
  return ADJUDICATION_RECORD_RE.test(name) || CROSS_CHECK_RECORD_RE.test(name);
}

/** One read of a held file: its bytes, or null when it is gone (a symbolic link is followed, as before, but not hashed). */
async function readHeld(dir: string, e: FoundEntry): Promise<Buffer | null> {
  try {
    return await readFile(join(dir, e.path));
  } catch (err) {
    if (e.type !== 'file') return null;
    throw ioError(join(dir, e.path), 'read for hashing', err);
  }
}

async function readManifestRecord<S extends typeof SealRecordSchema | typeof CloseoutRecordSchema>(
  dir: string,
  path: string,
  schema: S,
  found: FoundEntry | undefined,
): Promise<{ record: z.infer<S> | null; issue: VerifyIssue | null; present: boolean; bytes: Buffer | null }> {
  if (found !== undefined && found.type !== 'file') {
    return {
      record: null,
      issue: {
        path,
        kind: 'modified',
        detail: `replaced by a ${found.type === 'symlink' ? 'symbolic link' : 'special file'}`,
      },
      present: true,
      bytes: null,
    };
  }
  // ONE read: the bytes hashed (for the closeout's entry and the records' sealSha256) are the bytes parsed.
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, path));
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT') return { record: null, issue: null, present: false, bytes: null };
    if (code === 'EISDIR')
      return {
        record: null,
        issue: { path, kind: 'modified', detail: `${path} is a directory` },
        present: true,
        bytes: null,
      };
    throw ioError(join(dir, path), 'read', e);
  }
  const r = parseRecordBytes(bytes, schema);
  if (r.kind !== 'ok')
    return {
      record: null,
      issue: { path, kind: 'modified', detail: `${path} ${r.kind === 'bad' ? r.reason : 'is missing'}` },
      present: true,
      bytes,
    };
  const rec = r.value as SealRecord | CloseoutRecord;
  if (!selfHashOk(rec) || merkleRoot(rec.files) !== rec.merkle.root) {
    return {
      record: null,
      issue: { path, kind: 'modified', detail: `${path} does not match its own SHA-256 / Merkle root` },
      present: true,
      bytes,
    };
  }
  return { record: r.value as z.infer<S>, issue: null, present: true, bytes };
}

function compare(claim: Claim, act: FoundEntry | undefined, hash: string | undefined): VerifyIssue | null {
  const exp = claim.entry;
  const sealed = claim.by === `${UNIT_FILES.seal} files`;
  const recorded = sealed ? 'sealed' : `${claim.by} recorded`;
  if (act === undefined)
    return { path: exp.path, kind: 'missing', detail: `expected ${exp.size} bytes${sealed ? '' : ` (${claim.by})`}` };
  if (act.type !== 'file')
    return {
      path: exp.path,
      kind: 'modified',
      detail: `replaced by a ${act.type === 'symlink' ? 'symbolic link' : 'special file'}`,
    };
  if (act.size < exp.size)
    return { path: exp.path, kind: 'truncated', detail: `${act.size} bytes; ${recorded} ${exp.size}` };
  if (act.size > exp.size)
    return { path: exp.path, kind: 'appended', detail: `${act.size} bytes; ${recorded} ${exp.size}` };
  if (hash !== exp.sha256)
    return {
      path: exp.path,
      kind: 'modified',
      detail: `same size, different SHA-256${sealed ? '' : ` from what ${claim.by} recorded`}`,
    };
  return null;
}

export async function verifyUnit(dir: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  return (await verifyUnitRead(dir, opts)).result;
}

interface VerifyRead {
  readonly result: VerifyResult;
  readonly seal: SealRecord | null;
  readonly sealBytes: Buffer | null;
  readonly closeout: CloseoutRecord | null;
  readonly closeoutBytes: Buffer | null;
  readonly hashes: ReadonlyMap<string, string>;
}

async function verifyUnitRead(dir: string, opts: VerifyOptions): Promise<VerifyRead> {
  const expectedRoot = opts.expectedRoot === undefined ? undefined : parseExpectedRoot(opts.expectedRoot);
  const { entries, directories } = await listTree(dir);
  const actual = new Map(entries.map((e) => [e.path, e]));
  const hashes = new Map<string, string>();
  const records = new Set<string>([UNIT_FILES.seal, UNIT_FILES.closeout]);
  const held = new Map<string, Buffer>();
  for (const e of entries) {
    if (records.has(e.path)) continue;
    if (heldForChecks(e.path) && (e.type === 'file' || e.type === 'symlink')) {
      const bytes = await readHeld(dir, e);
      if (bytes !== null) held.set(e.path, bytes);
      if (bytes !== null && e.type === 'file') hashes.set(e.path, sha256Hex(bytes));
    } else if (e.type === 'file') hashes.set(e.path, await hashFile(join(dir, e.path)));
  }

  // seal.json and closeout.json are hashed and parsed from one buffer each.
  const sealR = await readManifestRecord(dir, UNIT_FILES.seal, SealRecordSchema, actual.get(UNIT_FILES.seal));
  const closeR = await readManifestRecord(
    dir,
    UNIT_FILES.closeout,
    CloseoutRecordSchema,
    actual.get(UNIT_FILES.closeout),
  );
  for (const [path, bytes] of [
    [UNIT_FILES.seal, sealR.bytes],
    [UNIT_FILES.closeout, closeR.bytes],
  ] as const) {
    if (bytes === null) continue;
    hashes.set(path, sha256Hex(bytes));
    held.set(path, bytes);
  }
  await verifiedReadTestHooks.afterHashing?.(dir);
  // Every check below works from these buffers: none opens a file the hashing pass read.
  const bytesOf = (path: string): Buffer | null => held.get(path) ?? null;
  const adjPrefix = `${UNIT_FILES.adjudicationDir}/`;
  const adjEntries = entries.filter((e) => e.path.startsWith(adjPrefix));
  const issues: VerifyIssue[] = [];
  if (!sealR.present) {
    const header = await readRecord(unitPaths(dir).header, z.looseObject({ status: z.string(), id: z.string() }));
    const saysSealed = header.kind === 'ok' && header.value.status === 'sealed';
    if (!saysSealed && !closeR.present && adjEntries.length === 0) {
      const snap = await readUnitState(dir);
      assertAllowed(snap.header.id, snap.state, 'adjudicate', dir); // throws: not sealed yet
    }
    if (closeR.record === null) {
      issues.push({
        path: UNIT_FILES.seal,
        kind: 'missing',
        detail: 'the unit was sealed but seal.json is gone (if `imep campaign seal` was interrupted, run it again)',
      });
    }
  }
  if (closeR.issue) issues.push(closeR.issue);
  const seal = sealR.record;
  const closeout = closeR.record;

  // Who may bind what (verify-claims.ts): the seal's files first, then the closeout's, then each adjudication's artifacts.
  const claims = new Claims();
  if (seal !== null) claims.add(UNIT_FILES.seal, 'files', seal.files, sealScope, true);
  if (closeout !== null) claims.add(UNIT_FILES.closeout, 'files', closeout.files, closeoutScope);
  const known = new Set<string>([UNIT_FILES.seal, UNIT_FILES.closeout]);
  // detached signatures for stock tools (attestation/write.ts): known by name, bound by nothing, relied on by nothing
  // (one left behind by a deleted closeout.json stays known, so a rollback still reads as the earlier stage)
  for (const e of entries) if (e.type === 'file' && attestedFile(e.path) !== null) known.add(e.path);
  // Adjudication and cross-check records are checked whether or not a closeout binds them as well.
  const check = checkAdjudicationRecords(
    adjEntries.filter((e) => e.type === 'file').map((e) => e.path),
    bytesOf,
    seal === null ? null : (hashes.get(UNIT_FILES.seal) ?? null),
    hashes,
  );
  for (const p of check.known) known.add(p);
  const artifactPaths: string[] = [];
  for (const a of check.artifacts)
    artifactPaths.push(...claims.add(a.record, 'artifacts', a.entries, artifactScope(a.nnn)));
  let pending: string[] = [];
  if (closeout === null) {
    if (seal !== null) {
      const found = checkAmendmentsAfterSeal(bytesOf(UNIT_FILES.amendments), seal);
      const gone = found[0]?.kind === 'missing';
      const movedTo = gone ? await findMovedLog(dir, entries, claims, known, seal) : undefined;
      issues.push(
        ...(movedTo === undefined
          ? found
          : [
              {
                path: UNIT_FILES.amendments,
                kind: 'renamed' as const,
                detail: `its bytes are now at ${movedTo}`,
                renamedTo: movedTo,
              },
            ]),
      );
      if (movedTo !== undefined) known.add(movedTo);
    }
    known.add(UNIT_FILES.amendments);
    pending = [
      ...check.known,
      ...artifactPaths,
      ...((actual.get(UNIT_FILES.amendments)?.size ?? 0) > (seal?.amendments.bytes ?? 0)
        ? [UNIT_FILES.amendments]
        : []),
    ];
  }
  for (const i of [...check.issues, ...check.otherSeal]) known.add(i.path);
  // Without a usable seal manifest, only the closeout's scope can be judged: no stray reports.
  const strayScope = (path: string): boolean => seal !== null || path === UNIT_FILES.seal || path.startsWith(adjPrefix);

  const missing: { issue: VerifyIssue; claim: Claim }[] = [];
  for (const [path, list] of claims.entries()) {
    const found = list.map((c) => ({ claim: c, issue: compare(c, actual.get(path), hashes.get(path)) }));
    const gone = found.find((f) => f.issue?.kind === 'missing');
    if (gone) missing.push({ issue: gone.issue!, claim: gone.claim });
    else for (const f of found) if (f.issue) issues.push(f.issue);
  }
  const strays = entries.filter((e) => !claims.has(e.path) && !known.has(e.path));
  // a closeout.json moved away leaves a unit that looks merely adjudicated: name the move, not a stray
  if (!closeR.present && seal !== null) {
    const moved = await findMovedCloseout(dir, strays, seal.unitId);
    if (moved !== undefined) {
      strays.splice(strays.indexOf(moved), 1);
      issues.push({
        path: UNIT_FILES.closeout,
        kind: 'renamed',
        detail: `its bytes are now at ${moved.path} (the unit no longer shows its closeout)`,
        renamedTo: moved.path,
      });
    }
  }
  for (const m of missing) {
    const exp = m.claim.entry;
    const idx = strays.findIndex((s) => s.type === 'file' && s.size === exp.size && hashes.get(s.path) === exp.sha256);
    if (idx === -1) issues.push(m.issue);
    else {
      const [to] = strays.splice(idx, 1);
      issues.push({
        path: m.issue.path,
        kind: 'renamed',
        detail: `its bytes are now at ${to!.path}`,
        renamedTo: to!.path,
      });
    }
  }
  for (const s of strays.filter((e) => strayScope(e.path)))
    issues.push({
      path: s.path,
      kind: 'stray',
      detail: s.type === 'file' ? 'not in any manifest' : `a ${s.type} not in any manifest`,
    });
  for (const d of strayDirectories(directories, [...entries.map((e) => e.path), ...claims.paths()]).filter(strayScope))
    issues.push({ path: d, kind: 'stray', detail: STRAY_DIRECTORY_DETAIL });
  // After the manifests' own verdicts (a closeout's 'truncated' says more than a record's 'not JSON'): the records'
  // checks, and each refused claim, on the record that makes it.
  issues.push(...check.issues, ...claims.issues);
  // a record naming another seal.json follows from seal.json's own change, when that is reported
  if (!issues.some((i) => i.path === UNIT_FILES.seal) && sealR.issue === null) issues.push(...check.otherSeal);

  if (closeout !== null && seal !== null) {
    // The closeout binds the log as it stands; the seal still binds its prefix and its hash chain.
    if (!issues.some((i) => i.path === UNIT_FILES.amendments))
      issues.push(...checkAmendmentsAfterSeal(bytesOf(UNIT_FILES.amendments), seal));
    if (
      !issues.some((i) => i.path === UNIT_FILES.seal) &&
      (closeout.sealSha256 !== hashes.get(UNIT_FILES.seal) || closeout.sealRoot !== seal.merkle.root)
    ) {
      issues.push({
        path: UNIT_FILES.closeout,
        kind: 'modified',
        detail: `its sealSha256/sealRoot fields name another ${UNIT_FILES.seal} than the one it binds`,
      });
    }
  }

  // a hosted unit's arrival-order key is the one its precommit committed to (before the seal could bind another)
  if (!issues.some((i) => i.path === ARRIVAL_ORDER_FILE))
    issues.push(...arrivalOrderIssues(bytesOf(UNIT_FILES.precommit), hashes));

  // seal.json's own defect is reported unless the closeout manifest already classified it precisely.
  if (sealR.issue && !issues.some((i) => i.path === UNIT_FILES.seal)) issues.push(sealR.issue);

  const root = closeout?.merkle.root ?? seal?.merkle.root ?? null;
  let rootMatched: 'seal' | 'closeout' | undefined;
  if (expectedRoot !== undefined && root !== null) {
    // A closed unit still answers to its seal root: the closeout binds seal.json's exact bytes.
    const closeoutBindsSeal =
      closeout !== null &&
      seal !== null &&
      closeout.files.some((f) => f.path === UNIT_FILES.seal && f.sha256 === hashes.get(UNIT_FILES.seal));
    if (closeout !== null && closeout.merkle.root === expectedRoot) rootMatched = 'closeout';
    else if (seal !== null && seal.merkle.root === expectedRoot && (closeout === null || closeoutBindsSeal))
      rootMatched = 'seal';
    else if (closeout !== null) {
      issues.push({
        path: UNIT_FILES.closeout,
        kind: 'root-mismatch',
        detail: `root mismatch: expected ${expectedRoot}; the unit's closeout root is ${closeout.merkle.root} and the root of the seal it binds ${seal?.merkle.root ?? '(unreadable)'}`,
      });
    } else if (!closeR.present) {
      issues.push({
        path: UNIT_FILES.closeout,
        kind: 'root-mismatch',
        detail: `root mismatch: expected ${expectedRoot}; the unit's seal root is ${seal?.merkle.root ?? '(unreadable)'} and it has no closeout.json (if the expected root is the closeout's, the closeout was removed: the unit was rolled back)`,
      });
    }
  }
  const files = {
    adjudicationNames: adjEntries.filter((e) => held.has(e.path)).map((e) => e.path.slice(adjPrefix.length)),
    bytesOf,
  };
  const signatures = await checkUnitSignatures(dir, {
    files,
    ...(opts.keysDir === undefined ? {} : { keysDir: opts.keysDir }),
    ...(opts.requireSignatures ? { requireSigned: true } : {}),
  });
  // a broken link that follows from a file already reported (changed, missing, renamed, a bad signature) is not
  // reported again; a key this verifier does not trust is not an integrity issue (trust.ts)
  const reported = new Set(issues.map((i) => i.path));
  for (const f of signatures.findings) {
    if (f.severity !== 'error' || f.trust === true || f.related.some((p) => reported.has(p))) continue;
    issues.push({ path: f.path, kind: 'signature', detail: `${f.finding}: ${f.detail}` });
    reported.add(f.path);
  }
  // the stock tools' attestations are intact signatures by their records' keys (verify-attestations.ts); damage to a record
  // itself (its bytes, its signature) is reported on the record, not again on its attestations
  const attestations = entries.filter((e) => e.type === 'file' && attestedFile(e.path) !== null).map((e) => e.path);
  for (const a of attestationIssues(attestations, bytesOf))
    if (!issues.some((j) => j.path === a.path || j.path === attestedFile(a.path))) issues.push(a);

  const trust = trustOf(signatures);
  const unitId = seal?.unitId ?? closeout?.unitId ?? null;
  const read = { seal, sealBytes: sealR.bytes, closeout, closeoutBytes: closeR.bytes, hashes };
  if (issues.length > 0 || seal === null || root === null) {
    const sorted = dedupe(issues).sort((a, b) => comparePaths(a.path, b.path));
    return {
      ...read,
      result: {
        ok: false,
        unitId,
        first: sorted[0]!,
        issues: sorted,
        filesChecked: entries.length,
        signatures,
        trust,
      } satisfies VerifyFailed,
    };
  }
  const latest = check.known
    .map((p) => ({ p, m: ADJUDICATION_RECORD_RE.exec(p.slice(adjPrefix.length)) }))
    .filter((x) => x.m !== null)
    .map((x) => ({ n: Number(x.m![1]), sha256: hashes.get(x.p) }))
    .sort((a, b) => b.n - a.n)[0];
  const result = {
    ok: true,
    unitId: seal.unitId,
    scope: closeout ? 'closeout' : 'seal',
    root,
    sealRoot: seal.merkle.root,
    precommitSha256: seal.files.find((f) => f.path === UNIT_FILES.precommit)?.sha256 ?? null,
    ...(rootMatched === undefined ? {} : { rootMatched }),
    filesChecked: entries.length,
    pending: [...new Set(pending)].sort(comparePaths),
    signatures,
    trust,
    stage:
      closeout !== null
        ? 'closed'
        : check.known.some((p) => ADJUDICATION_RECORD_RE.test(p.slice(adjPrefix.length)))
          ? 'adjudicated'
          : 'sealed',
    latestAdjudication: latest?.sha256 === undefined ? null : { n: latest.n, sha256: latest.sha256 },
    amendments: countLines(bytesOf(UNIT_FILES.amendments)),
  } satisfies VerifyOk;
  return { ...read, result };
}

/** The complete lines of a JSON-lines file's bytes (0 when absent). */
export function countLines(bytes: Uint8Array | null): number {
  let n = 0;
  if (bytes !== null) for (const b of bytes) if (b === 0x0a) n++;
  return n;
}

/** A stray file (at most 16 MiB) that is this unit's closeout record, moved away from closeout.json. */
async function findMovedCloseout(
  dir: string,
  strays: readonly FoundEntry[],
  unitId: string,
): Promise<FoundEntry | undefined> {
  for (const e of strays) {
    if (e.type !== 'file' || e.size > 16 * 1024 * 1024) continue;
    const bytes = await readFile(join(dir, e.path)).catch(() => null);
    if (bytes === null) continue;
    const r = parseRecordBytes(bytes, CloseoutRecordSchema);
    if (r.kind === 'ok' && r.value.unitId === unitId) return e;
  }
  return undefined;
}

/** A file, not otherwise accounted for, that starts with the sealed amendment log's bytes. */
async function findMovedLog(
  dir: string,
  entries: readonly FoundEntry[],
  claims: Claims,
  known: ReadonlySet<string>,
  seal: SealRecord,
): Promise<string | undefined> {
  for (const e of entries) {
    if (e.type !== 'file' || claims.has(e.path) || known.has(e.path) || e.size < seal.amendments.bytes) continue;
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
  return (await assertUnitVerified(dir, opts)).result;
}

/**
 * Verifies (E_UNIT_TAMPERED naming the first bad file) and returns what the verification saw: the seal and
 * closeout parsed from the bytes it hashed, and every file's hash — what a consumer's `readVerified` checks
 * its one read of each input against (verified-read.ts).
 */
export async function assertUnitVerified(dir: string, opts: VerifyOptions = {}): Promise<VerifiedUnit> {
  const v = await verifyUnitRead(dir, opts);
  const r = v.result;
  if (r.ok && r.trust.status === 'untrusted') {
    throw new ImepError(
      'E_UNTRUSTED',
      describeUntrusted(cliName(), dir, r.trust.untrusted, opts.keysDir === undefined ? keysDir() : undefined),
      {
        file: dir,
      },
    );
  }
  if (r.ok && v.seal !== null && v.sealBytes !== null) {
    await verifiedReadTestHooks.afterVerify?.(dir);
    return {
      dir,
      result: r,
      seal: v.seal,
      sealBytes: v.sealBytes,
      closeout: v.closeout,
      closeoutBytes: v.closeout === null ? null : v.closeoutBytes,
      hashes: v.hashes,
    };
  }
  if (r.ok)
    throw new ImepError('E_INTERNAL', 'verification passed without a seal', { file: join(dir, UNIT_FILES.seal) });
  const more = r.issues.length > 1 ? ` (+${r.issues.length - 1} more)` : '';
  throw new ImepError(
    'E_UNIT_TAMPERED',
    `${r.first.kind}${r.first.renamedTo ? ` → ${r.first.renamedTo}` : ''}: ${r.first.detail}${more}`,
    {
      file: join(dir, r.first.path),
      hint: 'restore the unit from an intact copy; `imep campaign verify` lists every difference',
    },
  );
}
