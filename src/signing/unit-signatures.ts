import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ADJUDICATION_RECORD_RE, UNIT_FILES } from '../campaign/unit-layout.js';
import { checkSignatureChain, type ChainRecord, type SignatureReport } from './chain.js';
import { keysDir, trustedKeys } from './key-store.js';

/**
 * The signature check of one evidence unit (used by src/campaign/verify.ts): reads the chain's
 * records as they are on disk — precommit.json, seal.json, adjudication/adjudication-NNN.json in
 * number order, closeout.json — the operators of the formal run record (rows/run.json, itself bound
 * by the seal manifest) and the trust store, and runs chain.ts over them.
 */

export interface UnitSignatureOptions {
  /** The key store to trust (default: keysDir(), i.e. IMEP_KEYS_DIR or ~/.imep/keys). */
  readonly keysDir?: string;
  /** Refuse unsigned records (default: only an unsigned record after a signed one is refused). */
  readonly requireSigned?: boolean;
}

async function bytesOf(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch {
    return null; // absent or unreadable: the manifest checks report it
  }
}

/** The unit-relative paths of the chain's records, in chain order (those that exist). */
export async function chainRecordPaths(dir: string): Promise<string[]> {
  const adjudications = await readdir(join(dir, UNIT_FILES.adjudicationDir)).then(
    (names) => names.filter((n) => ADJUDICATION_RECORD_RE.test(n)).sort(),
    () => [] as string[],
  );
  return [UNIT_FILES.precommit, UNIT_FILES.seal, ...adjudications.map((n) => `${UNIT_FILES.adjudicationDir}/${n}`), UNIT_FILES.closeout];
}

/** The operators who ran the formal run's conditions, as rows/run.json records them ([] when absent). */
async function runOperators(dir: string): Promise<string[]> {
  const bytes = await bytesOf(join(dir, UNIT_FILES.runRecord));
  if (bytes === null) return [];
  try {
    const run = JSON.parse(bytes.toString('utf8')) as { sessions?: { operator?: { id?: unknown } }[] };
    return [...new Set((run.sessions ?? []).map((s) => s.operator?.id).filter((id): id is string => typeof id === 'string'))].sort();
  } catch {
    return [];
  }
}

export async function checkUnitSignatures(dir: string, opts: UnitSignatureOptions = {}): Promise<SignatureReport> {
  const records: ChainRecord[] = [];
  for (const path of await chainRecordPaths(dir)) {
    const bytes = await bytesOf(join(dir, path));
    if (bytes !== null) records.push({ path, bytes });
  }
  const trusted = await trustedKeys({ dir: opts.keysDir ?? keysDir() });
  return checkSignatureChain({ records, ranBy: await runOperators(dir), trusted, ...(opts.requireSigned ? { requireSigned: true } : {}) });
}
