/**
 * Which numbers the gates withhold. Rule (i) of the frozen protocols: a cell failing competence is
 * excluded; a contrast whose path or wiring failed is invalid and its number is withheld. A hard gate
 * with onFail 'invalid' that failed invalidates every estimand that reads one of the conditions the
 * failure is attributed to; an unavailable condition (failed conformance within its repair budget)
 * invalidates its estimands too. Competence ('exclude') failures remove their tasks from every cohort;
 * when no task is left, everything is excluded. Hard 'descriptive' failures downgrade the campaign.
 */
import type { EstimandResult, GateResult } from './types.js';

function conditionsOf(e: EstimandResult): string[] {
  return Object.values(e.conditions).filter((c): c is string => typeof c === 'string');
}

/** Failed hard 'invalid' gates (and unavailable conditions) that withhold this estimand's number. */
export function invalidBecause(e: EstimandResult, gates: readonly GateResult[]): string[] {
  const conds = conditionsOf(e);
  const out: string[] = [];
  for (const g of gates) {
    if (!g.hard || g.onFail !== 'invalid' || g.passed) continue;
    if (g.failing.some((c) => conds.includes(c))) out.push(`gate ${g.gate}`);
  }
  if (e.status === 'unavailable') {
    if (e.unavailable.length > 0) out.push(...e.unavailable.map((c) => `condition ${c} unavailable`));
    else out.push(e.reason);
  }
  return out;
}

/** Failed hard competence gates with onFail 'exclude' (their tasks leave the analysis). */
export function exclusionGates(gates: readonly GateResult[]): GateResult[] {
  return gates.filter((g) => g.kind === 'competence' && g.hard && g.onFail === 'exclude' && !g.passed);
}

/** True when every task of the design was excluded by competence. */
export function everythingExcluded(gates: readonly GateResult[], tasks: readonly string[]): boolean {
  const excluded = new Set(exclusionGates(gates).flatMap((g) => g.failing));
  return tasks.length > 0 && tasks.every((t) => excluded.has(t));
}

/** Failed hard gates with onFail 'descriptive'. */
export function descriptiveGates(gates: readonly GateResult[]): string[] {
  return gates.filter((g) => g.hard && g.onFail === 'descriptive' && !g.passed).map((g) => g.gate);
}
