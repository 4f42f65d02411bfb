/**
 * The same-operator rule on a merged unit: every operator who ran (or resumed) a shard is on record — in the
 * shard's shard.json before it appends a row, then in the unit's run record ('shard' sessions) and
 * cluster/merge.json — so adjudication under a shard's operator is refused exactly as under the merging
 * one, unless overridden, and the override is recorded.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adjudicateUnit } from '../../src/adjudication/index.js';
import { readAdjudications } from '../../src/evidence/transitions/post-seal-write.js';
import { readRunRecord } from '../../src/evidence/transitions/formal-run.js';
import { runOperators } from '../../src/evidence/records/run-record.js';
import { unitStatus } from '../../src/evidence/status.js';
import { precommitCampaign } from '../../src/campaign/campaign.js';
import { shardDir } from '../../src/campaign/index.js';
import { mergeCluster } from '../../src/cluster/merge.js';
import { runShardOfUnit } from '../../src/cluster/shard-run.js';
import { planCluster } from '../../src/cluster/submit.js';
import { scriptedProvider } from '../campaign/scripted-policies.js';
import { rememberColorYaml, sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';
import { killShardAt } from './support.js';

const quiet = { say: () => undefined };
const read = (f: string): string => readFileSync(f, 'utf8');

describe('cluster: operators of a merged unit', () => {
  it("records every shard's operators; adjudication under a shard's operator is refused unless overridden (recorded)", async () => {
    const box = sandbox('imep-cluster-ops-');
    // precommitted by 'runner-test' (scriptedOptions)
    const unit = await precommitCampaign(
      writeProtocol(box, 'rc.yaml', rememberColorYaml({ n: 4, sha: box.checkpointSha })),
      scriptedOptions(box, 'color'),
    );
    await planCluster(unit, 2);
    const shard = (i: number, operator: string): Promise<unknown> =>
      runShardOfUnit(
        unit,
        { index: i, count: 2 },
        {
          policies: async () => scriptedProvider('color'),
          root: box.root,
          batchSize: 3,
          env: { IMEP_OPERATOR: operator },
          ...quiet,
        },
      );
    await shard(0, 'shard-x');
    // shard 1: run by 'shard-y', cut short as a killed task leaves it, resumed by 'shard-z'
    await shard(1, 'shard-y');
    const d1 = shardDir(unit, { index: 1, count: 2 });
    killShardAt(d1, 2);
    await shard(1, 'shard-z');
    const d0 = shardDir(unit, { index: 0, count: 2 });
    expect((JSON.parse(read(join(d0, 'shard.json'))) as { operators: unknown }).operators).toEqual([
      { id: 'shard-x', source: 'env' },
    ]);
    expect((JSON.parse(read(join(d1, 'shard.json'))) as { operators: unknown }).operators).toEqual([
      { id: 'shard-y', source: 'env' },
      { id: 'shard-z', source: 'env' },
    ]);

    await mergeCluster(unit, { ...quiet, operator: { id: 'merger', source: 'explicit' } });
    const run = await readRunRecord(unit);
    expect(run.sessions.map((s) => [s.action, s.operator.id])).toEqual([
      ['start', 'merger'],
      ['shard', 'shard-x'],
      ['shard', 'shard-y'],
      ['shard', 'shard-z'],
    ]);
    expect(runOperators(run)).toEqual(['merger', 'shard-x', 'shard-y', 'shard-z']);
    const merge = JSON.parse(read(join(unit, 'cluster/merge.json'))) as {
      shards: { index: number; operators: string[] }[];
    };
    expect(merge.shards.map((s) => s.operators)).toEqual([['shard-x'], ['shard-y', 'shard-z']]);
    expect((await unitStatus(unit)).ranBy).toEqual(['merger', 'shard-x', 'shard-y', 'shard-z']);

    for (const id of ['shard-x', 'shard-z', 'merger']) {
      await expect(adjudicateUnit(unit, { operator: { id, source: 'env' } })).rejects.toMatchObject({
        code: 'E_SAME_OPERATOR',
        message: expect.stringContaining(`operator '${id}' ran the conditions of unit`),
      });
    }
    const r = await adjudicateUnit(unit, {
      operator: { id: 'shard-x', source: 'env' },
      allowSameOperator: { reason: 'one-person lab, reviewed by hand' },
    });
    expect(r.adjudication.ranBy).toEqual(['merger', 'shard-x', 'shard-y', 'shard-z']);
    const [record] = await readAdjudications(unit);
    expect(record?.ranBy).toEqual(['merger', 'shard-x', 'shard-y', 'shard-z']);
    expect(record?.sameOperatorOverride).toEqual({
      by: 'shard-x',
      reason: 'one-person lab, reviewed by hand',
      ranBy: ['merger', 'shard-x', 'shard-y', 'shard-z'],
    });
  });

  it('a shard operator who did not merge and an outside reviewer: only the reviewer may adjudicate without an override', async () => {
    const box = sandbox('imep-cluster-ops2-');
    const unit = await precommitCampaign(
      writeProtocol(box, 'rc.yaml', rememberColorYaml({ n: 3, sha: box.checkpointSha })),
      scriptedOptions(box, 'color'),
    );
    await planCluster(unit, 2);
    for (const i of [0, 1]) {
      await runShardOfUnit(
        unit,
        { index: i, count: 2 },
        {
          policies: async () => scriptedProvider('color'),
          root: box.root,
          batchSize: 3,
          env: { IMEP_OPERATOR: `gpu-task-${i}` },
          ...quiet,
        },
      );
    }
    await mergeCluster(unit, { ...quiet, operator: { id: 'merger', source: 'explicit' } });
    await expect(adjudicateUnit(unit, { operator: { id: 'gpu-task-1', source: 'env' } })).rejects.toThrow(
      /operator 'gpu-task-1' ran the conditions/,
    );
    const ok = await adjudicateUnit(unit, { operator: { id: 'reviewer', source: 'env' } });
    expect(ok.adjudication.ranBy).toEqual(['gpu-task-0', 'gpu-task-1', 'merger']);
    expect((await readAdjudications(unit))[0]?.sameOperatorOverride).toBeNull();
  });
});
