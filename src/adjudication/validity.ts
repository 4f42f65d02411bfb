/**
 * Which numbers the gates withhold. Rule (i) of the frozen protocols: a cell failing competence is
 * excluded; a contrast whose path or wiring failed is invalid and its number is withheld. A hard gate
 * with onFail 'invalid' that failed invalidates every estimand that reads one of the conditions the
 * failure is attributed to; an unavailable condition (failed conformance within its repair budget)
 * invalidates its estimands too. Competence ('exclude') failures remove their tasks from every cohort;
 * when no task is left, everything is excluded. Hard 'descriptive' failures downgrade the campaign. The validity
 * checks (informative-removal, blocked-reads) withhold with their reason in words, or — registered to qualify —
 * leave the number and add their words to the verdict (qualificationsOf).
 */
import type { EstimandResult, GateResult } from './types.js';

const VALIDITY_KINDS: ReadonlySet<string> = new Set(['informative-removal', 'blocked-reads']);

function conditionsOf(e: EstimandResult): string[] {
  return Object.values(e.conditions).filter((c): c is string => typeof c === 'string');
}

/** Whether a failed gate concerns the estimand: informative-removal names estimands, every other gate conditions. */
function touches(g: GateResult, e: EstimandResult, conds: readonly string[]): boolean {
  return g.kind === 'informative-removal' ? g.failing.includes(e.id) : g.failing.some((c) => conds.includes(c));
}

/** Failed hard 'invalid' gates (and unavailable conditions) that withhold this estimand's number. */
export function invalidBecause(e: EstimandResult, gates: readonly GateResult[]): string[] {
  const conds = conditionsOf(e);
  const out: string[] = [];
  for (const g of gates) {
    if (!g.hard || g.onFail !== 'invalid' || g.passed) continue;
    if (!touches(g, e, conds)) continue;
    // the validity checks say why in words (their detail), the registered gates by name
    out.push(VALIDITY_KINDS.has(g.kind) ? `gate ${g.gate}: ${g.detail}` : `gate ${g.gate}`);
  }
  if (e.status === 'unavailable') {
    if (e.unavailable.length > 0) out.push(...e.unavailable.map((c) => `condition ${c} unavailable`));
    else out.push(e.reason);
  }
  return out;
}

/**
 * The words a verdict on this estimand carries from a validity check registered to qualify rather than withhold
 * (validity.informativeRemoval.onInformative / validity.blockedReads.onFail 'qualify': a failed 'warn' check).
 */
export function qualificationsOf(e: EstimandResult, gates: readonly GateResult[]): string[] {
  const conds = conditionsOf(e);
  return gates
    .filter((g) => VALIDITY_KINDS.has(g.kind) && g.onFail === 'warn' && !g.passed)
    .filter((g) => touches(g, e, conds))
    .map((g) => `${g.gate}: ${g.detail}`);
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
