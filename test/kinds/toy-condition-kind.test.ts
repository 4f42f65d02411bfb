/**
 * A condition kind registered from test code alone (no edit under src/): "Z", which zeroes every float leaf on each
 * read. The protocol parses it through the registered face (its own field and default), the cross-checks ask it
 * where it acts, the runner installs it through the one factory, and its rows show what it did. An unregistered
 * kind is refused at conditions[i].kind, listing the registered kinds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runCampaign } from '../../src/campaign/campaign.js';
import { ProtocolError, parseProtocol } from '../../src/protocol/index.js';
import type { FloatTensor } from '../../src/core/index.js';
import {
  conditionKinds,
  readHook,
  registerConditionKind,
  type ConditionKind,
  type LeafOperator,
} from '../../src/interventions/index.js';
import { sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';

/** Every element +0 (all-zero bits, in any float dtype), a new buffer of the same dtype and shape. */
function zeroLeaf(leaf: FloatTensor): FloatTensor {
  const data = leaf.data.slice();
  data.fill(0);
  return { ...leaf, data } as FloatTensor;
}

const zeroOperator: LeafOperator = {
  condition: 'Z',
  params: {},
  usesPrng: false,
  apply: (leaf, _prng, stats) => {
    stats.nonFinite += 0;
    return zeroLeaf(leaf);
  },
};

const zeroKind: ConditionKind = {
  name: 'Z',
  summary: 'Z: zero every float leaf on each read',
  fields: {
    reads: z.enum(['every']).default('every').describe('which reads are zeroed: every one'),
  },
  roles: ['substituting'],
  acts: () => 'read',
  spec: () => ({ kind: 'Z' }),
  mode: () => ({ mode: 'per-read' }),
  operator: () => ({ perRead: readHook(zeroOperator) }),
};

function yaml(sha: string, kind = 'Z'): string {
  return `version: 1
id: toy-condition-kind
title: ShellGame-lite under a toy condition kind
simulator: { kind: lite }
envs:
  - { id: ShellGameTouch-lite, kwargs: { blackoutFromStep: 6, strict: true } }
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${sha} }
memory: { bank: episode-local, banks: [perceptual, cognitive], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 640000, end: 640005 }] }
n: 6
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: Z, kind: ${kind} }
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

/** The one-line refusal `fn` throws (a ProtocolError). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    return (e as ProtocolError).oneLine();
  }
  throw new Error('not refused');
}

interface Row {
  readonly condition: string;
  readonly seed: number;
  readonly status: string;
  readonly success: boolean | null;
  readonly reads: { readonly total: number; readonly withHistory: number; readonly substituted: number };
  readonly intervention?: { readonly spec?: unknown } | null;
}

describe('a condition kind registered from test code', () => {
  let unregister: () => void = () => undefined;
  beforeAll(() => {
    unregister = registerConditionKind(zeroKind);
  });
  afterAll(() => unregister());

  it('is parsed through its face: its own field with its default, in the parsed protocol', () => {
    const { protocol } = parseProtocol(yaml('a'.repeat(64)), 'toy.yaml');
    expect(protocol.conditions[1]).toEqual({ id: 'Z', kind: 'Z', reads: 'every' });
    const bad = yaml('a'.repeat(64)).replace('kind: Z }', 'kind: Z, reads: some }');
    expect(refusal(() => parseProtocol(bad, 'toy.yaml'))).toMatch(
      /conditions\[1\]\.reads: "some" is not allowed here — use one of: every/,
    );
  });

  it('runs in a lite campaign, and its rows show every read with history zeroed (and the scripted policy misled)', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'toy.yaml', yaml(box.checkpointSha));
    const dir = await runCampaign(file, scriptedOptions(box, 'shell'));
    const rows = readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    const of = (c: string): Row[] => rows.filter((r) => r.condition === c && r.status === 'ok');
    expect(of('A')).toHaveLength(6);
    expect(of('Z')).toHaveLength(6);
    for (const r of of('A')) expect(r.reads.substituted).toBe(0);
    for (const r of of('Z')) {
      expect(r.reads.withHistory).toBeGreaterThan(0);
      expect(r.reads.substituted).toBe(r.reads.withHistory);
    }
    // the scripted policy acts on what it reads: with every latent zeroed it no longer finds the ball every time
    const a = of('A').filter((r) => r.success === true).length;
    const zeroed = of('Z').filter((r) => r.success === true).length;
    expect(a).toBe(6);
    expect(zeroed).toBeLessThan(a);
  });
});

describe('an unregistered condition kind', () => {
  it('is refused at conditions[i].kind, naming the registered kinds', () => {
    expect(conditionKinds.has('Z')).toBe(false);
    const line = refusal(() => parseProtocol(yaml('a'.repeat(64), 'Zz'), 'toy.yaml'));
    expect(line).toMatch(/^toy\.yaml:\d+:\d+: conditions\[1\]\.kind: unknown kind "Zz"/);
    expect(line).toContain(`use one of: ${conditionKinds.names().join(', ')}`);
    expect(conditionKinds.names()).toEqual(['A', 'N', 'O', 'C', 'U', 'S_pi', 'T_mu', 'S', 'T']);
  });
});
