/**
 * The `suite:` block: a benchmark's task set, named as its simulator declares it (SimulatorFace.benchmarks), run
 * in one protocol. It fills `envs` (the two are exclusive as written) and adds per-task estimands, criteria and one
 * Holm family per per-task criterion — the expansion (suite-expand.ts) happens at load, so the frozen protocol and
 * its hash register them up front.
 */
import { z } from 'zod';
import { Ident, Kwargs, MAX_ENVS, NonEmptyText, TaskName } from './schema-common.js';

const PerTaskIds = z.array(Ident).min(1).max(64);

export const SuiteSchema = z
  .strictObject({
    benchmark: NonEmptyText.describe(
      "the task set's name, as the simulator declares it (e.g. mikasa-vla-standard, libero-spatial, lite-memory)",
    ),
    tasks: z
      .array(TaskName)
      .min(1)
      .max(MAX_ENVS)
      .optional()
      .describe("a subset of the set's task names, in the set's order or any (default: every task of the set)"),
    kwargs: Kwargs.optional().describe('make-time kwargs of every task (e.g. { obs_mode: state, sim_backend: cpu })'),
    perTask: z
      .strictObject({
        estimands: PerTaskIds.optional().describe(
          'estimand ids (written under estimands) taken again per task: each becomes <id>@<task>, on that task’s units only',
        ),
        criteria: PerTaskIds.optional().describe(
          'criterion ids taken again per task: each becomes <id>@<task> on the per-task estimands (list those under perTask.estimands)',
        ),
      })
      .optional()
      .describe('what is also taken per task; the written estimands and criteria stay pooled over the tasks'),
    multiplicity: z
      .strictObject({
        method: z.literal('holm').describe('Holm’s step-down adjustment of the exact McNemar p-values'),
        alpha: z.number().gt(0).lt(1).describe('the family-wise α (each per-task criterion must register it)'),
      })
      .optional()
      .describe(
        'one Holm family over the per-task contrasts of each per-task p-below criterion, named <criterion>_tasks; its criteria decide on the adjusted p',
      ),
  })
  .describe(
    'a benchmark task set run in one protocol: fills envs, adds per-task estimands, criteria and Holm families',
  );

export type Suite = z.infer<typeof SuiteSchema>;
