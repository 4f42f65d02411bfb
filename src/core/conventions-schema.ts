/**
 * Action and observation CONVENTIONS in vla-eval 0.8.0's DimSpec vocabulary (vla_eval/specs.py): one component is
 * `{ name, dims, format, range?, accepts?, description? }` — `format` a convention string (delta_xyz, axis_angle,
 * euler_xyz, quaternion_xyzw, binary_close_positive, binary_close_negative, continuous_01, rgb_hwc_uint8, language…),
 * `range` the expected [min, max] of its values, `accepts` (consumer side) the formats it can take instead of exact
 * equality. IMEP adds what a flat action vector needs: the components are IN ORDER, component k covering the `dims`
 * entries after those of components 0…k−1 (so `start` is never written), and an observation component may name the
 * IMEP `field` it is read from.
 *
 * Three places declare them: an environment's EnvSpec (`conventions`: what it takes and gives, src/runtime), a
 * protocol's top-level `conventions:` block (what the policy returns and needs) and a checkpoint's model.json
 * (`conventions`, the same shape). A vla-eval server's HELLO action_spec / observation_spec maps onto the same shape
 * (src/policies/servers/vla-eval-conventions.ts). The comparison lives in src/runtime/conventions.ts.
 */
import { z } from 'zod';

const uint = z.number().int().min(0);

export const ConventionComponentSchema = z
  .strictObject({
    name: z.string().min(1).describe('the component, e.g. position, rotation, gripper, image, state, language'),
    dims: uint.describe('entries of the component (0: not an array, e.g. an image or a string)'),
    format: z.string().min(1).describe('the convention, e.g. delta_xyz, axis_angle, binary_close_positive'),
    range: z
      .tuple([z.number(), z.number()])
      .refine(([lo, hi]) => lo <= hi, 'a range is [min, max] with min <= max')
      .optional()
      .describe('the expected [min, max] of every value'),
    accepts: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('consumer side: the formats it can take (then formats are compared by membership)'),
    field: z.string().min(1).optional().describe('observation only: the IMEP observation field it is read from'),
    description: z.string().optional(),
  })
  .describe('one component of an action or observation (vla-eval DimSpec vocabulary)');

export type ConventionComponent = z.infer<typeof ConventionComponentSchema>;

/** What an environment takes (action, in order) and gives (observation). */
export const EnvConventionsSchema = z
  .strictObject({
    action: z.array(ConventionComponentSchema).min(1).describe('the action vector, component by component, in order'),
    observation: z.array(ConventionComponentSchema).optional().describe('what the environment shows the policy'),
  })
  .describe("an environment's action and observation conventions");

export type EnvConventions = z.infer<typeof EnvConventionsSchema>;

/** What a policy returns (action, in order) and needs (observation), and how many actions one call returns. */
export const PolicyConventionsSchema = z
  .strictObject({
    action: z
      .array(ConventionComponentSchema)
      .min(1)
      .optional()
      .describe('what the policy returns, component by component, in order'),
    observation: z
      .array(ConventionComponentSchema)
      .optional()
      .describe('what the policy needs (matched to the environment by name, or by field)'),
    chunk: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('actions one call returns (1: a single action; H: an [H, A] chunk)'),
    preflightCalls: z
      .number()
      .int()
      .min(0)
      .max(64)
      .optional()
      .describe(
        'policy calls the convention preflight makes (default 3; 0: none, the declarations are still checked — for a policy whose calls must not be spent, e.g. one that counts them)',
      ),
  })
  .describe("the policy's conventions, checked against each environment's before anything is written");

export type PolicyConventions = z.infer<typeof PolicyConventionsSchema>;
