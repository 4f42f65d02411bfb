/**
 * Building blocks shared by the protocol schemas. Every leaf carries a description: it is exported
 * into the JSON Schema for editors and reused as the hint of a validation error (issues.ts).
 */
import { z } from 'zod';

/** Condition, estimand, criterion, gate and family ids: a letter, then letters, digits or `_`. */
export const Ident = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]*$/, { error: 'must be an identifier (a letter, then letters, digits or _)' })
  .describe('an identifier: a letter followed by letters, digits or underscores, e.g. N_blk');

/** A task name (the plan's and the analysis's): a letter or digit, then letters, digits, `_`, `.` or `-`. */
export const TaskName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
    error: 'must be a task name (a letter or digit, then letters, digits, _, . or -)',
  })
  .describe('a task name, e.g. RememberColor3-VLA or libero_spatial-3');

/**
 * An estimand or criterion id: an identifier, optionally `@<task>` — the per-task entries a suite expands into
 * (`D_N@RememberColor3-VLA`, src/protocol/suite-expand.ts); usable by hand too.
 */
export const AnalysisId = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]*(@[A-Za-z0-9][A-Za-z0-9_.-]*)?$/, {
    error: 'must be an identifier, optionally followed by @<task> (e.g. D_N or D_N@RememberColor3-VLA)',
  })
  .describe('an estimand or criterion id: an identifier, optionally @<task> (e.g. D_N, D_N@RememberColor3-VLA)');

/** A list of estimand ids. */
export const AnalysisIdList = z.array(AnalysisId).min(1).max(256);

/** A protocol id: lower-case slug. */
export const Slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, { error: 'must be a lower-case slug (letters, digits, -)' })
  .describe('a lower-case slug, e.g. shellgame-blackout');

export const UINT32_MAX = 0xffffffff;

/** A reset seed: an integer in [0, 2^32 − 1]. */
export const SeedInt = z.number().int().min(0).max(UINT32_MAX).describe('an integer seed in [0, 4294967295]');

/** A PRNG seed as src/core/prng.ts takes it: a uint32 or a non-empty string. */
export const Seed = z
  .union([SeedInt, z.string().min(1)])
  .describe('a registered PRNG seed: an integer in [0, 4294967295] or a non-empty string');

export const PositiveInt = z.number().int().min(1);
export const NonNegativeInt = z.number().int().min(0);

/** A rate or proportion in [0, 1]. */
export const Rate = z.number().min(0).max(1);

/** α for one component of a bound: one-sided, strictly between 0 and ½. */
export const Alpha = z
  .number()
  .gt(0)
  .lt(0.5)
  .describe('α per component, strictly between 0 and 0.5 (e.g. 0.05: each component one-sided 95%)');

/** The confidence level of a two-sided interval, strictly between 0 and 1. */
export const Level = z
  .number()
  .gt(0)
  .lt(1)
  .describe('confidence level of the interval, strictly between 0 and 1 (e.g. 0.90)');

/** A margin in rate units (0.10 = 10 percentage points). */
export const Margin = z
  .number()
  .min(-1)
  .max(1)
  .describe('a margin in rate units between −1 and 1 (0.10 = 10 percentage points)');

/** Simulator make-time kwargs: scalar values only (null switches an option off). */
export const Kwargs = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
  .describe('make-time kwargs of the environment: scalar values (string, number, boolean or null)');

export const NonEmptyText = z.string().min(1);

/**
 * The most entries a protocol list may hold (conditions, waves, estimands, criteria, …; envs: MAX_ENVS). The
 * cross-field rules compare entries with each other, so the caps bound their cost; designs use a few dozen.
 */
export const MAX_ENTRIES = 256;
export const MAX_ENVS = 128;

/** A list of identifiers that references conditions or estimands. */
export const IdentList = z.array(Ident).min(1).max(MAX_ENTRIES);
