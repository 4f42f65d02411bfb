/**
 * The cross-check's expected document: every number of an adjudication, recomputed independently and
 * laid out in the adjudication's own shape (so both flatten to the same paths), plus the gate pass/fail
 * decisions. Structural choices of the producer that are not numbers — which intervals it lists beyond
 * the registered ones, which Holm slots it marks unavailable or invalid, which retrospective readings it
 * withholds — are read from the adjudication; every number under them is recomputed here. Each section has
 * its own file:
 *   conditions  cross-check-conditions.ts        gates      cross-check-gates.ts, cross-check-read-gates.ts,
 *   estimands   cross-check-estimand-set.ts                 cross-check-validity.ts
 *   holm        cross-check-holm.ts              goNoGo     cross-check-go-no-go.ts
 *   verdicts    cross-check-verdict-bounds.ts    questions  cross-check-questions.ts
 */
import type { Obj, PlainStudy } from './cross-check-model.js';
import { competenceFailures, expectedGates } from './cross-check-gates.js';
import { expectedConditions } from './cross-check-conditions.js';
import { blockedReadsX, informativeRemovalX } from './cross-check-validity.js';
import { estimandsSection, recomputeEstimands } from './cross-check-estimand-set.js';
import { adjustedP, expectedHolm } from './cross-check-holm.js';
import { expectedGoNoGo } from './cross-check-go-no-go.js';
import { checkWithheld, expectedVerdicts } from './cross-check-verdict-bounds.js';
import { expectedQuestions } from './cross-check-questions.js';
import type { ExpectCtx, Problem } from './cross-check-context.js';

export interface Expected {
  readonly doc: Obj;
  readonly passed: Map<string, boolean>;
  readonly problems: Problem[];
}

export function expectedDocument(study: PlainStudy, adjudication: Obj): Expected {
  const problems: Problem[] = [];
  const excluded = competenceFailures(study);
  const removal = informativeRemovalX(study, excluded);
  const blocked = blockedReadsX(study, excluded);
  const validity = blocked === null ? [removal] : [removal, blocked];
  const gates = [...expectedGates(study, excluded), ...validity];
  const conditions = expectedConditions(study, excluded);
  const xs = recomputeEstimands(study, adjudication, excluded, problems);
  const ctx: ExpectCtx = { study, adjudication, xs, problems };
  // the sections that add problems run in this order: estimands, holm, withheld words, verdicts
  const holm = expectedHolm(ctx);
  const rules = expectedGoNoGo(study.protocol, { gates, conditions, xs });
  checkWithheld(ctx, validity);
  const verdicts = expectedVerdicts(ctx, (estimand) => adjustedP(holm, estimand));
  const doc = {
    provenance: { rowCount: study.rows.length },
    design: { registeredAttempts: study.registered },
    conditions,
    gates: gates.map((g) => ({ gate: g.gate, observed: g.observed })),
    estimands: estimandsSection(xs),
    holm,
    goNoGo: { rules },
    verdicts,
    questions: expectedQuestions(ctx, conditions),
  } as unknown as Obj;
  return { doc, passed: new Map(gates.map((g) => [g.gate, g.passed])), problems };
}
