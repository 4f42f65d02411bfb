/** A — the reference memory, unablated: reads return what the bank selected. */
import type { ConditionKind } from '../condition-kind.js';

export const referenceKind: ConditionKind = {
  name: 'A',
  summary: 'A: reference memory, unablated',
  fields: {},
  roles: ['reference'],
  acts: () => 'none',
  spec: () => ({ kind: 'A' }),
  mode: () => ({ mode: 'none' }),
  operator: () => ({}),
};
