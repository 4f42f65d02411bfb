/**
 * The built-in condition kinds answer what the protocol, the plan and the adjudication used to decide by testing
 * names: where each acts, what it is for the analysis, how the runner carries it out, which θ family it is in.
 */
import { describe, expect, it } from 'vitest';
import { conditionPlan } from '../../src/campaign/condition-plan.js';
import { conditionFaces } from '../../src/core/index.js';
import { conditionKinds, toConditionSpec } from '../../src/interventions/index.js';
import { registerBuiltinKinds } from '../../src/kinds/index.js';
import { kindsWithRole, parseProtocol, ProtocolError, type ProtocolCondition } from '../../src/protocol/index.js';
import { BASE, replaceOnce } from '../protocol/helpers.js';

const at2 = { attempt: 2, before: 'first-query' } as const;
const c = (fields: Record<string, unknown>): ProtocolCondition => ({ id: 'X', ...fields }) as ProtocolCondition;

function refusal(text: string): string {
  try {
    parseProtocol(text, 'p.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    return (e as ProtocolError).oneLine();
  }
  throw new Error('not refused');
}

describe('built-in condition kinds', () => {
  it('are registered once, in one order, into the kinds and the protocol faces alike', () => {
    registerBuiltinKinds(); // idempotent: the setup file already did
    expect(conditionKinds.names()).toEqual(['A', 'N', 'O', 'C', 'U', 'S_pi', 'T_mu', 'S', 'T']);
    expect(conditionFaces.names()).toEqual(conditionKinds.names());
    for (const k of conditionKinds.all()) expect(conditionFaces.get(k.name)).toBe(k);
  });

  it('say where they act', () => {
    const acts = (f: Record<string, unknown>): string => conditionKinds.require(f['kind'] as string).acts(c(f));
    expect(acts({ kind: 'A' })).toBe('none');
    expect(acts({ kind: 'N', variant: 'block' })).toBe('read');
    expect(acts({ kind: 'N', variant: 'clear', installAt: at2 })).toBe('point');
    expect(acts({ kind: 'U', direction: 'away', installation: 'read' })).toBe('read');
    expect(acts({ kind: 'U', direction: 'away', installation: 'install' })).toBe('point');
    expect(acts({ kind: 'S', seed: 1 })).toBe('point');
    expect(acts({ kind: 'T', seed: 1, installation: 'read' })).toBe('read');
    expect(acts({ kind: 'S_pi', seed: 1 })).toBe('read');
  });

  it('list the kinds of each analysis role (θ roles grouped by family)', () => {
    expect(kindsWithRole('substituting')).toEqual(['U', 'S_pi', 'T_mu', 'S', 'T']);
    expect(kindsWithRole('sham')).toEqual(['S', 'S_pi']);
    expect(kindsWithRole('target')).toEqual(['T', 'T_mu']);
    expect(kindsWithRole('read-canary')).toEqual(['T', 'S_pi', 'T_mu']);
    expect(kindsWithRole('oracle')).toEqual(['O']);
    expect(kindsWithRole('replicate')).toEqual(['C']);
    expect(kindsWithRole('no-access')).toEqual(['N']);
    expect(kindsWithRole('numeric-control')).toEqual(['U']);
    expect(kindsWithRole('reference')).toEqual(['A']);
  });

  it('give the plan its mode, donor and oracle flag', () => {
    const plan = (f: Record<string, unknown>) => {
      const p = conditionPlan(c(f));
      return [p.mode, p.donorMode, p.donorInstallation, p.substituting, p.oracle, p.pointAttempt];
    };
    expect(plan({ kind: 'S', seed: 3, installAt: at2 })).toEqual(['installed', 'same-fact', 'install', true, false, 2]);
    expect(plan({ kind: 'T', seed: 3, installation: 'read' })).toEqual([
      'read-swap',
      'different-fact',
      'read',
      true,
      false,
      null,
    ]);
    expect(plan({ kind: 'U', direction: 'up', installation: 'read' })).toEqual([
      'per-read',
      null,
      null,
      true,
      false,
      null,
    ]);
    expect(plan({ kind: 'O', provides: 'fact' })).toEqual(['none', null, null, false, true, null]);
    expect(plan({ kind: 'N', variant: 'block' })).toEqual(['none', null, null, false, false, null]);
    expect(() => conditionPlan(c({ kind: 'N', variant: 'clear' }))).toThrow(/acts at a registered point/);
    expect(toConditionSpec(c({ kind: 'T', seed: 9, installation: 'install' }))).toEqual({ kind: 'T', seed: 9 });
  });

  it('θ pairs a target with a sham of its own family; the hint names each family from the registry', () => {
    const base = BASE.replace(
      '  - id: C\n    kind: C\n',
      '  - id: C\n    kind: C\n  - id: S\n    kind: S\n    seed: 5\n    installation: read\n',
    ).replace('conditions: [A, S_pi, T_mu]', 'conditions: [A, S_pi, T_mu, S]');
    const line = refusal(replaceOnce(base, '    S: S_pi\n', '    S: S\n'));
    expect(line).toContain('θ pairs T_mu with S; substitutions must be of one family');
    expect(line).toContain('pair T with S (donor swaps) or T_mu with S_pi (latent scrambles)');
  });

  it('a payload-installing kind without a structured bank: the hint names the kinds that can read instead', () => {
    const text = replaceOnce(
      replaceOnce(BASE, 'conditions: [A, N_blk, C]', 'conditions: [A, N_blk, C, U]'),
      '  - id: C\n    kind: C\n',
      '  - id: C\n    kind: C\n  - id: U\n    kind: U\n    installation: install\n    installAt: { attempt: 1, before: first-query }\n',
    );
    expect(refusal(text)).toMatch(/installation: read \(U, S, T\)/);
  });
});
