import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Hex } from '../../core/index.js';
import { ADJUDICATION_RECORD_RE, CROSS_CHECK_RECORD_RE, UNIT_FILES } from '../unit-layout.js';
import { checkAmendmentSignatures } from './amendment-signatures.js';
import {
  checkSignatureChain,
  parseObject,
  type ChainRecord,
  type SignatureReport,
  keysDir,
  trustedKeys,
} from '../../signing/index.js';

/**
 * The signature check of one evidence unit (used by src/evidence/verify/verify.ts, which hands over the bytes it
 * hashed: `files`): reads the chain's records — each once — precommit.json, seal.json, adjudication/adjudication-NNN.json in
 * number order (each chained to the one it supersedes, the first to seal.json), each followed by the
 * adjudication/cross-check-NNN.json records that check it (chained to it), closeout.json (chained to
 * the cross-check it names) — the operators of the formal run record (rows/run.json, itself bound
 * by the seal manifest) and the trust store, and runs chain.ts over them; then checks the signatures
 * of the post-seal amendments (amendment-signatures.ts).
 */

export interface UnitSignatureOptions {
  /** The key store to trust (default: keysDir(), i.e. IMEP_KEYS_DIR or ~/.imep/keys). */
  readonly keysDir?: string;
  /** Refuse unsigned records (default: only an unsigned record after a signed one is refused). */
  readonly requireSigned?: boolean;
  /**
   * The unit's files as the caller already read them (verify.ts: the very bytes it hashed), so that the check
   * never opens a file again; without it, the records are read from disk.
   */
  readonly files?: UnitFiles;
}

/** A unit's files held in memory: the names under adjudication/ and each unit-relative path's bytes (null: none). */
export interface UnitFiles {
  readonly adjudicationNames: readonly string[];
  readonly bytesOf: (relPath: string) => Buffer | null;
}

async function bytesOf(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch {
    return null; // absent or unreadable: the manifest checks report it
  }
}

/** The unit's files as they are on disk now. */
async function diskFiles(dir: string): Promise<UnitFiles> {
  const names = (await readdir(join(dir, UNIT_FILES.adjudicationDir)).catch(() => [] as string[])).filter(
    (n) => ADJUDICATION_RECORD_RE.test(n) || CROSS_CHECK_RECORD_RE.test(n),
  );
  const paths = [
    UNIT_FILES.precommit,
    UNIT_FILES.seal,
    UNIT_FILES.closeout,
    UNIT_FILES.runRecord,
    UNIT_FILES.amendments,
    ...names.map((n) => `${UNIT_FILES.adjudicationDir}/${n}`),
  ];
  const held = new Map(await Promise.all(paths.map(async (p) => [p, await bytesOf(join(dir, p))] as const)));
  return { adjudicationNames: names, bytesOf: (p) => held.get(p) ?? null };
}

function adjudicationNames(files: UnitFiles): { adjudications: string[]; crossChecks: string[] } {
  const names = files.adjudicationNames;
  return {
    adjudications: names.filter((n) => ADJUDICATION_RECORD_RE.test(n)).sort(),
    crossChecks: names.filter((n) => CROSS_CHECK_RECORD_RE.test(n)).sort(),
  };
}

/** The unit-relative paths of the chain's records, in chain order (those that exist). */
export async function chainRecordPaths(dir: string): Promise<string[]> {
  return chainRecords(await diskFiles(dir)).map((r) => r.path);
}

/** A string field of the record in `bytes` (undefined when it is not JSON, or the field not a string). */
function field(bytes: Uint8Array, get: (v: Record<string, unknown>) => unknown): string | undefined {
  const record = parseObject(bytes);
  const v = record === null ? undefined : get(record);
  return typeof v === 'string' ? v : undefined;
}

/** Whether the record in `bytes` is JSON without a signature block. */
function isUnsignedRecord(bytes: Uint8Array): boolean {
  const record = parseObject(bytes);
  return record !== null && record['signature'] === undefined;
}

/** The chain's records as they are on disk, in chain order, each with the record it must follow. */
function chainRecords(files: UnitFiles): ChainRecord[] {
  const adj = UNIT_FILES.adjudicationDir;
  const read = (path: string, after?: string | null): ChainRecord | null => {
    const bytes = files.bytesOf(path);
    return bytes === null ? null : { path, bytes, ...(after === undefined ? {} : { after }) };
  };
  const out: (ChainRecord | null)[] = [read(UNIT_FILES.precommit), read(UNIT_FILES.seal)];
  const { adjudications, crossChecks } = adjudicationNames(files);
  const checks = crossChecks
    .map((n) => read(`${adj}/${n}`))
    .filter((r): r is ChainRecord => r !== null)
    .map((r) => {
      const judged = field(r.bytes, (v) => v['adjudicationFile']);
      return judged === undefined ? { record: r, judged } : { record: { ...r, after: `${adj}/${judged}` }, judged };
    });
  let previous: string = UNIT_FILES.seal;
  for (const name of adjudications) {
    out.push(read(`${adj}/${name}`, previous));
    previous = `${adj}/${name}`;
    out.push(...checks.filter((c) => c.judged === name).map((c) => c.record));
  }
  out.push(...checks.filter((c) => c.judged === undefined || !adjudications.includes(c.judged)).map((c) => c.record));
  const closeout = read(UNIT_FILES.closeout);
  if (closeout !== null) {
    const legacy = legacyCloseout(
      closeout.bytes,
      checks.map((c) => c.record),
    );
    if (legacy !== null) {
      out.push({ ...closeout, after: legacy.after });
      return out.filter((r): r is ChainRecord => r !== null && !legacy.bound.has(r.path));
    }
    const relied = field(closeout.bytes, (v) => (v['crossCheck'] as Record<string, unknown> | undefined)?.['file']);
    out.push(relied === undefined ? closeout : { ...closeout, after: `${adj}/${relied}` });
  }
  return out.filter((r): r is ChainRecord => r !== null);
}

/**
 * A unit closed before cross-checks were signed: its closeout is signed and chained to the adjudication
 * (not to a cross-check), and the cross-check it names is unsigned. Its unsigned cross-checks are then
 * bound by the signed closeout's manifest instead of by signatures: those whose bytes match the
 * closeout's `files` entry leave the chain (anything else — an unsigned cross-check the closeout does not
 * bind as it is — stays in it and is refused). null when the closeout is not of that form.
 */
function legacyCloseout(
  bytes: Uint8Array,
  checks: readonly ChainRecord[],
): { after: string; bound: Set<string> } | null {
  const v = parseObject(bytes) as {
    signature?: { prev?: { file?: unknown } | null };
    crossCheck?: { file?: unknown };
    files?: { path?: unknown; sha256?: unknown }[];
  } | null;
  if (v === null) return null;
  const after = v.signature?.prev?.file;
  const relied = v.crossCheck?.file;
  if (
    typeof after !== 'string' ||
    !ADJUDICATION_RECORD_RE.test(after.slice(`${UNIT_FILES.adjudicationDir}/`.length)) ||
    typeof relied !== 'string'
  )
    return null;
  const reliedOn = checks.find((c) => c.path === `${UNIT_FILES.adjudicationDir}/${relied}`);
  if (reliedOn === undefined || !isUnsignedRecord(reliedOn.bytes)) return null;
  const listed = new Map((v.files ?? []).map((f) => [f.path, f.sha256]));
  const bound = new Set(
    checks.filter((c) => isUnsignedRecord(c.bytes) && listed.get(c.path) === sha256Hex(c.bytes)).map((c) => c.path),
  );
  return { after, bound };
}

/** The operators who ran the formal run's conditions, as rows/run.json records them ([] when absent). */
function runOperators(files: UnitFiles): string[] {
  const bytes = files.bytesOf(UNIT_FILES.runRecord);
  if (bytes === null) return [];
  try {
    const run = JSON.parse(bytes.toString('utf8')) as { sessions?: { operator?: { id?: unknown } }[] };
    return [
      ...new Set((run.sessions ?? []).map((s) => s.operator?.id).filter((id): id is string => typeof id === 'string')),
    ].sort();
  } catch {
    return [];
  }
}

export async function checkUnitSignatures(dir: string, opts: UnitSignatureOptions = {}): Promise<SignatureReport> {
  const files = opts.files ?? (await diskFiles(dir));
  const records = chainRecords(files);
  const trusted = await trustedKeys({ dir: opts.keysDir ?? keysDir() });
  const report = checkSignatureChain({
    records,
    ranBy: runOperators(files),
    trusted,
    ...(opts.requireSigned ? { requireSigned: true } : {}),
  });
  const amendmentFindings = checkAmendmentSignatures({
    seal: records.find((r) => r.path === UNIT_FILES.seal)?.bytes ?? null,
    amendments: files.bytesOf(UNIT_FILES.amendments),
    trusted,
    unitSigned: report.status !== 'unsigned',
    ...(opts.requireSigned ? { requireSigned: true } : {}),
  });
  return amendmentFindings.length === 0 ? report : { ...report, findings: [...report.findings, ...amendmentFindings] };
}
