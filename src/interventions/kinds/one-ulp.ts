/**
 * U — the one-ULP control: every float leaf moves one representable value in its own dtype, at every read
 * (installation: read) or once through the install routine at the registered point (installation: install).
 */
import { z } from 'zod';
import type { ConditionView } from '../../core/index.js';
import type { ConditionKind, ConditionSpec } from '../condition-kind.js';
import { installPayloads } from '../install.js';
import { DEFAULT_ULP_DIRECTION, oneUlpOperator } from '../one-ulp.js';
import { readHook } from '../read-hook.js';
import { ULP_DIRECTIONS, type UlpDirection } from '../ulp.js';
import { InstallAt, invalid, pick } from './fields.js';

const INSTALLATIONS = ['read', 'install'] as const;

/** The default U spec: away from zero, through the installation routine. */
export const U_DEFAULT: ConditionSpec = { kind: 'U', direction: DEFAULT_ULP_DIRECTION, installation: 'install' };

const installation = (c: ConditionView) => pick(c, 'installation', INSTALLATIONS);

export const oneUlpKind: ConditionKind = {
  name: 'U',
  summary: 'U: one-ULP control — every float leaf moves one representable value in its own dtype',
  fields: {
    direction: z
      .enum(ULP_DIRECTIONS)
      .default('away')
      .describe('ULP direction: up, down, away (from zero) or toward-zero'),
    installation: z
      .enum(INSTALLATIONS)
      .describe('read: at every read (blackout ladders); install: once through the install routine at installAt'),
    installAt: InstallAt.optional(),
  },
  roles: ['substituting', 'numeric-control'],
  acts: (c) => (installation(c) === 'install' ? 'point' : 'read'),
  installsPayloads: (c) => installation(c) === 'install',
  pointWords: () => 'U install',
  spec: (c) => ({ kind: 'U', direction: pick(c, 'direction', ULP_DIRECTIONS), installation: installation(c) }),
  mode: (c) => ({ mode: installation(c) === 'read' ? 'per-read' : 'installed' }),
  operator: (spec, ctx) => {
    const direction = (spec['direction'] as UlpDirection | undefined) ?? DEFAULT_ULP_DIRECTION;
    if (spec['installation'] === 'read') return { perRead: readHook(oneUlpOperator(direction)) };
    const operator = oneUlpOperator(direction);
    return {
      atPoint: (t) => {
        const r = installPayloads(t, ctx.scope, ctx.point, { kind: 'leaf', operator });
        return r.kind === 'installed' ? r : invalid('one-ULP installation cannot fail short', 'installation');
      },
    };
  },
};
