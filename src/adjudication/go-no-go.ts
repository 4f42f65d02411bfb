/**
 * Go/no-go rules: when one fails the campaign is downgraded to 'descriptive' (or 'aborted'): its numbers
 * are reported, but no verdict word is issued. Hard gates with onFail 'descriptive' downgrade it too.
 *   min-competent-cells      the competence gate passes in at least `min` tasks (cells)
 *   reference-success-floor  the condition's success rate (registered attempts, first wave running it) ≥ floor
 *   min-discordant           the estimand has at least `min` discordant pairs (b + c, or b′ + c′)
 */
import type { Protocol } from '../protocol/index.js';
import type { ConditionSummary, EstimandResult, GateResult, GoNoGoResult, GoNoGoRuleResult } from './types.js';
import { descriptiveGates } from './validity.js';

export function goNoGo(
  protocol: Protocol,
  gates: readonly GateResult[],
  estimands: readonly EstimandResult[],
  conditions: readonly ConditionSummary[],
): GoNoGoResult {
  const rules: GoNoGoRuleResult[] = protocol.goNoGo.map((r) => {
    switch (r.rule) {
      case 'min-competent-cells': {
        const g = gates.find((x) => x.gate === r.gate);
        const tasks = (g?.observed['tasks'] as { passed: boolean }[] | undefined) ?? [];
        const competent = tasks.filter((t) => t.passed).length;
        return {
          rule: r.rule,
          subject: r.gate,
          passed: competent >= r.min,
          observed: competent,
          expected: r.min,
          outcome: r.outcome,
          detail: `${competent} competent cell(s) under gate ${r.gate}; at least ${r.min} required`,
        };
      }
      case 'reference-success-floor': {
        const s = conditions.find((c) => c.condition === r.condition)?.success ?? null;
        const rate = s === null ? null : s.rate;
        return {
          rule: r.rule,
          subject: r.condition,
          passed: rate !== null && rate >= r.floor,
          observed: rate,
          expected: r.floor,
          outcome: r.outcome,
          detail:
            rate === null
              ? `${r.condition} has no resolved success`
              : `${r.condition} succeeds on ${s?.successes}/${s?.n}; floor ${r.floor}`,
        };
      }
      case 'min-discordant': {
        const e = estimands.find((x) => x.id === r.estimand);
        let m: number | null = null;
        if (e?.status === 'available') {
          const { b, c, bPrime, cPrime } = e.counts;
          m =
            b !== undefined && c !== undefined
              ? b + c
              : bPrime !== undefined && cPrime !== undefined
                ? bPrime + cPrime
                : null;
        }
        return {
          rule: r.rule,
          subject: r.estimand,
          passed: m !== null && m >= r.min,
          observed: m,
          expected: r.min,
          outcome: r.outcome,
          detail:
            m === null
              ? `${r.estimand} has no discordant count`
              : `${r.estimand} has ${m} discordant pairs; at least ${r.min} required`,
        };
      }
    }
  });
  const failed = rules.filter((r) => !r.passed);
  const gatesDown = descriptiveGates(gates);
  const status = failed.some((r) => r.outcome === 'abort')
    ? 'aborted'
    : failed.length > 0 || gatesDown.length > 0
      ? 'descriptive'
      : 'confirmatory';
  return { status, rules, descriptiveGates: gatesDown };
}
