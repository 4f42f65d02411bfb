import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/index.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { precommitFolder, stalePrecommitFolders, targetTaken } from '../../src/campaign/precommit-folder.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

describe('precommit folder: leftovers of gone processes only', () => {
  const folder = 'shellgame-blackout-0123456789ab';
  it('returns the folders of dead pids and keeps live ones and foreign names', () => {
    const names = [
      `.${folder}.tmp-111-a1b2c3`, // dead
      `.${folder}.tmp-222-d4e5f6`, // alive
      `.${folder}.tmp-333-zzzzzz`, // not ours (hex)
      `.${folder}.tmp-444`, // not ours (no suffix)
      `.other-unit.tmp-111-a1b2c3`, // another unit
      folder, // the unit itself
      'seed-registry.json',
    ];
    const alive = (pid: number): boolean => pid === 222;
    expect(stalePrecommitFolders(names, folder, alive)).toEqual([`.${folder}.tmp-111-a1b2c3`]);
  });

  it("names the folder after this process's pid", () => {
    const p = precommitFolder('/c', folder, 4242);
    expect(p).toMatch(new RegExp(`^/c/\\.${folder}\\.tmp-4242-[0-9a-f]{6}$`));
    expect(stalePrecommitFolders([p.slice(3)], folder, () => false)).toEqual([p.slice(3)]);
  });

  it('tells a taken target from other rename failures', () => {
    expect(targetTaken({ code: 'ENOTEMPTY' })).toBe(true);
    expect(targetTaken({ code: 'EEXIST' })).toBe(true);
    expect(targetTaken({ code: 'ENOSPC' })).toBe(false);
    expect(targetTaken(null)).toBe(false);
  });
});

describe('two runs of one new protocol started together', () => {
  it('one precommits and runs; the other is refused with one line and removes its own folder', async () => {
    const box = sandbox('imep-race-');
    const file = writeProtocol(box, 'race.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha }));
    // a leftover of a precommit whose process is gone, and one of a process that runs (this one)
    mkdirSync(box.campaigns, { recursive: true });
    const unitFolder = (await import('../../src/protocol/index.js')).loadProtocolSync(file);
    const folder = `shellgame-blackout-${unitFolder.hash.slice(0, 12)}`;
    const dead = `.${folder}.tmp-2147483646-abcdef`;
    mkdirSync(join(box.campaigns, dead));
    writeFileSync(join(box.campaigns, dead, 'partial'), 'x');

    const results = await Promise.allSettled([
      runCampaign(file, scriptedOptions(box, 'shell')),
      runCampaign(file, scriptedOptions(box, 'shell')),
    ]);
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok.length).toBe(1);
    expect(refused.length).toBe(1);
    const e: unknown = refused[0]?.reason;
    expect(isImepError(e) && e.code).toBe('E_OUT_OF_ORDER');
    expect(String((e as Error).message)).toMatch(/was precommitted by another imep process while this one prepared it/);

    const dir = (ok[0] as PromiseFulfilledResult<string>).value;
    expect((await readUnitState(dir)).state).toBe('sealed');
    expect((await verifyUnit(dir)).ok).toBe(true);
    const rows = readFileSync(join(dir, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');
    expect(rows.length).toBe(7 * 4 * 2);
    // nothing hidden is left: the dead process's leftover and the loser's own folder are gone
    expect(readdirSync(box.campaigns).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});
