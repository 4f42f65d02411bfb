/**
 * Status and resubmission against a scripted SLURM (no cluster needed): task states from squeue, the rest
 * from the shards' own files; submit runs only the shards that are neither complete nor queued.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { precommitCampaign } from '../../src/campaign/campaign.js';
import { shardDir } from '../../src/campaign/index.js';
import { readJobs } from '../../src/cluster/jobs.js';
import { runShardOfUnit } from '../../src/cluster/shard-run.js';
import { Slurm } from '../../src/cluster/slurm.js';
import { clusterStatus, formatClusterStatus } from '../../src/cluster/status.js';
import { submitCluster } from '../../src/cluster/submit.js';
import { scriptedProvider } from '../campaign/scripted-policies.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';
import { fakeSlurm, killShardAt } from './support.js';

const quiet = { say: () => undefined };

async function setup(): Promise<{ unit: string; run: (i: number) => Promise<void> }> {
  const box = sandbox('imep-cluster-status-');
  const unit = await precommitCampaign(
    writeProtocol(box, 'p.yaml', blackoutYaml({ n: 8, sha: box.checkpointSha })),
    scriptedOptions(box, 'shell'),
  );
  const run = async (i: number): Promise<void> => {
    await runShardOfUnit(
      unit,
      { index: i, count: 4 },
      { policies: async () => scriptedProvider('shell'), root: box.root, ...quiet },
    );
  };
  return { unit, run };
}

describe('cluster: status and resubmission', () => {
  it('reads squeue for queued/running/ended tasks and the shard files for rows; resubmits only what needs it', async () => {
    const { unit, run } = await setup();
    let queue = '';
    let next = 50;
    const { slurm, calls } = fakeSlurm((program) => {
      if (program === 'sbatch') return { stdout: `${next++}\n` };
      if (program === 'squeue') return { stdout: queue };
      if (program === 'sacct') return { stdout: 'Slurm accounting storage is disabled\n' };
      return undefined;
    });
    const first = await submitCluster(unit, { count: 4, slurm, ...quiet, launcher: ['/usr/bin/node', '/x/main.js'] });
    expect(first).toMatchObject({ jobId: '50', shards: [0, 1, 2, 3] });
    expect(calls.find((c) => c[0] === 'sbatch')).toEqual([
      'sbatch',
      '--parsable',
      join(unit, 'cluster/submit-001.sbatch'),
    ]);
    expect(readFileSync(join(unit, 'cluster/submit-001.sbatch'), 'utf8')).toBe(first.script);

    // shard 0 done; shard 1 killed after a few rows; shard 2 still queued; shard 3 running
    await run(0);
    await run(1);
    const d1 = shardDir(unit, { index: 1, count: 4 });
    killShardAt(d1, 5);
    queue = ['50_0|COMPLETED|None', '50_1|CANCELLED|None', '50_2|PENDING|Resources', '50_3|RUNNING|None', ''].join(
      '\n',
    );
    const s = await clusterStatus(unit, { slurm });
    expect(s.source).toBe('squeue');
    expect(s.shards.map((x) => [x.state, x.rows, x.planned])).toEqual([
      ['done', 28, 28],
      ['failed', 5, 28],
      ['pending', 0, 28],
      ['running', 0, 28],
    ]);
    const text = formatClusterStatus(s).join('\n');
    expect(text).toMatch(
      /shard 1\/4: failed +5\/28 rows {2}job 50_1 CANCELLED {2}\(cancelled before the shard completed\)/,
    );
    expect(text).toMatch(/shard 2\/4: pending .*\(Resources\)/);
    expect(text).toMatch(/next: imep cluster submit .* --shards 4/);

    const again = await submitCluster(unit, { count: 4, slurm, ...quiet, launcher: ['/usr/bin/node', '/x/main.js'] });
    expect(again).toMatchObject({ jobId: '51', shards: [1], complete: [0], active: [2, 3] });
    expect(again.script).toContain('#SBATCH --array=1\n');
    expect((await readJobs(unit)).map((j) => [j.jobId, j.shards, j.script])).toEqual([
      ['50', [0, 1, 2, 3], 'submit-001.sbatch'],
      ['51', [1], 'submit-002.sbatch'],
    ]);
    // the controller forgot the jobs (aged out): shards not complete read as failed
    queue = '';
    const gone = await clusterStatus(unit, {
      slurm: fakeSlurm((p) =>
        p === 'squeue' ? { code: 1, stderr: 'slurm_load_jobs error: Invalid job id specified' } : { code: 1 },
      ).slurm,
    });
    expect(gone.shards.map((x) => x.state)).toEqual(['done', 'failed', 'failed', 'failed']);
    expect(gone.shards[1]).toMatchObject({
      job: '51_1',
      slurmState: null,
      note: 'the task ended without completing the shard',
    });
    // all done → merge next; nothing left to submit
    for (const i of [1, 2, 3]) await run(i);
    const done = await clusterStatus(unit, { slurm });
    expect(done.shards.every((x) => x.state === 'done')).toBe(true);
    expect(done.next).toMatch(/^imep cluster merge /);
    const none: string[] = [];
    expect(
      (await submitCluster(unit, { count: 4, slurm, say: (l) => none.push(l), launcher: ['/n', '/m'] })).jobId,
    ).toBeNull();
    expect(none.join('\n')).toMatch(/all 4 shards are complete; next: imep cluster merge/);
  });

  it('parses sbatch, squeue and sacct output, and reports SLURM failures in one line', async () => {
    const s = new Slurm(async (program) => {
      if (program === 'sbatch') return { code: 0, stdout: '123;cluster\n', stderr: '' };
      if (program === 'sacct') return { code: 0, stdout: '123_0|COMPLETED\n123_1|CANCELLED by 0\n', stderr: '' };
      return { code: 0, stdout: '123_2|PENDING|Priority\n', stderr: '' };
    });
    expect(await s.sbatch('/x.sbatch')).toBe('123');
    expect(await s.squeue(['123'])).toEqual([{ jobId: '123', task: 2, state: 'PENDING', reason: 'Priority' }]);
    expect(await s.sacct(['123'])).toEqual([
      { jobId: '123', task: 0, state: 'COMPLETED', reason: '' },
      { jobId: '123', task: 1, state: 'CANCELLED', reason: '' },
    ]);
    const bad = new Slurm(async () => ({
      code: 1,
      stdout: '',
      stderr: 'sbatch: error: invalid partition specified: nope\n',
    }));
    await expect(bad.sbatch('/x.sbatch')).rejects.toThrow(
      /^sbatch refused the job: sbatch: error: invalid partition specified: nope$/,
    );
    const missing = new Slurm(async () => ({ code: 127, stdout: '', stderr: '' }));
    await expect(missing.sbatch('/x.sbatch')).rejects.toThrow(/sbatch is not installed/);
    expect(await missing.available()).toBe(false);
  });
});
