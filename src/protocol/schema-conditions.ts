/**
 * Conditions of a protocol: the closed union of src/interventions/condition.ts (A, N, O, C, U, S_pi,
 * T_mu, S, T) plus what a protocol registers around each: its id, the installation point of the
 * point-acting kinds, the seed of the random ones, an optional smaller n, per-condition env kwargs
 * overrides and factor levels (for factorial designs such as view × reads).
 *
 * conditions.ts maps a parsed condition onto the interventions' ConditionSpec; the compiler keeps the
 * two unions in step.
 */
import { z } from 'zod';
import { ULP_DIRECTIONS } from '../interventions/index.js';
import { Ident, Kwargs, NonEmptyText, PositiveInt, Seed } from './schema-common.js';

export const CONDITION_KINDS = ['A', 'N', 'O', 'C', 'U', 'S_pi', 'T_mu', 'S', 'T'] as const;
export type ProtocolConditionKind = (typeof CONDITION_KINDS)[number];

/** Kinds that replace what a read returns or what the bank holds (the survival gate's domain). */
export const SUBSTITUTING_KINDS: readonly ProtocolConditionKind[] = ['U', 'S_pi', 'T_mu', 'S', 'T'];
/** Same-fact (sham) and different-fact (target) substitutions, paired as θ takes them. */
export const SHAM_KINDS: readonly ProtocolConditionKind[] = ['S', 'S_pi'];
export const TARGET_KINDS: readonly ProtocolConditionKind[] = ['T', 'T_mu'];
/**
 * Read canaries (gate read-canary): reads that return content a policy acting on what it reads cannot act on as it
 * would on the true content — a different-fact donor (T) or a scrambled latent (S_pi, T_mu). U, C and S leave the
 * content's meaning intact; N returns nothing, which a policy that needs no memory survives legitimately.
 */
export const READ_CANARY_KINDS: readonly ProtocolConditionKind[] = ['T', 'S_pi', 'T_mu'];

/** Where a point-acting condition runs: at the start of an attempt, before its first memory query. */
export const InstallAt = z
  .strictObject({
    attempt: PositiveInt.describe('the attempt (1-based) at whose start the condition acts'),
    before: z.enum(['first-query']).describe('the point within the attempt: before its first memory query'),
  })
  .describe('the registered installation point, e.g. { attempt: 2, before: first-query }');

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

const seedOf = (what: string) => Seed.describe(`the registered seed of ${what} (recorded with every unit)`);

export const ConditionA = z.strictObject({
  ...common,
  kind: z.literal('A').describe('A: reference memory, unablated'),
});

export const ConditionN = z.strictObject({
  ...common,
  kind: z.literal('N').describe('N: no access — blocked reads or a cleared bank, clock kept'),
  variant: z
    .enum(['block', 'clear'])
    .describe('block: every read returns empty; clear: the bank is emptied at installAt'),
  installAt: InstallAt.optional(),
});

export const ConditionO = z.strictObject({
  ...common,
  kind: z.literal('O').describe('O: oracle — the correct fact or decision is supplied'),
  provides: z.enum(['fact', 'decision']).describe('what the oracle supplies: the deciding fact or the decision'),
});

export const ConditionC = z.strictObject({
  ...common,
  kind: z.literal('C').describe('C: exact replicate of the reference (installs nothing)'),
});

export const ConditionU = z.strictObject({
  ...common,
  kind: z.literal('U').describe('U: one-ULP control — every float leaf moves one representable value in its own dtype'),
  direction: z
    .enum(ULP_DIRECTIONS)
    .default('away')
    .describe('ULP direction: up, down, away (from zero) or toward-zero'),
  installation: z
    .enum(['read', 'install'])
    .describe('read: at every read (blackout ladders); install: once through the install routine at installAt'),
  installAt: InstallAt.optional(),
});

export const ConditionSPi = z.strictObject({
  ...common,
  kind: z.literal('S_pi').describe('S_pi: within-latent permutation of every retrieved latent at each read'),
  seed: seedOf('the per-read permutation draws'),
  version: z
    .literal(1, {
      error:
        'the four-lane SIMD draws of versions 2 and 3 were retired (no supported protocol named them; the bits they drew are not reproduced by this release): remove version, or write version: 1',
    })
    .optional()
    .describe('the algorithm version (src/interventions/condition.ts): 1, the only one (default)'),
});

export const ConditionTMu = z.strictObject({
  ...common,
  kind: z.literal('T_mu').describe('T_mu: moment-matched resample of every retrieved latent at each read'),
  seed: seedOf('the per-read resampling draws'),
  version: z
    .literal(1, {
      error:
        'the four-lane SIMD draws of versions 2 and 3 were retired (no supported protocol named them; the bits they drew are not reproduced by this release): remove version, or write version: 1',
    })
    .optional()
    .describe('the algorithm version (src/interventions/condition.ts): 1, the only one (default)'),
});

export const ConditionS = z.strictObject({
  ...common,
  kind: z
    .literal('S')
    .describe(
      "S: same-fact donor swap — installed once at installAt (installation: install, the default), or at read time from the task's decision step on (installation: read)",
    ),
  seed: seedOf('the donor assignment'),
  installation: z
    .enum(['install', 'read'])
    .optional()
    .describe(
      "install (absent = install): the donor's records replace the recipient's once, at installAt, in a structured bank; read: from the episode's first decision query on, every retrieved record written before it carries the donor episode's payload of the same bank, timestep and slot (episode-local banks and hosted policies; no installAt)",
    ),
  installAt: InstallAt.optional(),
});

export const ConditionT = z.strictObject({
  ...common,
  kind: z
    .literal('T')
    .describe(
      "T: different-fact donor swap — installed once at installAt (installation: install, the default), or at read time from the task's decision step on (installation: read)",
    ),
  seed: seedOf('the donor assignment'),
  installation: z
    .enum(['install', 'read'])
    .optional()
    .describe(
      "install (absent = install): the donor's records replace the recipient's once, at installAt, in a structured bank; read: from the episode's first decision query on, every retrieved record written before it carries the donor episode's payload of the same bank, timestep and slot (episode-local banks and hosted policies; no installAt)",
    ),
  installAt: InstallAt.optional(),
});

export const ConditionSchema = z
  .discriminatedUnion('kind', [
    ConditionA,
    ConditionN,
    ConditionO,
    ConditionC,
    ConditionU,
    ConditionSPi,
    ConditionTMu,
    ConditionS,
    ConditionT,
  ])
  .describe('a condition: { id, kind, …parameters of that kind }');

export type ProtocolCondition = z.infer<typeof ConditionSchema>;
export type InstallPoint = z.infer<typeof InstallAt>;
