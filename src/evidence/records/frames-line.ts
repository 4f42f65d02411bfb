/**
 * One line of traces/frames.jsonl: the rollout frames (downsampled PNGs) and memory reads of one recorded episode,
 * written by the frame recorder (src/campaign/frame-recorder.ts) when the protocol registers `frames`, sealed with
 * the unit, and read by the report's filmstrips (src/report/frames-load.ts).
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
});
export type FramesLine = z.infer<typeof FramesLineSchema>;
