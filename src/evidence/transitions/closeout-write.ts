import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ImepError, sha256Hex } from '../../core/index.js';
import { withOwnerWrite } from '../io/atomic-write.js';
import { readAmendments } from './amend.js';
import { readAdjudications, readCrossChecks } from './post-seal-write.js';
import { adjudicationVerdicts, writeStageAttestations } from '../attestation/index.js';
import { buildManifest, listEntries, MERKLE_SCHEME, merkleRoot } from '../manifest.js';
import { currentOperator } from '../operator.js';
import { CloseoutRecordSchema, type CloseoutRecord } from '../records/post-seal-records.js';
import { withSelfHash, writeRecord } from '../io/record-file.js';
import { makeReadOnly, readSeal } from './seal.js';
import { recordNumber, UNIT_FILES, unitPaths, type Operator } from '../unit-layout.js';
import { listAdjudicationRecords, requireAction } from '../unit-state.js';
import { assertUnitIntact } from '../verify/verify.js';
import { prepareSigner, prevLink, signRecord } from '../../signing/index.js';
import type { Amendment } from '../records/amendment.js';

/**
 * Closeout: cross-checked → closed. Verifies the unit, then writes closeout.json — a second
 * manifest over seal.json, amendments.jsonl (as it now stands) and every file in adjudication/,
 * with its own Merkle root, the list of amendments and the current adjudication and cross-check —
 * and makes everything read-only. After closeout nothing can be added: every write API refuses with
 * E_UNIT_SEALED (lifecycle.ts), and verification reports any new file as stray. The closeout root is
 * the fingerprint to cite for the unit. In a signed unit the closeout is chained to the cross-check it
 * relies on (which is chained to the adjudication it checked). It refuses when the current adjudication
 * lists amendments the log does not hold (amendments.jsonl removed or cut after the adjudication).
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
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snap.header.id} has no cross-check; run \`imep campaign cross-check\` first`,
      { file: dir },
    );
  }
  if (lastCheck.adjudicationFile !== lastAdj) {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `the last cross-check is of ${lastCheck.adjudicationFile}, not the current ${lastAdj}; run \`imep campaign cross-check\` first`,
      { file: dir },
    );
  }
  await assertAmendmentsHeld(dir, join(paths.adjudicationDir, lastAdj), log.amendments);
  const adjPrefix = `${UNIT_FILES.adjudicationDir}/`;
  const listed = (await listEntries(dir))
    .map((e) => e.path)
    .filter((p) => p === UNIT_FILES.seal || p === UNIT_FILES.amendments || p.startsWith(adjPrefix));
  const files = await buildManifest(dir, listed);
  const operator = input.operator ?? currentOperator();
  await prepareSigner(operator.id);
  const adjudication = { file: lastAdj, sha256: sha256Hex(await readFile(join(paths.adjudicationDir, lastAdj))) };
  const record: CloseoutRecord = withSelfHash(
    await signRecord(
      {
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
      },
      { signer: operator.id, prev: await prevLink(dir, `${adjPrefix}${lastCheckFile}`) },
    ),
  );
  await withOwnerWrite([dir], () => writeRecord(paths.closeout, CloseoutRecordSchema.parse(record)));
  const adjRecord = (await readAdjudications(dir)).find(
    (a) => `adjudication-${recordNumber(a.number)}.json` === lastAdj,
  );
  await writeStageAttestations(dir, {
    manifest: UNIT_FILES.closeout,
    operatorId: operator.id,
    predicate: {
      unitId: record.unitId,
      stage: 'closed',
      protocolHash: seal.protocolHash,
      merkle: record.merkle,
      sealRoot: seal.merkle.root,
      verdicts: adjRecord === undefined ? [] : await adjudicationVerdicts(dir, adjRecord),
    },
  });
  await makeReadOnly(dir);
  return record;
}

/**
 * Refuses when the adjudication record at `adjPath` lists an amendment that `held` (the log as it now
 * stands) lacks or holds with another date or text: listings are read from the record's
 * result.amendments.log and from each JSON artifact's amendments.log (the adjudicator's
 * adjudication/NNN/adjudication.json, whose bytes verify has just checked against the record).
 */
async function assertAmendmentsHeld(dir: string, adjPath: string, held: readonly Amendment[]): Promise<void> {
  type Listing = { id?: unknown; at?: unknown; text?: unknown };
  const logOf = (v: unknown): Listing[] => {
    const log = (v as { amendments?: { log?: unknown } } | null)?.amendments?.log;
    return Array.isArray(log) ? (log.filter((x) => x !== null && typeof x === 'object') as Listing[]) : [];
  };
  const record = JSON.parse((await readFile(adjPath)).toString('utf8')) as {
    result?: unknown;
    artifacts?: { path?: unknown }[];
  };
  const sources: { file: string; listed: Listing[] }[] = [
    { file: relative(dir, adjPath), listed: logOf(record.result) },
  ];
  for (const a of record.artifacts ?? []) {
    if (typeof a.path !== 'string' || !a.path.endsWith('.json')) continue;
    try {
      sources.push({ file: a.path, listed: logOf(JSON.parse((await readFile(join(dir, a.path))).toString('utf8'))) });
    } catch {
      // not JSON: lists nothing
    }
  }
  for (const { file, listed } of sources) {
    for (const item of listed) {
      const a = held.find((h) => h.id === item.id);
      if (a === undefined || a.at !== item.at || (typeof item.text === 'string' && a.text !== item.text)) {
        throw new ImepError(
          'E_UNIT_TAMPERED',
          `${file} lists amendment ${String(item.id)} (at ${String(item.at)}), which ${UNIT_FILES.amendments} ${a === undefined ? 'does not hold' : 'holds with another date or text'}; the unit cannot be closed out`,
          {
            file: join(dir, UNIT_FILES.amendments),
            hint: 'restore amendments.jsonl from an intact copy; amendments are append-only',
          },
        );
      }
    }
  }
}
