/**
 * From a protocol condition to the interventions' ConditionSpec (src/interventions/condition.ts), and
 * the compile-time link between the two closed unions: adding or removing a kind on either side
 * fails to compile here until the other follows.
 */
import type { ConditionKind, ConditionSpec } from '../interventions/index.js';
import type { ProtocolCondition, ProtocolConditionKind } from './schema-conditions.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const KINDS_MATCH: Same<ProtocolConditionKind, ConditionKind> = true;
void KINDS_MATCH;

/** The intervention spec a runner installs for this condition. */
export function toConditionSpec(c: ProtocolCondition): ConditionSpec {
  switch (c.kind) {
    case 'A':
    case 'O':
    case 'C':
      return { kind: c.kind };
    case 'S_pi':
    case 'T_mu':
      // the version only when registered, so protocols without one keep their recorded spec
      return c.version === undefined ? { kind: c.kind } : { kind: c.kind, version: c.version };
    case 'N':
      return { kind: 'N', variant: c.variant };
    case 'U':
      return { kind: 'U', direction: c.direction, installation: c.installation };
    case 'S':
    case 'T':
      // the installation only when it is read: install-time swaps keep their recorded spec
      return c.installation === 'read'
        ? { kind: c.kind, seed: c.seed, installation: 'read' }
        : { kind: c.kind, seed: c.seed };
  }
}

/** The registered point's label for the intervention context, e.g. "attempt-2/before-first-query". */
export function pointLabel(c: ProtocolCondition): string {
  const at = 'installAt' in c ? c.installAt : undefined;
  return at ? `attempt-${at.attempt}/before-${at.before}` : 'every-read';
}

/** The seed a condition's random draws use (S_pi / T_mu per read, S / T donor choice), if any. */
export function conditionSeed(c: ProtocolCondition): number | string | undefined {
  return 'seed' in c ? c.seed : undefined;
}
