/**
 * Conditions of a protocol: each `conditions[i]` is the common fields a protocol registers around any condition
 * (its id, a description, an optional smaller n, per-condition env kwargs overrides, factor levels for factorial
 * designs such as view × reads), then `kind`, then the fields of that kind — parsed through the registered
 * condition kinds' faces (core's `conditionFaces`; the built-ins A, N, O, C, U, S_pi, T_mu, S, T live in
 * src/interventions/kinds and are registered by src/kinds). What a kind is for the analysis (sham, target,
 * substituting, …) and where it acts are questions to its face, never a test of its name.
 */
import { z } from 'zod';
import { conditionFaces, type ConditionFace, type ConditionRole, type ConditionView } from '../core/index.js';
import { kindField } from './kind-field.js';
import { Ident, Kwargs, NonEmptyText, PositiveInt } from './schema-common.js';

const common = {
  id: Ident.describe('the condition id, unique in the protocol (e.g. N_blk)'),
  description: NonEmptyText.optional().describe('what the condition does, in words'),
  n: PositiveInt.optional().describe(
    'units per task for this condition when fewer than the protocol n (the first n seeds)',
  ),
  envKwargs: Kwargs.optional().describe(
    'env kwargs that override the envs[].kwargs for this condition (factorial designs)',
  ),
  levels: z
    .record(Ident, Ident)
    .optional()
    .describe('the condition’s level of each declared factor, e.g. { view: blackout, reads: blocked }'),
};

/** The registered point at whose start a point-acting condition acts (its kind's `installAt` field). */
export interface InstallPoint {
  readonly attempt: number;
  readonly before: 'first-query';
}

/**
 * A parsed condition: the common fields, `kind`, and the fields of its kind (read through the kind, which parsed
 * them). `installAt` and `seed` are typed here because the protocol's cross-checks and the plan read them for any
 * kind that has them.
 */
export type ProtocolCondition = z.infer<z.ZodObject<typeof common>> & {
  readonly kind: string;
  readonly installAt?: InstallPoint | undefined;
  readonly seed?: number | string | undefined;
  readonly [field: string]: unknown;
};

/** The name a protocol gives a condition kind (a registered one: conditionFaces.names()). */
export type ProtocolConditionKind = string;

export const ConditionSchema = kindField<ConditionFace, 'kind', ProtocolCondition>(
  conditionFaces,
  'kind',
  'a condition',
  {
    common,
    description: 'a condition: { id, kind, …parameters of that kind }',
    unknown: 'choices',
  },
);

/** The registered face of a parsed condition (its kind was registered when the protocol was parsed). */
export function faceOf(c: ConditionView): ConditionFace {
  return conditionFaces.require(c.kind, { field: `conditions.${c.id}.kind` });
}

/**
 * The registered condition kinds that have `role`, in registration order — grouped by substitution family when
 * every one of them has one (sham, target, read canary: "T or S_pi or T_mu", donor swaps before latent scrambles).
 */
export function kindsWithRole(role: ConditionRole): string[] {
  const kinds = conditionFaces.all().filter((k) => k.roles.includes(role));
  const families = kinds.map((k) => k.family);
  if (families.every((f): f is string => f !== undefined)) {
    const order = [...new Set(families)].sort();
    kinds.sort((a, b) => order.indexOf(a.family as string) - order.indexOf(b.family as string));
  }
  return kinds.map((k) => k.name);
}

/** Whether the condition's kind has `role` (an unregistered kind has none). */
export function hasRole(c: { readonly kind: string }, role: ConditionRole): boolean {
  return conditionFaces.get(c.kind)?.roles.includes(role) ?? false;
}
