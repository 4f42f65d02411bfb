import { chmod, mkdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { sha256Hex, type JsonValue } from '../../core/index.js';
import { CriterionSchema, type Criterion } from '../../protocol/index.js';
import { loadFrozenProtocol } from '../transitions/precommit.js';
import { ioError, withOwnerWrite, writeFileAtomic } from '../io/atomic-write.js';

import type { AdjudicationRecord } from '../records/post-seal-records.js';
import { IN_TOTO_PAYLOAD_TYPE, dsseSign, minisignSign, operatorKey, signingEnabled } from '../../signing/index.js';
import { stageStatement, summarizeVerdicts, type StagePredicate, type VerdictSummary } from './statement.js';

/**
 * Attestations a reviewer checks with stock tools (docs/verify.md "Without IMEP"), written into the unit at the
 * seal, each adjudication and the closeout, signed with the operator's key (none when IMEP_SIGNING=off):
 *
 *   attestations/<record>.minisig      minisign signature of the stage's manifest file (src/signing/minisign.ts)
 *   attestations/<name>.intoto.json    DSSE envelope of an in-toto Statement v1 about it (statement.ts)
 *
 * <record> is seal.json, adjudication-NNN.json or closeout.json (<name> the same without .json); the manifest file is <record> at the unit root
 * (adjudication/<record> for an adjudication). They are detached signatures over files the unit's manifests already
 * bind: verify knows their names (attestedFile) and does not report them as strays; they vouch for
 * nothing IMEP's own verify relies on.
 */

export const ATTESTATIONS_DIR = 'attestations';

/** The manifest file (relative to the unit) an attestation file signs, or null when `path` is not one. */
export function attestedFile(path: string): string | null {
  const m = /^attestations\/(seal|closeout|adjudication-\d{3})(?:\.json\.minisig|\.intoto\.json)$/.exec(path);
  if (m === null) return null;
  return m[1]!.startsWith('adjudication-') ? `adjudication/${m[1]!}.json` : `${m[1]!}.json`;
}

/** The attestation files of a manifest file (its path relative to the unit). */
export function attestationPaths(manifest: string): { minisig: string; statement: string } {
  const name = basename(manifest);
  return {
    minisig: `${ATTESTATIONS_DIR}/${name}.minisig`,
    statement: `${ATTESTATIONS_DIR}/${name.replace(/\.json$/, '')}.intoto.json`,
  };
}

export interface StageAttestationInput {
  /** The stage's manifest file, relative to the unit (seal.json, adjudication/adjudication-NNN.json, closeout.json). */
  readonly manifest: string;
  readonly predicate: StagePredicate;
  readonly operatorId: string;
}

/** Writes the stage's minisign signature and in-toto envelope (read-only, as the rest of a sealed unit). */
export async function writeStageAttestations(dir: string, input: StageAttestationInput): Promise<void> {
  if (!signingEnabled()) return;
  const key = await operatorKey(input.operatorId);
  const bytes = await readFile(join(dir, input.manifest)).catch((e: unknown) =>
    Promise.reject(ioError(join(dir, input.manifest), 'read for its attestation', e)),
  );
  const name = basename(input.manifest);
  const p = input.predicate;
  const minisig = minisignSign(key.privateKey, key.publicKey, bytes, {
    untrusted: `IMEP ${p.stage} ${name} of unit ${p.unitId}, signed by ${input.operatorId}`,
    trusted: `imep unit=${p.unitId} stage=${p.stage} file=${name} root=${p.merkle.root} protocol=${p.protocolHash}`,
  });
  const statement = stageStatement({ name, sha256: sha256Hex(bytes) }, p);
  const envelope = dsseSign(
    key.privateKey,
    key.publicKey,
    IN_TOTO_PAYLOAD_TYPE,
    Buffer.from(JSON.stringify(statement), 'utf8'),
  );
  const out = join(dir, ATTESTATIONS_DIR);
  const files = attestationPaths(input.manifest);
  await withOwnerWrite([dir], async () => {
    await mkdir(out, { recursive: true }).catch((e: unknown) => Promise.reject(ioError(out, 'create', e)));
    await withOwnerWrite([out], async () => {
      await writeFileAtomic(join(dir, files.minisig), minisig, 0o444);
      await writeFileAtomic(join(dir, files.statement), `${JSON.stringify(envelope, null, 2)}\n`, 0o444);
    });
  });
  await chmod(out, 0o555).catch((e: unknown) => Promise.reject(ioError(out, 'make read-only', e)));
}

/**
 * The verdict summary of an adjudication record: its adjudication document's verdicts when it has one, else its brief
 * list; each claim in the words of the frozen protocol's criterion (protocol.json, hash-checked against the precommit).
 */
export async function adjudicationVerdicts(dir: string, record: AdjudicationRecord): Promise<VerdictSummary[]> {
  const criteria = frozenCriteria((await loadFrozenProtocol(dir)).protocol);
  const result = record.result as { file?: unknown; verdicts?: unknown } | null;
  const file = typeof result?.file === 'string' ? result.file : null;
  if (file !== null && record.artifacts.some((a) => a.path === file)) {
    try {
      const doc = JSON.parse(await readFile(join(dir, file), 'utf8')) as { verdicts?: unknown };
      if (Array.isArray(doc.verdicts)) return summarizeVerdicts(doc.verdicts, criteria);
    } catch {
      // not JSON: the brief list below
    }
  }
  return Array.isArray(result?.verdicts) ? summarizeVerdicts(result.verdicts, criteria) : [];
}

/** The frozen protocol's criteria that parse as criteria (a claim is left null for any other). */
function frozenCriteria(protocol: JsonValue): Criterion[] {
  const list = (protocol as { criteria?: unknown } | null)?.criteria;
  if (!Array.isArray(list)) return [];
  return list.flatMap((c: unknown) => {
    const r = CriterionSchema.safeParse(c);
    return r.success ? [r.data] : [];
  });
}
