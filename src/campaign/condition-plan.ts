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
import { ImepError } from '../core/errors.js';
import type { ConditionSpec } from '../interventions/condition.js';
import type { SubstitutionMode } from '../interventions/trace.js';
import { conditionSeed, pointLabel, toConditionSpec } from '../protocol/conditions.js';
import { SUBSTITUTING_KINDS } from '../protocol/schema-conditions.js';
import type { ProtocolCondition } from '../protocol/schema.js';

export interface ConditionPlan {
  readonly condition: ProtocolCondition;
  readonly spec: ConditionSpec;
  readonly mode: SubstitutionMode;
  readonly pointAttempt: number | null;
  readonly pointLabel: string;
  readonly seed: number | string | undefined;
  readonly substituting: boolean;
  /** S / T: donors are assigned (same-fact or different-fact) from the registered seed. */
  readonly donorMode: 'same-fact' | 'different-fact' | null;
  /** S / T: where the donor's payload enters — installed at the point, or swapped in at read time. */
  readonly donorInstallation: 'install' | 'read' | null;
}

export function conditionPlan(c: ProtocolCondition): ConditionPlan {
  const spec = toConditionSpec(c);
  const at = 'installAt' in c ? c.installAt : undefined;
  let mode: SubstitutionMode = 'none';
  const readSwap = (c.kind === 'S' || c.kind === 'T') && c.installation === 'read';
  if (readSwap) mode = 'read-swap';
  else if (c.kind === 'S_pi' || c.kind === 'T_mu' || (c.kind === 'U' && c.installation === 'read')) mode = 'per-read';
  else if (c.kind === 'S' || c.kind === 'T' || (c.kind === 'U' && c.installation === 'install')) mode = 'installed';
  const pointAttempt = at?.attempt ?? null;
  if (mode === 'installed' || (c.kind === 'N' && c.variant === 'clear')) {
    if (pointAttempt === null) {
      throw new ImepError('E_PROTOCOL_INVALID', `condition "${c.id}" acts at a registered point but has no installAt`, {
        field: `conditions.${c.id}.installAt`,
        hint: 'add installAt: { attempt: 2, before: first-query }',
      });
    }
  }
  return {
    condition: c,
    spec,
    mode,
    pointAttempt,
    pointLabel: pointLabel(c),
    seed: conditionSeed(c),
    substituting: SUBSTITUTING_KINDS.includes(c.kind),
    donorMode: c.kind === 'S' ? 'same-fact' : c.kind === 'T' ? 'different-fact' : null,
    donorInstallation: c.kind === 'S' || c.kind === 'T' ? (readSwap ? 'read' : 'install') : null,
  };
}

/** Whether an episode at `attempt` runs (partly) after the condition's registered point. */
export function afterPoint(plan: ConditionPlan, attempt: number): boolean {
  return plan.pointAttempt === null || attempt >= plan.pointAttempt;
}
