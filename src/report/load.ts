/**
 * What a report reads, from a verified unit only: the current adjudication (its stored bytes), the sealed
 * rows, the unit's spec, the seal, the cross-check records, the closeout record when closed, and the
 * amendment log as it stands now (amendments written after the adjudication are listed as such).
 */
import { identityWarning } from '../signing/index.js';
import { ImepError } from '../core/index.js';
import {
  readVerifiedAmendments,
  type Amendment,
  readAdjudicationArtifact,
  readAdjudicationText,
  CrossCheckRecordSchema,
  type CloseoutRecord,
  type CrossCheckRecord,
  UNIT_FILES,
  listAdjudicationRecords,
  readUnitState,
  type UnitSnapshot,
  readVerifiedRecord,
  RunRecordSchema,
  type RunRecord,
  assertUnitVerified,
} from '../evidence/index.js';
import type { Adjudication } from '../adjudication/index.js';
import { loadVerifiedProtocol, loadVerifiedRows } from '../adjudication/index.js';
import type { EpisodeRow, SealRecord } from '../evidence/index.js';
import type { Protocol } from '../protocol/index.js';
import { loadRecordedFrames, type RecordedEpisode } from './frames-load.js';

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
  /** The formal run's record (rows/run.json): its sessions, and how each one's policy host was isolated. */
  readonly run: RunRecord;
  /**
   * Why the current adjudication's identity is weak, or null: its operator id came from IMEP_OPERATOR, or its key was
   * created by the command that adjudicated (src/signing/chain.ts identityWarning; verify warns alike).
   */
  readonly identityWarning?: string | null;
  /** The rollout frames the protocol registered (traces/frames.jsonl), checked against the seal; [] when none. */
  readonly recordedFrames?: readonly RecordedEpisode[];
}

export async function loadReportInputs(dir: string): Promise<ReportInputs> {
  const snapshot = await readUnitState(dir);
  if (!['adjudicated', 'cross-checked', 'closed'].includes(snapshot.state)) {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snapshot.header.id} is '${snapshot.state}'; a report needs an adjudicated unit`,
      {
        file: dir,
        hint: 'run `imep campaign adjudicate` first',
      },
    );
  }
  // Each input is read once and checked against the verified entry (the seal's, the record's) before it is parsed.
  const unit = await assertUnitVerified(dir);
  const { file, path, text, record } = await readAdjudicationArtifact(dir, unit);
  const adjudication = readAdjudicationText(text, path);
  const { rows } = await loadVerifiedRows(unit);
  const listed = new Set(adjudication.amendments.log.map((a) => a.id));
  const laterAmendments = (await readVerifiedAmendments(unit)).amendments.filter((a) => !listed.has(a.id));
  const { crossChecks: names } = await listAdjudicationRecords(dir);
  const crossChecks: CrossCheckRecord[] = [];
  for (const n of names) {
    const p = `${UNIT_FILES.adjudicationDir}/${n}`;
    crossChecks.push(await readVerifiedRecord(dir, p, unit.hashes.get(p), CrossCheckRecordSchema));
  }
  return {
    dir,
    snapshot,
    adjudication,
    adjudicationFile: file,
    adjudicationSha256: record.artifacts.find((a) => a.path === file)?.sha256 ?? '',
    rows,
    protocol: (await loadVerifiedProtocol(unit)).protocol,
    seal: unit.seal,
    crossChecks,
    closeout: unit.closeout,
    laterAmendments,
    run: await readVerifiedRecord(dir, UNIT_FILES.runRecord, unit.hashes.get(UNIT_FILES.runRecord), RunRecordSchema),
    identityWarning: identityWarning(record),
    recordedFrames: await loadRecordedFrames(unit),
  };
}
