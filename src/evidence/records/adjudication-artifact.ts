/**
 * The adjudication document of a unit: the newest adjudication record, read verified against the unit's hashes,
 * and the artifact (adjudication.json) it lists, read verified against the record's SHA-256. The evidence store
 * reads it for the adjudicator (regeneration), the independent cross-check and the report alike.
 */
import { join } from 'node:path';
import { ImepError } from '../../core/index.js';
import { readVerified, readVerifiedRecord, type VerifiedUnit } from '../io/verified-read.js';
import { recordNumber, UNIT_FILES } from '../unit-layout.js';
import { listAdjudicationRecords } from '../unit-state.js';
import { assertUnitVerified } from '../verify/verify.js';
import { AdjudicationRecordSchema, type AdjudicationRecord } from './post-seal-records.js';

/** The artifact's file name inside adjudication/NNN/. */
export const ADJUDICATION_FILE = 'adjudication.json';

/**
 * The current adjudication's record, artifact path and stored bytes, from a verified unit (verified here when
 * not given): the record is read once against the hash the verification saw, the artifact once against the
 * SHA-256 the record lists for it (verified-read.ts).
 */
export async function readAdjudicationArtifact(
  dir: string,
  verified?: VerifiedUnit,
): Promise<{ record: AdjudicationRecord; file: string; path: string; text: string }> {
  const unit = verified ?? (await assertUnitVerified(dir));
  const { adjudications } = await listAdjudicationRecords(dir);
  const name = adjudications.at(-1);
  if (name === undefined) {
    throw new ImepError('E_OUT_OF_ORDER', 'the unit has no adjudication; run `imep campaign adjudicate` first', {
      file: dir,
    });
  }
  const recordPath = `${UNIT_FILES.adjudicationDir}/${name}`;
  const record = await readVerifiedRecord(dir, recordPath, unit.hashes.get(recordPath), AdjudicationRecordSchema);
  const entry = record.artifacts.find((a) => a.path.endsWith(`/${ADJUDICATION_FILE}`));
  if (entry === undefined) {
    throw new ImepError(
      'E_INTERNAL',
      `adjudication-${recordNumber(record.number)}.json lists no ${ADJUDICATION_FILE}: it was not written by IMEP's adjudicator`,
      {
        file: join(dir, UNIT_FILES.adjudicationDir, `adjudication-${recordNumber(record.number)}.json`),
      },
    );
  }
  const path = join(dir, entry.path);
  const text = (await readVerified(dir, entry.path, entry.sha256)).toString('utf8');
  return { record, file: entry.path, path, text };
}
