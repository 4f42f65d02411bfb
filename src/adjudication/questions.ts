/**
 * Q1–Q4. The registered verdict of a question aggregates its primary criteria: all agree → that word;
 * any excluded / invalid / descriptive → that (in this order); otherwise the registered contrasts
 * disagree → unresolved. Beside it, the paper's RETROSPECTIVE readings (formulated after the campaigns,
 * so post hoc, never a registered verdict):
 *   Q2 information  the lower bound on G (exact decision bound, α = 0.05 per component) above 0
 *   Q3              the lower bound on ρ_X (Clopper–Pearson, one-sided 95%) above the exact-repeat floor,
 *                   the upper bound on ρ_C of a replicate condition C (not applicable without one)
 *   Q4              the lower bound on θ above 0 AND above the upper bound on ρ_U of the one-ULP condition in
 *                   θ's wave (not applicable without one). The floor is above 0, so the bound is the
 *                   unconditional exact one (CP(b′; n, 0.025) − CP(c′; n, 0.025), each end ≥ 95%): the
 *                   conditional bound has no unconditional coverage against a non-zero threshold.
 * "not detected" needs the upper bound below 0 (decide.ts), never below a floor raised by an upper bound.
 * Each is 'invalid' when a failed hard path/wiring gate touches its conditions.
 */
import { hasRole } from '../protocol/index.js';
import type { ConditionSummary, EstimandResult, GateResult, QuestionResult, RetrospectiveReading } from './types.js';
import type { Verdict } from './verdict-types.js';
import { invalidBecause } from './validity.js';
import { decideBound } from './decide.js';

/** The unconditional exact bound on θ at 0.025 per proportion (estimands.ts defaultRequests). */
export const Q4_INTERVAL = 'exact-cp-difference/a0.025';

const QUESTIONS = ['Q1', 'Q2', 'Q3', 'Q4'] as const;
const pp = (x: number): string => `${(100 * x).toFixed(2)} pp`;

function gateInvalid(gates: readonly GateResult[], conditions: readonly string[]): string[] {
  return gates
    .filter((g) => g.hard && g.onFail === 'invalid' && !g.passed && g.failing.some((c) => conditions.includes(c)))
    .map((g) => g.gate);
}

/** The claim "above the floor" (margin 0, raised to the floor): decide.ts's lower-bound-above. */
function word(lower: number, upper: number, floor: number): 'holds' | 'not detected' | 'unresolved' {
  return decideBound('lower-bound-above', { lower, upper, margin: 0, threshold: floor });
}

function q3(conditions: readonly ConditionSummary[], gates: readonly GateResult[]): RetrospectiveReading[] {
  const replicates = conditions.filter((c) => hasRole(c, 'replicate') && c.vsAnchor !== null);
  const floor = replicates.length === 0 ? null : Math.max(...replicates.map((c) => c.vsAnchor!.rhoCpOneSided95.upper));
  return conditions
    .filter((c) => c.vsAnchor !== null && !hasRole(c, 'replicate') && !hasRole(c, 'reference'))
    .map((c): RetrospectiveReading => {
      const id = `Q3:${c.id}`;
      const rule = 'LB(ρ_X) > UB(ρ_C), exact-repeat floor';
      if (floor === null)
        return {
          id,
          rule,
          verdict: 'not applicable',
          lower: null,
          floor: null,
          reason: 'no replicate condition: no exact-repeat floor',
        };
      const bad = gateInvalid(gates, [c.condition, ...replicates.map((r) => r.condition)]);
      if (bad.length > 0)
        return { id, rule, verdict: 'invalid', lower: null, floor: null, reason: `gate ${bad.join(', ')} failed` };
      const { lower, upper } = c.vsAnchor!.rhoCpOneSided95;
      return {
        id,
        rule,
        verdict: word(lower, upper, floor),
        lower,
        floor,
        reason: `LB ${pp(lower)}, UB ${pp(upper)} against the floor ${pp(floor)}`,
      };
    });
}

function q4(
  estimands: readonly EstimandResult[],
  conditions: readonly ConditionSummary[],
  gates: readonly GateResult[],
): RetrospectiveReading[] {
  return estimands
    .filter((e) => e.kind === 'theta')
    .map((e): RetrospectiveReading => {
      const id = `Q4:${e.id}`;
      const rule = 'LB(θ) > max(0, UB(ρ_U))';
      const wave = e.cohort.wave;
      const u = conditions.filter((c) => c.wave === wave && hasRole(c, 'numeric-control') && c.vsAnchor !== null);
      if (u.length === 0)
        return {
          id,
          rule,
          verdict: 'not applicable',
          lower: null,
          floor: null,
          reason: `no one-ULP condition in wave ${wave}`,
        };
      const bad = [
        ...invalidBecause(e, gates),
        ...gateInvalid(
          gates,
          u.map((c) => c.condition),
        ).map((g) => `gate ${g}`),
      ];
      if (bad.length > 0 || e.status !== 'available')
        return { id, rule, verdict: 'invalid', lower: null, floor: null, reason: bad.join('; ') };
      const iv = e.intervals.find((i) => i.id === Q4_INTERVAL);
      if (iv === undefined)
        return {
          id,
          rule,
          verdict: 'not applicable',
          lower: null,
          floor: null,
          reason: 'no unconditional exact bound on θ',
        };
      const floor = Math.max(0, ...u.map((c) => c.vsAnchor!.rhoCpOneSided95.upper));
      const lower = iv.envelope?.lower ?? iv.lower;
      const upper = iv.envelope?.upper ?? iv.upper;
      return {
        id,
        rule,
        verdict: word(lower, upper, floor),
        lower,
        floor,
        reason: `LB ${pp(lower)}, UB ${pp(upper)} against max(0, UB ρ_U) = ${pp(floor)}`,
      };
    });
}

function q2(estimands: readonly EstimandResult[], gates: readonly GateResult[]): RetrospectiveReading[] {
  return estimands
    .filter((e) => e.kind === 'G')
    .map((e): RetrospectiveReading => {
      const id = `Q2:${e.id}`;
      const rule = 'LB(G) > 0 (history required)';
      const bad = invalidBecause(e, gates);
      if (bad.length > 0 || e.status !== 'available')
        return { id, rule, verdict: 'invalid', lower: null, floor: null, reason: bad.join('; ') };
      const iv = e.intervals.find((i) => i.id === 'exact-cp-difference/a0.05')!;
      const lower = iv.envelope?.lower ?? iv.lower;
      const upper = iv.envelope?.upper ?? iv.upper;
      return {
        id,
        rule,
        verdict: word(lower, upper, 0),
        lower,
        floor: 0,
        reason: `G bound [${pp(lower)}, ${pp(upper)}]`,
      };
    });
}

function aggregate(list: readonly Verdict[]): { verdict: QuestionResult['verdict']; reason: string } {
  if (list.length === 0)
    return { verdict: 'not registered', reason: 'no primary criterion registered for this question' };
  for (const w of ['excluded', 'invalid', 'descriptive'] as const) {
    const hit = list.filter((v) => v.verdict === w);
    if (hit.length > 0) return { verdict: w, reason: `${hit.map((v) => v.criterion).join(', ')}: ${w}` };
  }
  const words = [...new Set(list.map((v) => v.verdict))];
  if (words.length === 1)
    return { verdict: words[0] as QuestionResult['verdict'], reason: `every registered criterion reads ${words[0]}` };
  return {
    verdict: 'unresolved',
    reason: `registered contrasts disagree: ${list.map((v) => `${v.criterion} ${v.verdict}`).join(', ')}`,
  };
}

export function questions(
  verdicts: readonly Verdict[],
  estimands: readonly EstimandResult[],
  conditions: readonly ConditionSummary[],
  gates: readonly GateResult[],
): QuestionResult[] {
  return QUESTIONS.map((q) => {
    const primary = verdicts.filter((v) => v.question === q && v.role === 'primary');
    const { verdict, reason } = aggregate(primary);
    const retrospective =
      q === 'Q2'
        ? q2(estimands, gates)
        : q === 'Q3'
          ? q3(conditions, gates)
          : q === 'Q4'
            ? q4(estimands, conditions, gates)
            : [];
    return {
      question: q,
      registered: primary.map((v) => ({ criterion: v.criterion, verdict: v.verdict })),
      verdict,
      reason,
      retrospective,
    };
  });
}
