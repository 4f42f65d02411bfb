import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { withOwnerWrite } from './atomic-write.js';
import { readAmendments } from './amend.js';
import { readCrossChecks } from './adjudicate.js';
import { buildManifest, listEntries, MERKLE_SCHEME, merkleRoot } from './manifest.js';
import { currentOperator } from './operator.js';
import { CloseoutRecordSchema, type CloseoutRecord } from './post-seal-records.js';
import { withSelfHash, writeRecord } from './record-file.js';
import { makeReadOnly, readSeal } from './seal.js';
import { UNIT_FILES, unitPaths, type Operator } from './unit-layout.js';
import { listAdjudicationRecords, requireAction } from './unit-state.js';
import { assertUnitIntact } from './verify.js';
import { prepareSigner, signRecord } from '../signing/sign-record.js';

/**
 * Closeout: cross-checked → closed. Verifies the unit, then writes closeout.json — a second
 * manifest over seal.json, amendments.jsonl (as it now stands) and every file in adjudication/,
 * with its own Merkle root, the list of amendments and the current adjudication and cross-check —
 * and makes everything read-only. After closeout nothing can be added: every write API refuses with
 * E_UNIT_SEALED (lifecycle.ts), and verification reports any new file as stray. The closeout root is
 * the fingerprint to cite for the unit.
 */

export interface CloseoutInput {
  readonly notes?: string;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

export async function closeout(dir: string, input: CloseoutInput = {}): Promise<CloseoutRecord> {
  const snap = await requireAction(dir, 'closeout');
  await assertUnitIntact(dir);
  const seal = await readSeal(dir);
  const paths = unitPaths(dir);
  const log = await readAmendments(dir);
  const { adjudications, crossChecks: checkFiles } = await listAdjudicationRecords(dir);
  const lastCheck = (await readCrossChecks(dir)).at(-1);
  const lastCheckFile = checkFiles.at(-1);
  const lastAdj = adjudications.at(-1);
  if (lastCheck === undefined || lastCheckFile === undefined || lastAdj === undefined) {
    throw new ImepError('E_OUT_OF_ORDER', `unit ${snap.header.id} has no cross-check; run \`imep campaign cross-check\` first`, { file: dir });
  }
  if (lastCheck.adjudicationFile !== lastAdj) {
    throw new ImepError('E_OUT_OF_ORDER', `the last cross-check is of ${lastCheck.adjudicationFile}, not the current ${lastAdj}; run \`imep campaign cross-check\` first`, { file: dir });
  }
  const adjPrefix = `${UNIT_FILES.adjudicationDir}/`;
  const listed = (await listEntries(dir))
    .map((e) => e.path)
    .filter((p) => p === UNIT_FILES.seal || p === UNIT_FILES.amendments || p.startsWith(adjPrefix));
  const files = await buildManifest(dir, listed);
  const operator = input.operator ?? currentOperator();
  await prepareSigner(operator.id);
  const adjudication = { file: lastAdj, sha256: sha256Hex(await readFile(join(paths.adjudicationDir, lastAdj))) };
  const record: CloseoutRecord = withSelfHash(await signRecord({
    kind: 'imep.closeout' as const,
    version: 1 as const,
    unitId: snap.header.id,
    closedAt: (input.now ?? (() => new Date()))().toISOString(),
    operator,
    sealRoot: seal.merkle.root,
    sealSha256: sha256Hex(await readFile(paths.seal)),
    merkle: { scheme: MERKLE_SCHEME, root: merkleRoot(files) },
    files,
    amendments: log.amendments.map((a) => ({ id: a.id, classification: a.classification, at: a.at })),
    adjudication,
    crossCheck: { file: lastCheckFile, outcome: lastCheck.outcome },
    notes: input.notes?.trim() || null,
  }, { signer: operator.id, prev: { file: `${UNIT_FILES.adjudicationDir}/${lastAdj}`, sha256: adjudication.sha256 } }));
  await withOwnerWrite([dir], () => writeRecord(paths.closeout, CloseoutRecordSchema.parse(record)));
  await makeReadOnly(dir);
  return record;
}
