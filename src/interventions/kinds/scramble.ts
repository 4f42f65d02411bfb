/**
 * S_π and T_μ — the latent scrambles: every retrieved latent is permuted within itself (S_π, the sham: same
 * content, scrambled order) or resampled with matched moments (T_μ, the target), at each read, from the registered
 * seed. Version 1 (absent = 1) is the one implementation (permute.ts, resample.ts), whose outputs sealed units
 * replay; the four-lane SIMD versions 2 and 3 were retired: no supported protocol named them.
 */
import type { ConditionKind } from '../condition-kind.js';
import type { LeafOperator } from '../leaf-operator.js';
import { permuteOperator } from '../permute.js';
import { readHook } from '../read-hook.js';
import { resampleOperator } from '../resample.js';
import { invalid, scrambleVersion, seedOf } from './fields.js';

export type ScrambleVersion = 1;
export const SCRAMBLE_VERSIONS: Readonly<Record<'S_pi' | 'T_mu', readonly ScrambleVersion[]>> = {
  S_pi: [1],
  T_mu: [1],
};

/** The S_π / T_μ operator of a version. */
export function scrambleOperator(kind: 'S_pi' | 'T_mu', version: ScrambleVersion = 1): LeafOperator {
  if (version === 1) return kind === 'S_pi' ? permuteOperator : resampleOperator;
  return invalid(
    `condition ${kind}: unknown version ${String(version)} (known: ${SCRAMBLE_VERSIONS[kind].join(', ')})`,
    'version',
  );
}

function scrambleKind(
  name: 'S_pi' | 'T_mu',
  summary: string,
  draws: string,
  roles: ConditionKind['roles'],
): ConditionKind {
  return {
    name,
    summary,
    fields: { seed: seedOf(draws), version: scrambleVersion() },
    roles,
    family: 'latent scrambles',
    acts: () => 'read',
    // the version only when registered, so protocols without one keep their recorded spec
    spec: (c) => (c['version'] === undefined ? { kind: name } : { kind: name, version: c['version'] }),
    mode: () => ({ mode: 'per-read' }),
    operator: (spec, ctx) => {
      const seed = ctx.seed ?? invalid(`condition ${name} needs a registered seed`, 'seed');
      const version = spec['version'] as ScrambleVersion | undefined;
      return { perRead: readHook(scrambleOperator(name, version), { seed }), seed };
    },
  };
}

export const permuteKind = scrambleKind(
  'S_pi',
  'S_pi: within-latent permutation of every retrieved latent at each read',
  'the per-read permutation draws',
  ['substituting', 'sham', 'read-canary'],
);

export const resampleKind = scrambleKind(
  'T_mu',
  'T_mu: moment-matched resample of every retrieved latent at each read',
  'the per-read resampling draws',
  ['substituting', 'target', 'read-canary'],
);
