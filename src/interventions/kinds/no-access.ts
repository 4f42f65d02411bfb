/** N — no access: every read returns empty (block), or the scope is cleared at the registered point (clear). */
import { z } from 'zod';
import type { ConditionKind } from '../condition-kind.js';
import { blockHook, clearAtPoint } from '../no-access.js';
import { InstallAt, pick } from './fields.js';

const VARIANTS = ['block', 'clear'] as const;

export const noAccessKind: ConditionKind = {
  name: 'N',
  summary: 'N: no access — blocked reads or a cleared bank, clock kept',
  fields: {
    variant: z.enum(VARIANTS).describe('block: every read returns empty; clear: the bank is emptied at installAt'),
    installAt: InstallAt.optional(),
  },
  roles: ['no-access'],
  acts: (c) => (pick(c, 'variant', VARIANTS) === 'clear' ? 'point' : 'read'),
  pointWords: (c) => `N ${pick(c, 'variant', VARIANTS) ?? ''}`,
  spec: (c) => ({ kind: 'N', variant: pick(c, 'variant', VARIANTS) }),
  mode: () => ({ mode: 'none' }),
  label: (spec) => (spec['variant'] === 'block' ? 'N_block' : 'N_clear'),
  operator: (spec, ctx) =>
    spec['variant'] === 'block'
      ? { hook: blockHook }
      : { atPoint: (t) => ({ kind: 'cleared', record: clearAtPoint(t, ctx.scope, ctx.point) }) },
};
