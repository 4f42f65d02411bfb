/**
 * `frames` (optional, off when absent): rgb frames recorded at registered elapsed steps by a subscriber of
 * the episode loop (src/campaign/frame-recorder.ts), for the report's filmstrips of paired episodes.
 * Bounded by construction: at most 16 steps, the first `units` seeds of each task, the listed conditions,
 * each frame downsampled by `downsample` and stored as PNG in the trace stream `traces/frames.jsonl`, which
 * the seal hashes like every other file of the unit.
 */
import { z } from 'zod';
import { IdentList, NonNegativeInt } from './schema-common.js';

/** The most frames one protocol may register: units × conditions × attempts × steps, per task. */
export const MAX_REGISTERED_FRAMES = 20_000;

export const FramesSchema = z
  .strictObject({
    steps: z
      .array(NonNegativeInt)
      .min(1)
      .max(16)
      .describe(
        'elapsed steps whose observation is recorded (0 = the frame after reset), ascending, at most 16; a step the episode does not reach records nothing',
      ),
    conditions: IdentList.describe(
      'the conditions whose episodes are recorded (the anchor and its contrasts, e.g. [A, S, T])',
    ),
    units: z
      .number()
      .int()
      .min(1)
      .max(256)
      .describe('record the first `units` seeds of each task (ascending seed order), at most 256'),
    field: z
      .string()
      .min(1)
      .default('rgb')
      .describe(
        'the image field recorded (uint8 [H, W, 3]): method-visible (the policy’s own image) or evaluator-only (a render the simulator adds for the report, which the policy never gets, e.g. frame); default rgb',
      ),
    downsample: z
      .union([z.literal(1), z.literal(2), z.literal(4)])
      .default(1)
      .describe('keep every k-th pixel in each direction (1, 2 or 4)'),
  })
  .describe('rollout frames for the report (off when absent): recorded at registered steps, hashed into the unit');

export type Frames = z.infer<typeof FramesSchema>;
