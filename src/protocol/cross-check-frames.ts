/**
 * Cross-field rules of `frames` (schema-frames.ts): the recorded conditions exist, the steps ascend, the
 * field is on an allowlist — method-visible (the policy's own image) or evaluator-only (a render the simulator adds
 * for the report, e.g. a real adapter's `frame` for a state-observation policy, which the policy never gets) — and
 * the registered frame count stays within MAX_REGISTERED_FRAMES.
 */
import type { CheckContext } from './cross-check-context.js';
import { MAX_REGISTERED_FRAMES } from './schema-frames.js';

export function checkFrames(ctx: CheckContext): void {
  const f = ctx.protocol.frames;
  if (f === undefined) return;
  f.conditions.forEach((c, i) => ctx.condition(['frames', 'conditions', i], c));
  f.steps.forEach((s, i) => {
    if (i > 0 && s <= (f.steps[i - 1] as number))
      ctx.push(
        ['frames', 'steps', i],
        `step ${s} does not follow step ${f.steps[i - 1]}`,
        'list the steps once each, ascending',
      );
  });
  const { methodVisible, evaluatorOnly } = ctx.protocol.allowlists;
  if (!methodVisible.includes(f.field) && !evaluatorOnly.includes(f.field)) {
    ctx.push(
      ['frames', 'field'],
      `frames.field "${f.field}" is on neither allowlist`,
      `name a method-visible image field (${methodVisible.join(', ')}) or list the evaluator-only render (e.g. frame) under allowlists.evaluatorOnly`,
    );
  }
  const attempts = ctx.protocol.attempts?.count ?? ctx.protocol.chains?.length ?? 1;
  const total = Math.min(f.units, ctx.protocol.n) * f.conditions.length * attempts * f.steps.length;
  if (total > MAX_REGISTERED_FRAMES) {
    ctx.push(
      ['frames', 'units'],
      `frames registers ${total} frames per task (units × conditions × attempts × steps), above the cap of ${MAX_REGISTERED_FRAMES}`,
      'record fewer units, conditions or steps',
    );
  }
}
