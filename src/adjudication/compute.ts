/**
 * The adjudication as a pure function of the sealed inputs (frozen protocol + sealed rows + the unit's
 * spec), the adjudicating operator and the amendments it lists. Order: gates (competence first: it
 * decides the excluded cells) → condition summaries → estimands → Holm families → go/no-go → verdicts →
 * questions. The output holds no clock: the same inputs give the same bytes (`renderAdjudication`).
 */
import { canonicalPrettyJson } from '../core/index.js';
import type { Amendment, OverrideRecord, Operator } from '../evidence/index.js';
import { conditionSummaries } from './conditions.js';
import { computeEstimands } from './estimands.js';
import { evaluateGates } from './gates.js';
import { goNoGo } from './go-no-go.js';
import { holmFamilyResults } from './holm-families.js';
import { RowIndex } from './joint-cohort.js';
import { questions } from './questions.js';
import { registeredAttempts, type SealedInputs } from './sealed-inputs.js';
import { ADJUDICATION_KIND, ADJUDICATION_VERSION, ADJUDICATOR, type Adjudication } from './types.js';
import { verdicts } from './verdicts.js';

export interface AdjudicationParty {
  readonly operator: Operator;
  readonly ranBy: readonly string[];
  readonly override: OverrideRecord | null;
  readonly amendments: readonly Amendment[];
}

export function computeAdjudication(inputs: SealedInputs, party: AdjudicationParty): Adjudication {
  const { protocol } = inputs;
  const index = new RowIndex(protocol, inputs.rows);
  const { results: gates, excludedTasks } = evaluateGates(protocol, index);
  const conditions = conditionSummaries(protocol, index, excludedTasks);
  const estimands = computeEstimands({ protocol, index, excludedTasks });
  const holm = holmFamilyResults(protocol, estimands, gates);
  const gng = goNoGo(protocol, gates, estimands, conditions);
  const vs = verdicts({ protocol, estimands, gates, holm, goNoGo: gng, tasks: index.tasks });
  return {
    kind: ADJUDICATION_KIND,
    version: ADJUDICATION_VERSION,
    adjudicator: { ...ADJUDICATOR },
    unit: { id: inputs.unitId, sealRoot: inputs.sealRoot, sealSha256: inputs.sealSha256 },
    provenance: {
      protocolId: protocol.id,
      protocolHash: inputs.protocolHash,
      planHash: inputs.planHash,
      precommitSha256: inputs.precommitSha256,
      rowsSha256: inputs.rowsSha256,
      rowCount: inputs.rows.length,
      code: inputs.code,
      checkpointHashes: inputs.checkpointHashes,
      packageVersions: inputs.packageVersions,
      nodeVersion: inputs.nodeVersion,
      prng: inputs.prng,
    },
    operator: party.operator,
    ranBy: [...party.ranBy],
    sameOperatorOverride: party.override,
    design: {
      registeredAttempts: registeredAttempts(protocol),
      tasks: [...index.tasks],
      excludedTasks: [...excludedTasks].sort(),
      waves: protocol.waves.map((w) => ({ id: w.id, anchor: w.anchor, conditions: [...w.conditions] })),
    },
    conditions,
    gates,
    estimands,
    holm,
    goNoGo: gng,
    verdicts: vs,
    questions: questions(vs, estimands, conditions, gates),
    amendments: {
      log: party.amendments.map((a) => ({
        id: a.id,
        at: a.at,
        classification: a.classification,
        stateAtAmendment: a.stateAtAmendment,
        affects: [...a.affects],
        text: a.text,
      })),
      protocol: protocol.amendments.map((a) => ({ id: a.id, date: a.date, stage: a.stage, summary: a.summary })),
    },
  };
}

/** The stored bytes: canonical pretty JSON (sorted keys, two-space indent, one trailing newline). */
export function renderAdjudication(a: Adjudication): string {
  return canonicalPrettyJson(a);
}
