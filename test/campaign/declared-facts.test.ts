/**
 * The runner knows a task only by what its environment declares (EnvSpec.fact, EnvSpec.decisionFromStep;
 * src/runtime/task-facts.ts): the lite simulators declare theirs, a spec that claims a method-visible fact is refused
 * on the wire, S/T on an environment without a fact is refused before any row naming the environment, and the
 * protocol rules of S/T at read time (no installAt) and at a point (installAt) are checked.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { envSpecSchema } from '../../src/bridges/op-schemas.js';
import type { EnvSpec, SimEnvironment } from '../../src/runtime/environment.js';
import { factsOf } from '../../src/runtime/task-facts.js';
import { isImepError } from '../../src/core/errors.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { type EnvProvider } from '../../src/campaign/index.js';
import { parseProtocol } from '../../src/protocol/index.js';
import { sandbox, scriptedOptions, writeProtocol } from './helpers.js';

/** A ShellGame protocol of A, S and T swapped at read time (the scripted stand-in checkpoint of the sandbox). */
function readSwapYaml(sha: string, extra = ''): string {
  return `version: 1
id: facts-test
title: ShellGame-lite S and T at read time
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
  - { id: S, kind: S, seed: 7, installation: read${extra} }
  - { id: T, kind: T, seed: 8, installation: read }
waves:
  - { id: 1, conditions: [A, S, T], anchor: A }
estimands:
  - { id: rho_S, kind: rho, reference: A, intervention: S }
  - { id: rho_T, kind: rho, reference: A, intervention: T }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

describe('facts come from what an environment declares', () => {
  it('the lite simulators declare their fact field, domain and decision step', () => {
    expect(factsOf(makeLiteEnv('ShellGameTouch-lite').spec)).toEqual({
      factField: 'ballCup',
      domain: [0, 1, 2],
      decisionFromStep: 5,
    });
    expect(factsOf(makeLiteEnv('RememberColor5-lite').spec)).toEqual({
      factField: 'targetColorIndex',
      domain: [0, 1, 2, 3, 4],
      decisionFromStep: 10,
    });
    expect(factsOf(makeLiteEnv('ChainDrawers-lite').spec)).toEqual({
      factField: null,
      domain: null,
      decisionFromStep: 0,
    });
  });

  it('a spec on the wire may not declare a method-visible fact, a one-value domain, or a decision step past its end', () => {
    const spec = makeLiteEnv('ShellGameTouch-lite').spec;
    expect(envSpecSchema.safeParse(spec).success).toBe(true);
    const bad = (s: unknown): string => {
      const r = envSpecSchema.safeParse(s);
      return r.success ? 'accepted' : r.error.issues.map((i) => i.message).join('; ');
    };
    expect(bad({ ...spec, fact: { field: 'rgb', domain: [0, 1] } })).toMatch(/not evaluator-only/);
    expect(bad({ ...spec, fact: { field: 'ballCup', domain: [0] } })).toMatch(/at least two/);
    expect(bad({ ...spec, fact: { field: 'ballCup', domain: [1, 1] } })).toMatch(/repeat/);
    expect(bad({ ...spec, decisionFromStep: spec.maxSteps + 1 })).toMatch(/exceeds maxSteps/);
  });

  it('S/T on an environment that declares no fact: refused before any row, naming the environment', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'facts.yaml', readSwapYaml(box.checkpointSha));
    // the lite ShellGame, its spec stripped of the fact (as an adapter that declares none would send it)
    const noFact: EnvProvider = (task) => {
      const env = makeLiteEnv(task.envId, task.kwargs);
      const { fact: _f, ...spec } = env.spec;
      return {
        ...env,
        spec: spec as EnvSpec,
        reset: (r) => env.reset(r),
        step: (a) => env.step(a),
        close: () => env.close(),
      } as SimEnvironment;
    };
    let err: unknown = null;
    try {
      await runCampaign(file, scriptedOptions(box, 'shell', { envs: noFact }));
    } catch (e) {
      err = e;
    }
    expect(isImepError(err) && err.code).toBe('E_PROTOCOL_INVALID');
    expect((err as Error).message).toContain(
      'condition "S" swaps donors by fact, but the environment ShellGameTouch-lite (task ShellGameTouch-lite) declares no fact',
    );
    const units = box.campaigns;
    const rows = existsSync(units)
      ? readdirSync(units)
          .map((d) => join(units, d, 'rows/rows.jsonl'))
          .filter((f) => existsSync(f))
      : [];
    for (const f of rows) expect(readFileSync(f, 'utf8')).toBe('');
  });

  it('the same protocol runs on the declared fact: S rows follow A, T rows fail (the scripted policy follows memory)', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'facts.yaml', readSwapYaml(box.checkpointSha));
    const dir = await runCampaign(file, scriptedOptions(box, 'shell'));
    const rows = readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            condition: string;
            seed: number;
            status: string;
            success: boolean | null;
            reads: { covered: boolean | null };
          },
      );
    const a = new Map(rows.filter((r) => r.condition === 'A').map((r) => [r.seed, r.success]));
    const ran = (c: string): typeof rows => rows.filter((r) => r.condition === c && r.status === 'ok');
    expect(ran('S').length).toBeGreaterThan(0);
    expect(ran('T').length).toBeGreaterThan(0);
    for (const r of ran('S')) expect([r.success, r.reads.covered]).toEqual([a.get(r.seed), true]);
    for (const r of ran('T')) expect([r.success, r.reads.covered]).toEqual([false, true]);
  });

  it('protocol rules: S/T at read take no installAt; at a point they need one (the hint names both)', () => {
    const withAt = readSwapYaml('a'.repeat(64), ', installAt: { attempt: 2, before: first-query }');
    expect(() => parseProtocol(withAt, 'p.yaml')).toThrow(/acts at every read, so installAt has no meaning/);
    const noAt = readSwapYaml('a'.repeat(64)).replace(
      '{ id: S, kind: S, seed: 7, installation: read }',
      '{ id: S, kind: S, seed: 7 }',
    );
    let said = '';
    try {
      parseProtocol(noAt, 'p.yaml');
    } catch (e) {
      said = isImepError(e) ? e.oneLine() : String(e);
    }
    expect(said).toMatch(/condition "S" \(S\) needs an installation point.*installation: read to swap at read time/);
  });
});
