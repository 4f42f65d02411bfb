/**
 * A policy runtime added from test code alone (no edit under src/): `runtime: toy-shell` registered with
 * registerPolicyRuntimeKind, its own `policy:` field parsed and checked by the protocol, opened by the one assembly
 * step and run through the seal — its rows equal, seq by seq, those of the same scripted policy handed to the
 * runner directly (CampaignOptions.policies). docs/extending.md "Add a policy runtime" walks through the same steps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runCampaign } from '../../src/campaign/campaign.js';
import { registerPolicyRuntimeKind, type PolicyRuntimeKind } from '../../src/campaign/index.js';
import { isImepError } from '../../src/core/index.js';
import { loadProtocol } from '../../src/protocol/index.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';
import { ShellScriptedPolicy } from '../campaign/scripted-policies.js';

interface Row {
  seq: number;
  condition: string;
  seed: number;
  [k: string]: unknown;
}
const rowsOf = (unit: string): Row[] =>
  readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

const opened: string[] = [];
const toyShell: PolicyRuntimeKind = {
  name: 'toy-shell',
  summary: 'the runner tests’ scripted ShellGame policy, as a registered runtime',
  fields: { decisionFrom: z.number().int().min(0).describe('the step from which its reads are decision queries') },
  checkProtocol(protocol, issues) {
    if (protocol.memory.bank !== 'episode-local')
      issues.push(['memory', 'bank'], 'toy-shell keeps an episode-local bank', 'register memory.bank: episode-local');
  },
  preflight: () => [],
  memoryAccess: () => ({ installable: false, name: 'toy-shell (an episode bank)' }),
  open(protocol) {
    const from = (protocol.policy as unknown as { decisionFrom: number }).decisionFrom;
    opened.push(`decisionFrom ${from}`);
    return Promise.resolve({
      description: `toy-shell (decisions from step ${from})`,
      policyFor: (_task, batch) => Promise.resolve(new ShellScriptedPolicy(batch, from)),
      release: () => Promise.resolve(),
    });
  },
  describe: (protocol) =>
    `toy-shell, decisions from step ${(protocol.policy as unknown as { decisionFrom: number }).decisionFrom}`,
};

/** The blackout ladder with `policy: { runtime: toy-shell, … }` instead of its checkpoint. */
function toyYaml(n: number, policy: string): string {
  return blackoutYaml({ n, sha: '0'.repeat(64), id: 'toy-runtime' }).replace(
    /checkpoint:\n  path: \S+\n  file: \S+\n  sha256: \S+\n/,
    `policy: ${policy}\n`,
  );
}

describe('a policy runtime registered from test code', () => {
  let unregister: () => void = () => undefined;
  beforeAll(() => {
    unregister = registerPolicyRuntimeKind(toyShell);
  });
  afterAll(() => unregister());

  it('runs a campaign whose rows equal those of the same policy given to the runner directly', async () => {
    const box = sandbox('imep-toy-runtime-');
    const file = writeProtocol(box, 'toy.yaml', toyYaml(6, '{ runtime: toy-shell, decisionFrom: 5 }'));
    const { policies: _own, ...viaKind } = scriptedOptions(box, 'shell');
    const unit = await runCampaign(file, viaKind);
    expect(opened).toEqual(['decisionFrom 5']);
    const frozen = JSON.parse(readFileSync(join(unit, 'protocol.json'), 'utf8')) as { policy: unknown };
    expect(frozen.policy).toEqual({ runtime: 'toy-shell', decisionFrom: 5 });
    const precommit = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as {
      checkpointHashes: Record<string, string>;
    };
    expect(precommit.checkpointHashes).toEqual({}); // nothing a checkpoint binds

    // the same scripted policy through CampaignOptions.policies, on the checkpoint protocol
    const other = sandbox('imep-toy-runtime-ref-');
    const refFile = writeProtocol(
      other,
      'ref.yaml',
      blackoutYaml({ n: 6, sha: other.checkpointSha, id: 'toy-runtime-ref' }),
    );
    const ref = await runCampaign(refFile, scriptedOptions(other, 'shell'));
    const a = rowsOf(unit);
    const b = rowsOf(ref);
    expect(a.length).toBe(6 * 7 * 2); // 6 seeds × 7 condition runs (two waves) × 2 attempts
    expect(a.map((r) => r.seq)).toEqual(b.map((r) => r.seq));
    const same = (r: Row): unknown => ({ ...r, protocol: undefined, unit: undefined, campaign: undefined });
    expect(a.map(same)).toEqual(b.map(same));
    // N_blk leaves the scripted policy memoryless: somewhere its outcome differs from A's (the reads mattered)
    const success = (rows: Row[], c: string): unknown[] =>
      rows.filter((r) => r.condition === c).map((r) => r['success']);
    expect(success(a, 'N_blk')).not.toEqual(success(a, 'A'));
  });

  it('checks its own fields and rules, and names an unregistered runtime with the registered ones', async () => {
    const box = sandbox('imep-toy-runtime-bad-');
    const bad = writeProtocol(box, 'bad.yaml', toyYaml(2, '{ runtime: toy-shell, decisionFrom: -1 }'));
    const line = async (f: string): Promise<string> =>
      loadProtocol(f).then(
        () => 'loaded',
        (x: unknown) => (isImepError(x) ? x.oneLine() : String(x)),
      );
    expect(await line(bad)).toMatch(
      /bad\.yaml:\d+:\d+: policy\.decisionFrom: must be ≥ 0, got -1 — decisionFrom: the step from which its reads are decision queries/,
    );
    const unknown = writeProtocol(box, 'unknown.yaml', toyYaml(2, '{ runtime: toy-shel, decisionFrom: 5 }'));
    expect(await line(unknown)).toMatch(
      /policy\.runtime: unknown policy runtime "toy-shel" — did you mean "toy-shell"\? registered policy runtimes: checkpoint, remote, openpi-websocket, vla-eval, toy-shell/,
    );
    const structured = writeProtocol(
      box,
      'structured.yaml',
      toyYaml(2, '{ runtime: toy-shell, decisionFrom: 5 }').replace(
        /memory:\n(  .*\n)+/,
        'memory: { bank: structured-pcmb, capacity: 16, k: 4, gate: 0.45, persistence: within-episode }\n',
      ),
    );
    expect(await line(structured)).toMatch(/memory\.bank: toy-shell keeps an episode-local bank/);
    // a policy block that is not a map still says what the block is (the union of the registered runtimes)
    const scalar = writeProtocol(box, 'scalar.yaml', toyYaml(2, 'toy-shell'));
    expect(await line(scalar)).toMatch(
      /policy: expected a map, got "toy-shell" — policy: the policy, run by a registered policy runtime instead of a checkpoint: \{ runtime: checkpoint \} or \{ runtime: remote, name \} or \{ runtime: openpi-websocket, endpoint, observation, action \} or \{ runtime: vla-eval, endpoint, observation, action \} or \{ runtime: toy-shell, decisionFrom \}/,
    );
  });
});
