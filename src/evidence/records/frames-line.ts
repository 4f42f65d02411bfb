/**
 * One line of traces/frames.jsonl: the rollout frames (downsampled PNGs) and memory reads of one recorded episode,
 * written by the frame recorder (src/campaign/frame-recorder.ts) when the protocol registers `frames`, sealed with
 * the unit, and read by the report's filmstrips (src/report/frames-load.ts). `actions` and `track` (what the policy
 * did, drawn over the frames) are optional: units recorded before they were kept parse as before.
 */
import { z } from 'zod';

export const FramesLineSchema = z.object({
  seq: z.number().int().nonnegative(),
  condition: z.string().min(1),
  task: z.string().min(1),
  seed: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  episodeId: z.string().regex(/^[0-9a-f]+$/),
  status: z.enum(['ok', 'failed']),
  steps: z.number().int().nonnegative(),
  frames: z.array(
    z.object({
      step: z.number().int().nonnegative(),
      width: z.number().int().positive(),
      height: z.number().int().positive(),
      png: z.string().min(1),
    }),
  ),
  reads: z.array(
    z.object({
      step: z.number().int().nonnegative(),
      bank: z.string(),
      query: z.number().int().nonnegative(),
      decision: z.boolean(),
      substituted: z.boolean(),
      changed: z.boolean(),
    }),
  ),
  /** The action the policy output at each step (the first row of an action chunk), rounded to 1e-4. */
  actions: z.array(z.object({ step: z.number().int().nonnegative(), action: z.array(z.number()) })).optional(),
  /**
   * The tool's position at each step, from the method-visible observation field the environment's conventions
   * declare as `tool_xy` (x right, y up on the [−1, 1]² table its top-down image shows); absent when none is.
   */
  track: z
    .object({
      field: z.string().min(1),
      format: z.literal('tool_xy'),
      points: z.array(z.object({ step: z.number().int().nonnegative(), x: z.number(), y: z.number() })),
    })
    .optional(),
});
export type FramesLine = z.infer<typeof FramesLineSchema>;
