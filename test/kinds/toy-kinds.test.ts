/**
 * The three kind families at once, all registered from test code alone (no edit under src/): a toy simulator kind
 * (`toy-sim`: the lite environments under another name), a toy policy runtime (`toy-shell`: the runner tests'
 * scripted ShellGame policy, its bank read through the runner's hook) and a toy condition kind (`Z`: every float leaf
 * of every read zeroed). One protocol names all three; the one assembly step opens them; the campaign runs through the
 * seal; its rows equal, seq by seq, those of the built-in lite simulator with the same policy handed to the runner
 * directly — and Z did what it says on every read. docs/extending.md walks through each family.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerPolicyRuntimeKind, runCampaign, type PolicyRuntimeKind } from '../../src/campaign/index.js';
import type { FloatTensor } from '../../src/core/index.js';
import {
  readHook,
  registerConditionKind,
  type ConditionKind,
  type LeafOperator,
} from '../../src/interventions/index.js';
import { registerSimulatorKind, type SimulatorKind } from '../../src/runtime/index.js';
import { liteStatedKwargs, makeLiteEnv } from '../../src/sims/index.js';
import { sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';
import { ShellScriptedPolicy } from '../campaign/scripted-policies.js';

const opened: string[] = [];

const toySim: SimulatorKind = {
  name: 'toy-sim',
  summary: 'the lite simulators under another name',
  fields: { label: z.string().min(1).describe('a word the toy simulator reports back') },
  statedKwargs: liteStatedKwargs,
  preflight: () => undefined,
  open(block) {
    opened.push(`sim ${String(block['label'])}`);
    return Promise.resolve({
      envs: (task) => makeLiteEnv(task.envId, task.kwargs),
      description: null,
      isolation: null,
      limits: null,
      specOf: () => undefined,
      environment: undefined,
      summary: () => null,
      close: () => Promise.resolve(),
    });
  },
  describe: (block) => `toy simulators labelled ${String(block['label'])}`,
  servers: () => undefined,
  knownSpec: (_block, envId, kwargs) => makeLiteEnv(envId, kwargs).spec,
};

const toyShell: PolicyRuntimeKind = {
  name: 'toy-shell',
  summary: 'the scripted ShellGame policy as a registered runtime',
  fields: { decisionFrom: z.number().int().min(0).describe('the step from which its reads are decision queries') },
  preflight: () => [],
  memoryAccess: () => ({ installable: false, name: 'toy-shell (an episode bank)' }),
  open(protocol) {
    const from = (protocol.policy as unknown as { decisionFrom: number }).decisionFrom;
    opened.push(`policy ${from}`);
    return Promise.resolve({
      description: `toy-shell from step ${from}`,
      policyFor: (_task, batch) => Promise.resolve(new ShellScriptedPolicy(batch, from)),
      release: () => Promise.resolve(),
    });
  },
  describe: () => 'toy-shell',
};

const zeroOperator: LeafOperator = {
  condition: 'Z',
  params: {},
  usesPrng: false,
  apply: (leaf: FloatTensor) => ({ ...leaf, data: leaf.data.slice().fill(0) }) as FloatTensor,
};

const zeroKind: ConditionKind = {
  name: 'Z',
  summary: 'Z: every float leaf of every read zeroed',
  fields: {},
  roles: ['substituting'],
  acts: () => 'read',
  spec: () => ({ kind: 'Z' }),
  mode: () => ({ mode: 'per-read' }),
  operator: () => ({ perRead: readHook(zeroOperator) }),
};

function yaml(id: string, simulator: string, policy: string): string {
  return `version: 1
id: ${id}
title: ShellGame-lite through a toy simulator, a toy policy runtime and a toy condition
simulator: ${simulator}
envs:
  - { id: ShellGameTouch-lite, kwargs: { blackoutFromStep: 6, strict: true } }
${policy}
memory: { bank: episode-local, banks: [perceptual, cognitive], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 650000, end: 650007 }] }
n: 8
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: Z, kind: Z }
waves:
  - { id: 1, conditions: [A, Z], anchor: A }
estimands:
  - { id: rho_Z, kind: rho, reference: A, intervention: Z }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

interface Row {
  readonly seq: number;
  readonly condition: string;
  readonly status: string;
  readonly success: boolean | null;
  readonly reads: { readonly withHistory: number; readonly substituted: number };
  readonly [k: string]: unknown;
}
const rowsOf = (unit: string): Row[] =>
  readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

describe('a simulator kind, a policy runtime and a condition kind, all from test code', () => {
  const undo: Array<() => void> = [];
  beforeAll(() => {
    undo.push(registerSimulatorKind(toySim), registerPolicyRuntimeKind(toyShell), registerConditionKind(zeroKind));
  });
  afterAll(() => {
    for (const u of undo.reverse()) u();
  });

  it('run one campaign whose rows equal the built-in lite simulator with the same policy, Z zeroing every read', async () => {
    const box = sandbox('imep-toy-kinds-');
    const toyFile = writeProtocol(
      box,
      'toy.yaml',
      yaml('toy-kinds', '{ kind: toy-sim, label: seven }', 'policy: { runtime: toy-shell, decisionFrom: 5 }'),
    );
    const { policies: _own, ...viaKinds } = scriptedOptions(box, 'shell');
    const unit = await runCampaign(toyFile, viaKinds);
    expect(opened).toEqual(['sim seven', 'policy 5']);
    const frozen = JSON.parse(readFileSync(join(unit, 'protocol.json'), 'utf8')) as Record<string, unknown>;
    expect(frozen['simulator']).toEqual({ kind: 'toy-sim', label: 'seven' });
    expect(frozen['policy']).toEqual({ runtime: 'toy-shell', decisionFrom: 5 });
    expect((frozen['conditions'] as unknown[])[1]).toEqual({ id: 'Z', kind: 'Z' });

    const other = sandbox('imep-toy-kinds-ref-');
    const refFile = writeProtocol(
      other,
      'ref.yaml',
      yaml(
        'toy-kinds-ref',
        '{ kind: lite }',
        `checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${other.checkpointSha} }`,
      ),
    );
    const ref = await runCampaign(refFile, scriptedOptions(other, 'shell'));

    const a = rowsOf(unit);
    const b = rowsOf(ref);
    expect(a).toHaveLength(16);
    expect(a).toEqual(b);
    const of = (c: string): Row[] => a.filter((r) => r.condition === c && r.status === 'ok');
    expect(of('A')).toHaveLength(8);
    expect(of('Z')).toHaveLength(8);
    for (const r of of('A')) expect(r.reads.substituted).toBe(0);
    for (const r of of('Z')) {
      expect(r.reads.withHistory).toBeGreaterThan(0);
      expect(r.reads.substituted).toBe(r.reads.withHistory);
    }
    expect(of('Z').filter((r) => r.success === true).length).toBeLessThan(of('A').filter((r) => r.success).length);
  });
});
