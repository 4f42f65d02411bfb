import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { listSmallRuns } from '../../src/evidence/small-run.js';
import { parseShard, shardDir } from '../../src/campaign/index.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { smallRunCampaign } from '../../src/campaign/campaign-variants.js';
import { blackoutYaml, rememberColorYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

const lines = (file: string): string[] => readFileSync(file, 'utf8').trimEnd().split('\n');

describe('campaign runner: shards and small runs', () => {
  it('the union of the shards, in seq order, is byte-identical to an unsharded run (donor swaps included)', async () => {
    const whole = sandbox();
    const dir = await runCampaign(
      writeProtocol(whole, 'rc.yaml', rememberColorYaml({ n: 6, sha: whole.checkpointSha })),
      scriptedOptions(whole, 'color', { batchSize: 3 }),
    );
    const expected = lines(join(dir, 'rows/rows.jsonl'));

    const box = sandbox();
    const file = writeProtocol(box, 'rc.yaml', rememberColorYaml({ n: 6, sha: box.checkpointSha }));
    const unit = await precommitCampaign(file, scriptedOptions(box, 'color'));
    const got: string[] = [];
    for (const i of [0, 1, 2]) {
      const spec = parseShard(`${i}/3`);
      await runCampaign(file, { ...scriptedOptions(box, 'color', { batchSize: 2 }), shard: spec });
      const d = shardDir(unit, spec);
      const shard = JSON.parse(readFileSync(join(d, 'shard.json'), 'utf8')) as { complete: boolean; rows: number };
      expect(shard.complete).toBe(true);
      const ls = lines(join(d, 'rows.jsonl'));
      expect(ls.length).toBe(shard.rows);
      got.push(...ls);
    }
    const bySeq = got.map((l) => [(JSON.parse(l) as { seq: number }).seq, l] as const).sort((a, b) => a[0] - b[0]);
    expect(bySeq.map(([, l]) => l)).toEqual(expected);
    // the unit itself is untouched by shards
    expect((await readUnitState(unit)).state).toBe('precommitted');
    expect(existsSync(join(unit, 'rows/rows.jsonl'))).toBe(false);
  });

  it('refuses more shards than units before anything is written (cluster status and merge would refuse the split)', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 2, sha: box.checkpointSha }));
    const err = await runCampaign(file, { ...scriptedOptions(box, 'shell'), shard: parseShard('0/3') }).then(
      () => null,
      (e: unknown) => e as { code?: string; field?: string; message?: string; hint?: string },
    );
    expect([err?.code, err?.field, err?.message, err?.hint]).toEqual([
      'E_USAGE',
      '--shard',
      '3 shards for 2 units: every shard needs at least one unit (a task–seed scope with all its conditions and attempts, never split)',
      "use --shard I/2 or fewer shards (the cluster's status and merge refuse more)",
    ]);
    expect(existsSync(box.campaigns)).toBe(false);
  });

  it('rejects malformed shard specs', () => {
    expect(() => parseShard('3/3')).toThrow(/0 ≤ i < N/);
    expect(() => parseShard('a/b')).toThrow();
    expect(parseShard('0/1')).toEqual({ index: 0, count: 1 });
  });

  it('probe and smoke runs are stored apart from the formal evidence and keep the unit precommitted', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 6, sha: box.checkpointSha }));
    const probe = await smallRunCampaign(file, 'probe', 2, scriptedOptions(box, 'shell'));
    const smoke = await smallRunCampaign(file, 'smoke', 1, scriptedOptions(box, 'shell'));
    const rows = lines(join(probe, 'rows.jsonl')).map(
      (l) => JSON.parse(l) as { seq: number; seed: number; condition: string },
    );
    expect(rows.length).toBe(7 * 2 * 2);
    rows.forEach((r, i) => expect(r.seq).toBe(i));
    expect(new Set(rows.map((r) => r.seed))).toEqual(new Set([610000, 610001]));
    expect(lines(join(smoke, 'rows.jsonl')).length).toBe(7 * 2);
    const unit = join(probe, '..', '..');
    expect((await readUnitState(unit)).state).toBe('precommitted');
    expect(await listSmallRuns(unit, 'probe')).toHaveLength(1);
    expect(existsSync(join(unit, 'rows/rows.jsonl'))).toBe(false);
    // the formal run still runs afterwards
    await runCampaign(file, scriptedOptions(box, 'shell'));
    expect((await readUnitState(unit)).state).toBe('sealed');
    expect(lines(join(unit, 'rows/rows.jsonl')).length).toBe(7 * 6 * 2);
  });
});
