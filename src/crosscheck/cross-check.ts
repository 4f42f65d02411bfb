/**
 * `crossCheckUnit`: adjudicated → cross-checked. Every number of the adjudication is recomputed by an
 * INDEPENDENT code path that calls none of the producer's functions (no src/stats, no src/protocol, no
 * adjudication module other than this cross-check's own files):
 *   the adjudication document, the rows and the seal read through their record schemas (src/evidence/records: the
 *   contract, not the computation), the protocol as a plain JSON value (cross-check-model.ts); b, c, b′, c′, successes
 *   and every gate count by separate loops; McNemar by exact BigInt binomial sums; Clopper–Pearson by
 *   bisection on log-space binomial tails; Wilson by its closed form (z by bisection on a series Φ);
 *   Tango and Newcombe re-derived; the bootstrap re-run with the same named PRNG and seed through a
 *   separate resampling loop; Holm by its own step-down (cross-check-math.ts, cross-check-estimands.ts).
 * Both documents are flattened to `path → number` and compared: any count or number that differs by more
 * than 1e-9 (absolute, or relative for large values), any number the cross-check cannot recompute, any
 * registered interval missing, and any gate pass/fail that differs is a disagreement, named by its path.
 *
 * The outcome is recorded by the store as adjudication/cross-check-NNN.json (its `detail` holds this
 * result) — 'agrees', or 'disagrees' with every disagreement listed — and a disagreement then throws
 * E_INTERNAL naming the first number (closeout refuses a unit whose cross-check disagrees).
 */
import { ImepError, sha256Hex } from '../core/index.js';
import {
  crossCheck as storeCrossCheck,
  assertAllowed,
  UNIT_FILES,
  type Operator,
  readUnitState,
  readSealed,
  assertUnitVerified,
  readAdjudicationArtifact,
  adjudicationSchemaIssues,
  parseJsonText,
  parseRecordText,
  SealRecordSchema,
} from '../evidence/index.js';
import type { CrossCheckRecord } from '../evidence/index.js';
import { expectedDocument } from './cross-check-expect.js';
import { arr, obj, PlainStudy, readRowsPlain, str, type Json } from './cross-check-model.js';
import { flattenNumbers } from './flatten.js';

export const CROSS_CHECK_TOLERANCE = 1e-9;
export const CROSS_CHECK_METHOD =
  'independent recomputation from the verified sealed inputs (plain JSON reader; separate count loops; exact BigInt McNemar; ' +
  'Clopper–Pearson by bisection on log-space binomial tails; closed-form Wilson; bootstrap re-run with the same named PRNG and seed ' +
  'through a separate loop); tolerance 1e-9';

/** Registered constants echoed from the protocol (not computed): skipped when not recomputed. */
const CONSTANT_KEYS = new Set([
  'alpha',
  'alphaPerComponent',
  'level',
  'margin',
  'replicates',
  'seed',
  'version',
  'wave',
  'id',
  'repairBudget',
]);

export interface Disagreement {
  readonly path: string;
  readonly adjudication: number | string | null;
  readonly recomputed: number | string | null;
  readonly note: string;
}

export interface CrossCheckResult {
  readonly kind: 'imep.cross-check-result';
  readonly version: 1;
  readonly adjudicationFile: string;
  readonly adjudicationSha256: string;
  readonly tolerance: number;
  /** Numbers compared against an independent recomputation. */
  readonly compared: number;
  /** Registered constants (α, margins, levels, seeds…) echoed by the adjudication. */
  readonly constants: number;
  /** The largest absolute difference among the numbers that agree (how close the two paths came). */
  readonly maxAbsDifference: number;
  readonly disagreements: readonly Disagreement[];
}

function isConstant(path: string): boolean {
  const segments = path.split('.');
  if (segments.includes('expected')) return true;
  const last = (segments.at(-1) ?? '').replace(/\[.*$/, '');
  return CONSTANT_KEYS.has(last);
}

function close(a: number, b: number): boolean {
  if (a === b) return true;
  const diff = Math.abs(a - b);
  return diff <= CROSS_CHECK_TOLERANCE || diff <= CROSS_CHECK_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
}

export interface CrossCheckSources {
  readonly protocolText: string;
  readonly rowsText: string;
  readonly sealText: string;
}

/** Pure: compares an adjudication's text with the independent recomputation from the sealed sources. */
export function crossCheckAdjudication(
  sources: CrossCheckSources,
  adjudicationText: string,
  adjudicationFile = 'adjudication.json',
): CrossCheckResult {
  // The adjudication is read through its schema: every departure from it is a disagreement named by its field, and
  // the recomputation below still walks the same JSON value with its own plain accessors (so a forged number in an
  // unknown field is also reported as not recomputed).
  const adjudicationJson = parseJsonText(adjudicationText, adjudicationFile);
  const schemaIssues = adjudicationSchemaIssues(adjudicationJson);
  const adjudication = obj(adjudicationJson);
  const protocol = obj(parseJsonText(sources.protocolText, UNIT_FILES.protocol));
  const study = new PlainStudy(protocol, readRowsPlain(sources.rowsText));
  const expected = expectedDocument(study, adjudication);
  const got = flattenNumbers(adjudication);
  const want = flattenNumbers(expected.doc);
  const out: Disagreement[] = expected.problems.map((p) => ({
    path: p.path,
    adjudication: null,
    recomputed: null,
    note: p.note,
  }));
  for (const issue of schemaIssues)
    out.push({
      path: issue.path,
      adjudication: null,
      recomputed: null,
      note: `does not match the adjudication document schema: ${issue.message}`,
    });
  let compared = 0;
  let constants = 0;
  let maxAbsDifference = 0;
  for (const [path, value] of got) {
    if (want.has(path)) {
      const w = want.get(path) as number | null;
      compared++;
      if (value === null && w === null) continue;
      if (value === null || w === null || !close(value, w))
        out.push({ path, adjudication: value, recomputed: w, note: 'differs' });
      else maxAbsDifference = Math.max(maxAbsDifference, Math.abs(value - w));
    } else if (value !== null) {
      if (isConstant(path)) constants++;
      else out.push({ path, adjudication: value, recomputed: null, note: 'not recomputed by the cross-check' });
    }
  }
  for (const [path, w] of want)
    if (!got.has(path) && w !== null)
      out.push({ path, adjudication: null, recomputed: w, note: 'missing from the adjudication' });
  for (const g of arr(adjudication['gates']).map(obj)) {
    const id = str(g['gate']);
    const mine = expected.passed.get(id);
    if (mine !== undefined && mine !== g['passed'])
      out.push({
        path: `gates[${id}].passed`,
        adjudication: String(g['passed']),
        recomputed: String(mine),
        note: 'gate decision differs',
      });
  }
  const prov = obj(adjudication['provenance']);
  // the seal's part the comparison uses (its Merkle root), read through the seal record's schema
  const seal = parseRecordText(SealRecordSchema.pick({ merkle: true }), sources.sealText, UNIT_FILES.seal);
  const strings: [string, Json | undefined, string][] = [
    ['provenance.rowsSha256', prov['rowsSha256'], sha256Hex(sources.rowsText)],
    ['provenance.protocolHash', prov['protocolHash'], sha256Hex(sources.protocolText)],
    ['unit.sealRoot', obj(adjudication['unit'])['sealRoot'], seal.merkle.root],
    ['unit.sealSha256', obj(adjudication['unit'])['sealSha256'], sha256Hex(sources.sealText)],
  ];
  for (const [path, have, want2] of strings)
    if (have !== want2) out.push({ path, adjudication: str(have), recomputed: want2, note: 'differs' });
  return {
    kind: 'imep.cross-check-result',
    version: 1,
    adjudicationFile,
    adjudicationSha256: sha256Hex(adjudicationText),
    tolerance: CROSS_CHECK_TOLERANCE,
    compared,
    constants,
    maxAbsDifference,
    disagreements: out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
  };
}

export interface CrossCheckUnitOptions {
  readonly operator?: Operator;
  readonly now?: () => Date;
}

export interface CrossCheckUnitResult {
  readonly outcome: 'agrees' | 'disagrees';
  readonly result: CrossCheckResult;
  readonly record: CrossCheckRecord;
}

function describe(d: Disagreement): string {
  return `${d.path}: adjudication ${d.adjudication ?? '—'}, recomputed ${d.recomputed ?? '—'} (${d.note})`;
}

export async function crossCheckUnit(unitDir: string, opts: CrossCheckUnitOptions = {}): Promise<CrossCheckUnitResult> {
  const snap = await readUnitState(unitDir);
  assertAllowed(snap.header.id, snap.state, 'cross-check', unitDir);
  // Each input is read once and checked against the verified entry (the seal's, the record's) before use.
  const unit = await assertUnitVerified(unitDir);
  const { file, path, text } = await readAdjudicationArtifact(unitDir, unit);
  const sources: CrossCheckSources = {
    protocolText: (await readSealed(unit, UNIT_FILES.protocol)).toString('utf8'),
    rowsText: (await readSealed(unit, UNIT_FILES.rows)).toString('utf8'),
    sealText: unit.sealBytes.toString('utf8'),
  };
  const result = crossCheckAdjudication(sources, text, file);
  const outcome = result.disagreements.length === 0 ? 'agrees' : 'disagrees';
  const record = await storeCrossCheck(unitDir, {
    outcome,
    method: CROSS_CHECK_METHOD,
    detail: result,
    ...(opts.operator ? { operator: opts.operator } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  if (outcome === 'disagrees') {
    const first = result.disagreements[0]!;
    const more = result.disagreements.length > 1 ? ` (+${result.disagreements.length - 1} more)` : '';
    throw new ImepError('E_INTERNAL', `the cross-check disagrees with the adjudication: ${describe(first)}${more}`, {
      file: path,
      field: first.path,
      hint: 'the disagreement is recorded in adjudication/cross-check-NNN.json; the unit cannot be closed out',
    });
  }
  return { outcome, result, record };
}
