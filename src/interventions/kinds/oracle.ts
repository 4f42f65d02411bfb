/** O — the oracle: the harness supplies the correct fact or decision at every read. */
import { z } from 'zod';
import type { ConditionKind } from '../condition-kind.js';
import { oracleHook } from '../oracle.js';
import { invalid } from './fields.js';

export const oracleKind: ConditionKind = {
  name: 'O',
  summary: 'O: oracle — the correct fact or decision is supplied',
  fields: {
    provides: z.enum(['fact', 'decision']).describe('what the oracle supplies: the deciding fact or the decision'),
  },
  roles: ['oracle'],
  acts: () => 'none',
  spec: () => ({ kind: 'O' }),
  mode: () => ({ mode: 'none' }),
  operator: (_spec, ctx) => ({
    hook: oracleHook(ctx.oracle ?? invalid('condition O needs an oracle source', 'oracle')),
    substitutesEveryRead: true,
  }),
};
