/**
 * What a report reads, from a verified unit only: the current adjudication (its stored bytes), the sealed
 * rows, the unit's spec, the seal, the cross-check records, the closeout record when closed, and the
 * amendment log as it stands now (amendments written after the adjudication are listed as such).
 */
import { readFile } from 'node:fs/promises';
import { ImepError } from '../core/errors.js';
import { readCrossChecks } from '../campaign/adjudicate.js';
import { readAmendments, type Amendment } from '../campaign/amend.js';
import { readAdjudicationArtifact, type Adjudication } from '../campaign/adjudication/index.js';
import { parseRows } from '../campaign/adjudication/sealed-inputs.js';
import type { EpisodeRow } from '../campaign/episode-row.js';
import type { CloseoutRecord, CrossCheckRecord } from '../campaign/post-seal-records.js';
import { readRecord } from '../campaign/record-file.js';
import { CloseoutRecordSchema } from '../campaign/post-seal-records.js';
import { loadFrozenProtocol } from '../campaign/precommit.js';
import { readSeal, type SealRecord } from '../campaign/seal.js';
import { ProtocolSchema, type Protocol } from '../protocol/schema.js';
import { unitPaths } from '../campaign/unit-layout.js';
import { readUnitState, type UnitSnapshot } from '../campaign/unit-state.js';
import { assertUnitIntact } from '../campaign/verify.js';

export interface ReportInputs {
  readonly dir: string;
  readonly snapshot: UnitSnapshot;
  readonly adjudication: Adjudication;
  readonly adjudicationFile: string;
  readonly adjudicationSha256: string;
  readonly rows: readonly EpisodeRow[];
  /** The frozen protocol (protocol.json, re-hashed against the precommit on load). */
  readonly protocol: Protocol;
  readonly seal: SealRecord;
  readonly crossChecks: readonly CrossCheckRecord[];
  readonly closeout: CloseoutRecord | null;
  /** Amendments written after the adjudication (not listed in it). */
  readonly laterAmendments: readonly Amendment[];
}

export async function loadReportInputs(dir: string): Promise<ReportInputs> {
  const snapshot = await readUnitState(dir);
  if (!['adjudicated', 'cross-checked', 'closed'].includes(snapshot.state)) {
    throw new ImepError('E_OUT_OF_ORDER', `unit ${snapshot.header.id} is '${snapshot.state}'; a report needs an adjudicated unit`, {
      file: dir,
      hint: 'run `imep campaign adjudicate` first',
    });
  }
  await assertUnitIntact(dir);
  const { file, text, record } = await readAdjudicationArtifact(dir);
  const adjudication = JSON.parse(text) as Adjudication;
  const paths = unitPaths(dir);
  const rows = parseRows((await readFile(paths.rows)).toString('utf8'), paths.rows);
  const listed = new Set(adjudication.amendments.log.map((a) => a.id));
  const laterAmendments = (await readAmendments(dir)).amendments.filter((a) => !listed.has(a.id));
  const closeRead = await readRecord(paths.closeout, CloseoutRecordSchema);
  return {
    dir,
    snapshot,
    adjudication,
    adjudicationFile: file,
    adjudicationSha256: record.artifacts.find((a) => a.path === file)?.sha256 ?? '',
    rows,
    protocol: ProtocolSchema.parse((await loadFrozenProtocol(dir)).protocol),
    seal: await readSeal(dir),
    crossChecks: await readCrossChecks(dir),
    closeout: closeRead.kind === 'ok' ? closeRead.value : null,
    laterAmendments,
  };
}
