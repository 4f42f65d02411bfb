/**
 * `adjudicateUnit`: sealed → adjudicated, ONCE per sealed unit.
 *
 *   1. the unit must be 'sealed' (E_OUT_OF_ORDER otherwise; an adjudicated unit is only regenerated);
 *   2. verification first: any changed, missing or stray file refuses with E_UNIT_TAMPERED naming the
 *      first bad file;
 *   3. the adjudicating operator must not have run the conditions, unless `allowSameOperator` gives a
 *      reason — the override is recorded in the output and in the store's record;
 *   4. everything is computed from protocol.json and rows/rows.jsonl alone (compute.ts);
 *   5. the result is written by the store as the artifact adjudication/NNN/adjudication.json (canonical
 *      pretty JSON), listed with its SHA-256 in the self-hashed record adjudication/adjudication-NNN.json
 *      — the commit point; the unit is then 'adjudicated'.
 *
 * Regeneration (`reproduceAdjudication`, or `adjudicateUnit(dir, { regenerate: true })`) is read-only:
 * it recomputes from the same sealed inputs, the recorded operator and the amendments listed at the
 * time, and requires the stored bytes exactly; any difference fails loudly, naming the first line.
 */
import { join } from 'node:path';
import { ImepError, sha256Hex } from '../core/index.js';
import {
  adjudicate as storeAdjudicate,
  readVerifiedAmendments,
  assertAllowed,
  checkAdjudicator,
  currentOperator,
  type SameOperatorOverride,
  AdjudicationRecordSchema,
  type AdjudicationRecord,
  RunRecordSchema,
  runOperators,
  recordNumber,
  UNIT_FILES,
  type Operator,
  listAdjudicationRecords,
  readUnitState,
  readVerified,
  readVerifiedRecord,
  sealedSha256,
  type VerifiedUnit,
  assertUnitVerified,
  readAdjudicationArtifact,
  readAdjudicationHeader,
} from '../evidence/index.js';
import type { Protocol } from '../protocol/index.js';
import { computeAdjudication, renderAdjudication } from './compute.js';
import { loadSealedInputs } from './sealed-inputs.js';
import { ADJUDICATION_FILE, ADJUDICATOR, type Adjudication } from './types.js';

export interface AdjudicateUnitOptions {
  readonly operator?: Operator;
  /** Allows adjudication by an operator who ran the conditions; the reason is recorded. */
  readonly allowSameOperator?: SameOperatorOverride;
  /** Regenerate the stored adjudication read-only and require identical bytes. */
  readonly regenerate?: boolean;
  readonly now?: () => Date;
}

export interface AdjudicateUnitResult {
  readonly adjudication: Adjudication;
  /** The canonical bytes stored (or reproduced). */
  readonly text: string;
  readonly record: AdjudicationRecord;
  /** Unit-relative path of the artifact, e.g. adjudication/001/adjudication.json. */
  readonly file: string;
  readonly regenerated: boolean;
  /** The frozen protocol it was computed from (its criteria word the verdict lines). */
  readonly protocol: Protocol;
}

function summary(a: Adjudication, file: string, text: string): unknown {
  return {
    file,
    sha256: sha256Hex(text),
    status: a.goNoGo.status,
    verdicts: a.verdicts.map((v) => ({ criterion: v.criterion, verdict: v.verdict })),
    questions: a.questions.map((q) => ({ question: q.question, verdict: q.verdict })),
  };
}

export async function adjudicateUnit(unitDir: string, opts: AdjudicateUnitOptions = {}): Promise<AdjudicateUnitResult> {
  if (opts.regenerate) return reproduceAdjudication(unitDir);
  const snap = await readUnitState(unitDir);
  if (snap.state === 'adjudicated' || snap.state === 'cross-checked' || snap.state === 'closed') {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snap.header.id} is already '${snap.state}'; the adjudication runs once per sealed unit`,
      {
        file: unitDir,
        hint:
          `the stored adjudication stands: \`imep campaign verify ${unitDir}\` checks its bytes` +
          (snap.state === 'adjudicated'
            ? `, \`imep campaign cross-check ${unitDir}\` recomputes its numbers independently`
            : '') +
          '; it is never adjudicated again',
      },
    );
  }
  assertAllowed(snap.header.id, snap.state, 'adjudicate', unitDir);
  const unit = await assertUnitVerified(unitDir);
  const operator = opts.operator ?? currentOperator();
  // The run record is sealed: read once against the seal's entry and parsed from those bytes.
  const ranBy = runOperators(
    await readVerifiedRecord(unitDir, UNIT_FILES.runRecord, sealedSha256(unit, UNIT_FILES.runRecord), RunRecordSchema),
  );
  const override = checkAdjudicator(snap.header.id, operator, ranBy, opts.allowSameOperator);
  const inputs = await loadSealedInputs(unitDir, unit);
  const { amendments } = await readVerifiedAmendments(unit);
  const adjudication = computeAdjudication(inputs, { operator, ranBy, override, amendments });
  const text = renderAdjudication(adjudication);
  const { adjudications } = await listAdjudicationRecords(unitDir);
  const file = `${UNIT_FILES.adjudicationDir}/${recordNumber(adjudications.length + 1)}/${ADJUDICATION_FILE}`;
  const record = await storeAdjudicate(unitDir, {
    adjudicator: { ...ADJUDICATOR, artifact: ADJUDICATION_FILE },
    result: summary(adjudication, file, text),
    artifacts: { [ADJUDICATION_FILE]: text },
    operator,
    ...(opts.allowSameOperator ? { overrideSameOperator: opts.allowSameOperator } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  return { adjudication, text, record, file, regenerated: false, protocol: inputs.protocol };
}

function firstDifference(a: string, b: string): { line: number; stored: string; regenerated: string } {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return { line: i + 1, stored: x[i] ?? '(end of file)', regenerated: y[i] ?? '(end of file)' };
  }
  return { line: 0, stored: '', regenerated: '' };
}

/** Read-only regeneration of the current adjudication; throws E_INTERNAL unless the bytes are identical. */
export async function reproduceAdjudication(unitDir: string): Promise<AdjudicateUnitResult> {
  const snap = await readUnitState(unitDir);
  if (snap.state !== 'adjudicated' && snap.state !== 'cross-checked' && snap.state !== 'closed') {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snap.header.id} is '${snap.state}'; there is no adjudication to regenerate`,
      {
        file: unitDir,
        hint: `run \`imep campaign adjudicate ${unitDir}\` first`,
      },
    );
  }
  const unit = await assertUnitVerified(unitDir);
  const { record, file, path, text: stored } = await readAdjudicationArtifact(unitDir, unit);
  const storedHeader = readAdjudicationHeader(stored, path);
  const listed = storedHeader.listedAmendments;
  const { amendments } = await readVerifiedAmendments(unit);
  const inputs = await loadSealedInputs(unitDir, unit);
  const adjudication = computeAdjudication(inputs, {
    operator: record.operator,
    ranBy: record.ranBy,
    override: record.sameOperatorOverride,
    amendments: amendments.slice(0, listed),
  });
  const text = renderAdjudication(adjudication);
  const storedBy = storedHeader.adjudicator;
  if (text !== stored && storedBy !== undefined && storedBy.version !== ADJUDICATOR.version) {
    throw new ImepError(
      'E_USAGE',
      `the stored adjudication was written by ${storedBy.name} v${storedBy.version}; this IMEP's adjudicator is v${ADJUDICATOR.version}, whose rules differ, so it cannot regenerate it byte for byte`,
      {
        file: path,
        field: 'adjudicator.version',
        hint: `regenerate it with the IMEP that wrote it (the unit's precommit names its code identity), or adjudicate the sealed unit again with this one (\`imep campaign adjudicate\`, a new numbered adjudication beside the stored one)`,
      },
    );
  }
  if (text !== stored) {
    const d = firstDifference(stored, text);
    throw new ImepError(
      'E_INTERNAL',
      `the regenerated adjudication differs from the stored one at line ${d.line}: stored ${d.stored.trim()} — regenerated ${d.regenerated.trim()}`,
      {
        file: path,
        field: `line ${d.line}`,
        hint: `the adjudicator (${ADJUDICATOR.name} v${ADJUDICATOR.version}) no longer reproduces this unit; do not replace the stored adjudication — report the difference`,
      },
    );
  }
  return { adjudication, text, record, file, regenerated: true, protocol: inputs.protocol };
}
