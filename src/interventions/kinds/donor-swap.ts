/**
 * S and T — the donor swaps: a donor unit is assigned from the registered seed among the units whose fact is the
 * same (S, the sham) or different (T, the target); its records replace the recipient's once at the registered point
 * (installation: install, the default), or from the episode's first decision query on every retrieved record
 * written before it carries the donor episode's payload (installation: read).
 */
import { z } from 'zod';
import type { ConditionView } from '../../core/index.js';
import type { ConditionKind, ConditionOperator, ConditionSpec } from '../condition-kind.js';
import type { InterventionContext } from '../condition.js';
import type { DonorMode } from '../donor-assignment.js';
import { installPayloads } from '../install.js';
import { readSwapHook, type ReadSwapCounters } from '../read-swap.js';
import { InstallAt, invalid, pick, seedIn, seedOf } from './fields.js';

const INSTALLATIONS = ['install', 'read'] as const;

function donorSwapKind(
  name: 'S' | 'T',
  summary: string,
  donorMode: DonorMode,
  roles: ConditionKind['roles'],
): ConditionKind {
  const readTime = (c: ConditionView) => pick(c, 'installation', INSTALLATIONS) === 'read';
  return {
    name,
    summary,
    fields: {
      seed: seedOf('the donor assignment'),
      installation: z
        .enum(INSTALLATIONS)
        .optional()
        .describe(
          "install (absent = install): the donor's records replace the recipient's once, at installAt, in a structured bank; read: from the episode's first decision query on, every retrieved record written before it carries the donor episode's payload of the same bank, timestep and slot (episode-local banks and hosted policies; no installAt)",
        ),
      installAt: InstallAt.optional(),
    },
    roles,
    family: 'donor swaps',
    acts: (c) => (readTime(c) ? 'read' : 'point'),
    installsPayloads: (c) => !readTime(c),
    pointHint: 'add installAt: { attempt: 2, before: first-query }, or installation: read to swap at read time',
    // the installation only when it is read: install-time swaps keep their recorded spec
    spec: (c) =>
      readTime(c) ? { kind: name, seed: seedIn(c), installation: 'read' } : { kind: name, seed: seedIn(c) },
    mode: (c) =>
      readTime(c)
        ? { mode: 'read-swap', donor: { mode: donorMode, installation: 'read' } }
        : { mode: 'installed', donor: { mode: donorMode, installation: 'install' } },
    operator: (spec, ctx) => operator(name, spec, ctx),
  };
}

function operator(name: 'S' | 'T', spec: ConditionSpec, ctx: InterventionContext): ConditionOperator {
  const seed = spec['seed'] as number | string;
  if (spec['installation'] === 'read') {
    const d = ctx.donorReads ?? invalid(`condition ${name} at read needs an assigned donor's reads`, 'donor');
    if (d.scope === ctx.scope) invalid(`scope ${ctx.scope} cannot be its own donor`, 'donor');
    const counters: ReadSwapCounters = { reads: 0, substitutedReads: 0 };
    const hook = readSwapHook({ recipient: ctx.scope, donor: d.scope, donorOf: d.itemsOf, counters });
    return { hook, seed, donor: d.scope, substitutedReads: () => counters.substitutedReads };
  }
  const d = ctx.donor ?? invalid(`condition ${name} needs an assigned donor`, 'donor');
  if (d.scope === ctx.scope) invalid(`scope ${ctx.scope} cannot be its own donor`, 'donor');
  return {
    seed,
    donor: d.scope,
    atPoint: (t) => {
      const r = installPayloads(t, ctx.scope, ctx.point, {
        kind: 'donor',
        condition: name,
        donorScope: d.scope,
        donorRecords: d.records,
      });
      return r.kind === 'installed'
        ? r
        : {
            kind: 'donor-short',
            scope: r.scope,
            donor: r.donor,
            recipientCount: r.recipientCount,
            donorCount: r.donorCount,
          };
    },
  };
}

export const sameFactKind = donorSwapKind(
  'S',
  "S: same-fact donor swap — installed once at installAt (installation: install, the default), or at read time from the task's decision step on (installation: read)",
  'same-fact',
  ['substituting', 'sham'],
);

export const differentFactKind = donorSwapKind(
  'T',
  "T: different-fact donor swap — installed once at installAt (installation: install, the default), or at read time from the task's decision step on (installation: read)",
  'different-fact',
  ['substituting', 'target', 'read-canary'],
);
