/**
 * How the runner carries out one protocol condition — always through the one intervention factory
 * `interventionHook(spec, ctx)` (src/interventions/condition.ts):
 *
 *   A identity · C exact replicate (installs nothing) · N block: every read empty · N clear: the scope is
 *   cleared at the registered point, clock kept · U/S_π/T_μ at read: every read with history substituted
 *   (blackout ladders) · U install / S / T: installed once at the registered point (S/T: donor payloads,
 *   donor assigned from the registered seed) · S / T at read: from each episode's first decision query on,
 *   retrieved records written before it carry the donor episode's payload · O: oracle items.
 *
 * The trace mode says how the substitution trace classifies selected records ('per-read', 'read-swap', 'installed',
 * or 'none'), and `pointAttempt` is the attempt at whose start (before its first query) the point acts;
 * null for conditions that act at every read, whose "point" is the start of every episode.
 */
import { ImepError } from '../core/index.js';
import { conditionKindOf, conditionSeed, pointLabel, toConditionSpec } from '../interventions/index.js';
import type { ConditionSpec, SubstitutionMode } from '../interventions/index.js';
import type { ProtocolCondition } from '../protocol/index.js';

export interface ConditionPlan {
  readonly condition: ProtocolCondition;
  readonly spec: ConditionSpec;
  readonly mode: SubstitutionMode;
  readonly pointAttempt: number | null;
  readonly pointLabel: string;
  readonly seed: number | string | undefined;
  readonly substituting: boolean;
  /** The harness supplies what the reads return (O): the runtime must offer an oracle source. */
  readonly oracle: boolean;
  /** S / T: donors are assigned (same-fact or different-fact) from the registered seed. */
  readonly donorMode: 'same-fact' | 'different-fact' | null;
  /** S / T: where the donor's payload enters — installed at the point, or swapped in at read time. */
  readonly donorInstallation: 'install' | 'read' | null;
}

/** The plan of one protocol condition, asked of its registered kind (src/interventions/condition-kind.ts). */
export function conditionPlan(c: ProtocolCondition): ConditionPlan {
  const kind = conditionKindOf(c);
  const spec = toConditionSpec(c);
  const { mode, donor } = kind.mode(c);
  const pointAttempt = c.installAt?.attempt ?? null;
  if (kind.acts(c) === 'point' && pointAttempt === null) {
    throw new ImepError('E_PROTOCOL_INVALID', `condition "${c.id}" acts at a registered point but has no installAt`, {
      field: `conditions.${c.id}.installAt`,
      hint: 'add installAt: { attempt: 2, before: first-query }',
    });
  }
  return {
    condition: c,
    spec,
    mode,
    pointAttempt,
    pointLabel: pointLabel(c),
    seed: conditionSeed(c),
    substituting: kind.roles.includes('substituting'),
    oracle: kind.roles.includes('oracle'),
    donorMode: donor?.mode ?? null,
    donorInstallation: donor?.installation ?? null,
  };
}

/** Whether an episode at `attempt` runs (partly) after the condition's registered point. */
export function afterPoint(plan: ConditionPlan, attempt: number): boolean {
  return plan.pointAttempt === null || attempt >= plan.pointAttempt;
}
