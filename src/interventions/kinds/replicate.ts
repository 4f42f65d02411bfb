/** C — an exact replicate of the reference: installs nothing, reads pass through (the exact-repeat floor). */
import type { ConditionKind } from '../condition-kind.js';
import { replicateHook } from '../replicate.js';

export const replicateKind: ConditionKind = {
  name: 'C',
  summary: 'C: exact replicate of the reference (installs nothing)',
  fields: {},
  roles: ['replicate'],
  acts: () => 'none',
  spec: () => ({ kind: 'C' }),
  mode: () => ({ mode: 'none' }),
  operator: () => ({ hook: replicateHook }),
};
