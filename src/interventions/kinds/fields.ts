/**
 * Schema fields several condition kinds share (the installation point, a registered seed, the S_π / T_μ algorithm
 * version). They are written as src/protocol/schema-common.ts writes its building blocks (same checks, same
 * descriptions), so the protocol's JSON Schema and parsed conditions are what they were before kinds were
 * registered.
 */
import { z } from 'zod';
import { ImepError, type ConditionView } from '../../core/index.js';

const PositiveInt = z.number().int().min(1);
const UINT32_MAX = 0xffffffff;
const SeedInt = z.number().int().min(0).max(UINT32_MAX).describe('an integer seed in [0, 4294967295]');
const Seed = z
  .union([SeedInt, z.string().min(1)])
  .describe('a registered PRNG seed: an integer in [0, 4294967295] or a non-empty string');

/** Where a point-acting condition runs: at the start of an attempt, before its first memory query. */
export const InstallAt = z
  .strictObject({
    attempt: PositiveInt.describe('the attempt (1-based) at whose start the condition acts'),
    before: z.enum(['first-query']).describe('the point within the attempt: before its first memory query'),
  })
  .describe('the registered installation point, e.g. { attempt: 2, before: first-query }');

/** The registered seed of `what` (recorded with every unit). */
export const seedOf = (what: string) => Seed.describe(`the registered seed of ${what} (recorded with every unit)`);

/** The S_π / T_μ algorithm version: 1, the only one; the retired SIMD versions 2 and 3 are refused saying why. */
export const scrambleVersion = () =>
  z
    .literal(1, {
      error:
        'the four-lane SIMD draws of versions 2 and 3 were retired (no supported protocol named them; the bits they drew are not reproduced by this release): remove version, or write version: 1',
    })
    .optional()
    .describe('the algorithm version (src/interventions/condition.ts): 1, the only one (default)');

/** A field of a condition its kind's schema has parsed: `pick(c, 'variant', ['block', 'clear'])`. */
export function pick<const T extends string>(c: ConditionView, field: string, values: readonly T[]): T | undefined {
  const v = c[field];
  if (v === undefined) return undefined;
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  throw new ImepError(
    'E_INTERVENTION_INVALID',
    `condition "${c.id}" (${c.kind}): ${field} is ${JSON.stringify(v)}, not one of ${values.join(', ')}`,
    { field: `conditions.${c.id}.${field}`, hint: 'parse the condition with its kind’s schema first' },
  );
}

/** The registered seed of a condition whose kind requires one. */
export function seedIn(c: ConditionView): number | string {
  if (c.seed === undefined)
    throw new ImepError('E_INTERVENTION_INVALID', `condition "${c.id}" (${c.kind}) has no seed`, {
      field: `conditions.${c.id}.seed`,
      hint: 'parse the condition with its kind’s schema first',
    });
  return c.seed;
}

/** Refuses a context that lacks what the kind needs (E_INTERVENTION_INVALID, naming the field). */
export function invalid(message: string, field: string): never {
  throw new ImepError('E_INTERVENTION_INVALID', message, { field });
}
