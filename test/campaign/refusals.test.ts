import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import { seal } from '../../src/evidence/transitions/seal.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

async function refusal(p: Promise<unknown>): Promise<{ code: string; line: string }> {
  try {
    await p;
  } catch (e) {
    if (isImepError(e)) return { code: e.code, line: e.oneLine() };
    throw e;
  }
  throw new Error('expected a refusal');
}

const entries = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);

describe('campaign runner refusals (nothing half-written)', () => {
  it('refuses overlapping allowlists before anything is written (E_ALLOWLIST_OVERLAP)', async () => {
    const box = sandbox();
    const text = blackoutYaml({ n: 4, sha: box.checkpointSha }).replace(
      'evaluatorOnly: [success,',
      'evaluatorOnly: [rgb, success,',
    );
    const r = await refusal(runCampaign(writeProtocol(box, 'p.yaml', text), scriptedOptions(box, 'shell')));
    expect(r.code).toBe('E_ALLOWLIST_OVERLAP');
    expect(r.line).toMatch(/"rgb"/);
    expect(entries(box.campaigns)).toEqual([]);
  });

  it('refuses a missing or mismatching checkpoint before anything is written', async () => {
    const box = sandbox();
    const missing = blackoutYaml({ n: 4, sha: box.checkpointSha }).replace(
      'path: checkpoints/lite-memvla',
      'path: checkpoints/nowhere',
    );
    const r1 = await refusal(runCampaign(writeProtocol(box, 'a.yaml', missing), scriptedOptions(box, 'shell')));
    expect(r1.code).toBe('E_CHECKPOINT_MISSING');
    const r2 = await refusal(
      runCampaign(
        writeProtocol(box, 'b.yaml', blackoutYaml({ n: 4, sha: 'ab'.repeat(32) })),
        scriptedOptions(box, 'shell'),
      ),
    );
    expect(r2.code).toBe('E_CHECKPOINT_MISMATCH');
    const r3 = await refusal(
      runCampaign(writeProtocol(box, 'c.yaml', blackoutYaml({ n: 4, sha: 'pending' })), scriptedOptions(box, 'shell')),
    );
    expect(r3.code).toBe('E_CHECKPOINT_MISSING');
    expect(entries(box.campaigns)).toEqual([]);
  });

  it('refuses a protocol edited after precommit (E_PROTOCOL_FROZEN) and never makes a second unit', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha }));
    const dir = await precommitCampaign(file, scriptedOptions(box, 'shell'));
    expect((await readUnitState(dir)).state).toBe('precommitted');
    writeFileSync(file, readFileSync(file, 'utf8').replace('margin: 0.10', 'margin: 0.12'));
    const r = await refusal(runCampaign(file, scriptedOptions(box, 'shell')));
    expect(r.code).toBe('E_PROTOCOL_FROZEN');
    expect(r.line).toMatch(/amend/);
    expect(entries(box.campaigns).filter((n) => n.startsWith('shellgame-blackout-'))).toEqual([dir.split('/').pop()]);
  });

  it('registers seed bands: an overlapping campaign is refused, a declared reuse is not, the same campaign again is not an overlap', async () => {
    const box = sandbox();
    const a = writeProtocol(box, 'a.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha }));
    await precommitCampaign(a, scriptedOptions(box, 'shell'));
    await precommitCampaign(a, scriptedOptions(box, 'shell'));
    const registry = JSON.parse(readFileSync(join(box.campaigns, 'seed-registry.json'), 'utf8')) as {
      campaigns: Record<string, unknown>;
    };
    expect(Object.keys(registry.campaigns)).toEqual(['shellgame-blackout']);
    const b = writeProtocol(
      box,
      'b.yaml',
      blackoutYaml({ n: 4, sha: box.checkpointSha, start: 610002, id: 'other-ladder' }),
    );
    const r = await refusal(precommitCampaign(b, scriptedOptions(box, 'shell')));
    expect(r.code).toBe('E_SEED_OVERLAP');
    expect(entries(box.campaigns).filter((n) => n.startsWith('other-ladder'))).toEqual([]);
    const text = readFileSync(b, 'utf8').replace(
      '    - { start: 610002, end: 610005 }',
      '    - { start: 610002, end: 610005 }\n  reuse: [{ campaign: shellgame-blackout, reason: "same seeds on purpose" }]',
    );
    await precommitCampaign(writeProtocol(box, 'c.yaml', text), scriptedOptions(box, 'shell'));
    expect(entries(box.campaigns).filter((n) => n.startsWith('other-ladder')).length).toBe(1);
  });

  it('refuses a condition the runtime cannot carry out (O without an oracle source) before anything is written', async () => {
    const box = sandbox();
    const text = blackoutYaml({ n: 4, sha: box.checkpointSha })
      .replace(
        '  - { id: C, kind: C, description: "C_det — exact replicate of the anchor" }',
        '  - { id: C, kind: C, description: "C_det — exact replicate of the anchor" }\n  - { id: O, kind: O, provides: fact }',
      )
      .replace('conditions: [A, N_blk, C]', 'conditions: [A, N_blk, C, O]');
    const r = await refusal(runCampaign(writeProtocol(box, 'o.yaml', text), scriptedOptions(box, 'shell')));
    expect(r.code).toBe('E_PROTOCOL_INVALID');
    expect(r.line).toMatch(/oracle/);
    expect(entries(box.campaigns)).toEqual([]);
  });

  it('refuses out-of-order steps: sealing a unit that has not run', async () => {
    const box = sandbox();
    const dir = await precommitCampaign(
      writeProtocol(box, 'p.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha })),
      scriptedOptions(box, 'shell'),
    );
    const r = await refusal(seal(dir));
    expect(r.code).toBe('E_OUT_OF_ORDER');
    expect(r.line).toMatch(/imep campaign run/);
  });
});
