/**
 * From a protocol condition (parsed by its kind's fields) to what the runner installs: the ConditionSpec rows record,
 * the registered point's label, the seed of its draws. Asks the registered kind; never switches on its name.
 */
import type { ConditionView } from '../core/index.js';
import { conditionKinds, type ConditionKind, type ConditionSpec } from './condition-kind.js';

/** The registered kind of a condition; an unknown kind is E_PROTOCOL_INVALID at conditions[].kind. */
export function conditionKindOf(c: ConditionView): ConditionKind {
  return conditionKinds.require(c.kind, { field: `conditions.${c.id}.kind` });
}

/** The intervention spec a runner installs for this condition. */
export function toConditionSpec(c: ConditionView): ConditionSpec {
  return conditionKindOf(c).spec(c);
}

/** The registered point's label for the intervention context, e.g. "attempt-2/before-first-query". */
export function pointLabel(c: ConditionView): string {
  const at = c.installAt;
  return at ? `attempt-${at.attempt}/before-${at.before}` : 'every-read';
}

/** The seed a condition's random draws use (S_pi / T_mu per read, S / T donor choice), if any. */
export function conditionSeed(c: ConditionView): number | string | undefined {
  return c.seed;
}
