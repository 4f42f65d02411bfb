import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ImepError, sha256Hex, toJsonValue } from '../../core/index.js';
import { fsyncDir, ioError, withOwnerWrite, writeFileAtomic, type Bytes } from '../io/atomic-write.js';
import { readRunRecord } from './formal-run.js';
import { buildManifest } from '../manifest.js';
import { checkAdjudicator, currentOperator, type SameOperatorOverride } from '../operator.js';
import {
  AdjudicationRecordSchema,
  CrossCheckRecordSchema,
  type AdjudicationRecord,
  type CrossCheckOutcome,
  type CrossCheckRecord,
} from '../records/post-seal-records.js';
import { readRequiredRecord, withSelfHash, writeRecord } from '../io/record-file.js';
import { runOperators } from '../records/run-record.js';
import { readSeal } from './seal.js';
import { adjudicationVerdicts, writeStageAttestations } from '../attestation/index.js';
import { recordNumber, UNIT_FILES, unitPaths, type Operator } from '../unit-layout.js';
import { listAdjudicationRecords, requireAction } from '../unit-state.js';
import { assertUnitIntact } from '../verify/verify.js';
import { prepareSigner, signingEnabled, signRecord, keyCreatedInThisProcess } from '../../signing/index.js';

/**
 * Adjudication and cross-check: post-seal records in adjudication/.
 *
 * Both verify the sealed unit first (E_UNIT_TAMPERED naming the first bad file). Adjudication must
 * come from an operator who did not run the conditions (operator.ts); an override is allowed only
 * with a reason, and is written into the record. A re-adjudication of the same sealed data (state
 * 'adjudicated') writes the next numbered record, superseding — never replacing — the earlier one.
 * Artifacts are staged in a temp folder, renamed to adjudication/NNN/, then the record is written
 * (the commit point); an artifact folder left without its record by a crash is removed by the next
 * adjudication (it was never part of the evidence).
 */

const ARTIFACT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface AdjudicateInput {
  /** Identity of the frozen adjudicator (name, version, source hash…). */
  readonly adjudicator: unknown;
  /** Its output: verdicts, gates, estimands. */
  readonly result: unknown;
  /** Extra files (report, tables) stored in adjudication/NNN/<name>. */
  readonly artifacts?: Readonly<Record<string, Bytes>>;
  readonly operator?: Operator;
  /** Allows adjudication by an operator who ran the conditions; the reason is recorded. */
  readonly overrideSameOperator?: SameOperatorOverride;
  readonly now?: () => Date;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export async function adjudicate(dir: string, input: AdjudicateInput): Promise<AdjudicationRecord> {
  const snap = await requireAction(dir, 'adjudicate');
  await assertUnitIntact(dir);
  const seal = await readSeal(dir);
  const paths = unitPaths(dir);
  const operator = input.operator ?? currentOperator();
  const ranBy = runOperators(await readRunRecord(dir));
  const override = checkAdjudicator(snap.header.id, operator, ranBy, input.overrideSameOperator);
  await prepareSigner(operator.id);
  // an identity whose key this very command created has no history to check it against: the record says so
  const keyCreated = signingEnabled() && keyCreatedInThisProcess(operator.id);
  const adjudicator = toJsonValue(input.adjudicator ?? null);
  const result = toJsonValue(input.result ?? null);
  const names = Object.keys(input.artifacts ?? {}).sort();
  for (const n of names)
    if (!ARTIFACT_NAME_RE.test(n)) throw new ImepError('E_USAGE', `bad artifact name '${n}'`, { field: 'artifacts' });

  const { adjudications } = await listAdjudicationRecords(dir);
  const number = adjudications.length + 1;
  const nnn = recordNumber(number);
  const adjDir = paths.adjudicationDir;
  return withOwnerWrite([adjDir], async () => {
    const artifactDir = join(adjDir, nnn);
    if (await exists(artifactDir)) await rm(artifactDir, { recursive: true, force: true });
    let artifacts: AdjudicationRecord['artifacts'] = [];
    if (names.length > 0) {
      const staging = join(adjDir, `.${nnn}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
      try {
        await mkdir(staging);
        for (const n of names) await writeFileAtomic(join(staging, n), input.artifacts![n]!);
        await rename(staging, artifactDir);
      } catch (e) {
        await rm(staging, { recursive: true, force: true }).catch(() => undefined);
        throw e instanceof ImepError ? e : ioError(artifactDir, 'store the adjudication artifacts', e);
      }
      await fsyncDir(adjDir);
      artifacts = await buildManifest(
        dir,
        names.map((n) => `${UNIT_FILES.adjudicationDir}/${nnn}/${n}`),
      );
    }
    const sealSha256 = sha256Hex(await readFile(paths.seal));
    const supersedes = adjudications.at(-1) ?? null;
    const prev =
      supersedes === null
        ? { file: UNIT_FILES.seal, sha256: sealSha256 }
        : {
            file: `${UNIT_FILES.adjudicationDir}/${supersedes}`,
            sha256: sha256Hex(await readFile(join(adjDir, supersedes))),
          };
    const record: AdjudicationRecord = withSelfHash(
      await signRecord(
        {
          kind: 'imep.adjudication' as const,
          version: 1 as const,
          unitId: snap.header.id,
          number,
          at: (input.now ?? (() => new Date()))().toISOString(),
          operator,
          ...(keyCreated ? { operatorKeyCreated: true as const } : {}),
          ranBy,
          sameOperatorOverride: override,
          sealRoot: seal.merkle.root,
          sealSha256,
          supersedes,
          adjudicator,
          result,
          artifacts,
        },
        { signer: operator.id, prev },
      ),
    );
    await writeRecord(join(adjDir, `adjudication-${nnn}.json`), AdjudicationRecordSchema.parse(record));
    return record;
  }).then(async (record) => {
    await writeStageAttestations(dir, {
      manifest: `${UNIT_FILES.adjudicationDir}/adjudication-${nnn}.json`,
      operatorId: operator.id,
      predicate: {
        unitId: snap.header.id,
        stage: 'adjudicated',
        protocolHash: seal.protocolHash,
        merkle: seal.merkle,
        sealRoot: seal.merkle.root,
        verdicts: await adjudicationVerdicts(dir, record),
      },
    });
    return record;
  });
}

/** The adjudication records, oldest first (the last one is current). */
export async function readAdjudications(dir: string): Promise<AdjudicationRecord[]> {
  const { adjudications } = await listAdjudicationRecords(dir);
  const adjDir = unitPaths(dir).adjudicationDir;
  return Promise.all(
    adjudications.map((n) =>
      readRequiredRecord(join(adjDir, n), AdjudicationRecordSchema, 'adjudication record vanished'),
    ),
  );
}

export async function readCrossChecks(dir: string): Promise<CrossCheckRecord[]> {
  const { crossChecks } = await listAdjudicationRecords(dir);
  const adjDir = unitPaths(dir).adjudicationDir;
  return Promise.all(
    crossChecks.map((n) => readRequiredRecord(join(adjDir, n), CrossCheckRecordSchema, 'cross-check record vanished')),
  );
}

export interface CrossCheckInput {
  readonly outcome: CrossCheckOutcome;
  /** How it was checked (e.g. "adjudicator rerun on a second machine from verified sealed inputs"), or why not. */
  readonly method: string;
  readonly detail?: unknown;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

/** adjudicated → cross-checked: records a recompute of the current adjudication (or that none was done, and why). */
export async function crossCheck(dir: string, input: CrossCheckInput): Promise<CrossCheckRecord> {
  const snap = await requireAction(dir, 'cross-check');
  if (input.method.trim() === '')
    throw new ImepError('E_USAGE', 'a cross-check must say how it was done (or why it was not)', { field: 'method' });
  await assertUnitIntact(dir);
  const { adjudications, crossChecks } = await listAdjudicationRecords(dir);
  const judged = adjudications.at(-1)!;
  const adjDir = unitPaths(dir).adjudicationDir;
  const nnn = recordNumber(crossChecks.length + 1);
  const operator = input.operator ?? currentOperator();
  await prepareSigner(operator.id);
  const adjudicationSha256 = sha256Hex(await readFile(join(adjDir, judged)));
  // Signed like an adjudication: by the cross-checker's key, chained to the adjudication record it checks.
  const record: CrossCheckRecord = withSelfHash(
    await signRecord(
      {
        kind: 'imep.cross-check' as const,
        version: 1 as const,
        unitId: snap.header.id,
        number: crossChecks.length + 1,
        at: (input.now ?? (() => new Date()))().toISOString(),
        operator,
        adjudicationFile: judged,
        adjudicationSha256,
        outcome: input.outcome,
        method: input.method.trim(),
        detail: toJsonValue(input.detail ?? null),
      },
      { signer: operator.id, prev: { file: `${UNIT_FILES.adjudicationDir}/${judged}`, sha256: adjudicationSha256 } },
    ),
  );
  await withOwnerWrite([adjDir], () =>
    writeRecord(join(adjDir, `cross-check-${nnn}.json`), CrossCheckRecordSchema.parse(record)),
  );
  return record;
}
