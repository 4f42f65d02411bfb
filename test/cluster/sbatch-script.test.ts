import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { precommitCampaign } from '../../src/campaign/campaign.js';
import { checkTime, sbatchScript, shellQuote, type SbatchInput } from '../../src/cluster/sbatch-script.js';
import { submitCluster } from '../../src/cluster/submit.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';
import { fakeSlurm } from './support.js';

const base: SbatchInput = {
  unitDir: '/data/campaigns/p-0123456789ab',
  logsDir: '/data/campaigns/p-0123456789ab.shards/logs',
  chdir: '/data',
  protocolId: 'p',
  protocolHash: '0123456789ab'.padEnd(64, '0'),
  planHash: 'f'.repeat(64),
  shardPlanSha256: 'e'.repeat(64),
  count: 4,
  shards: [0, 1, 2, 3],
  launcher: ['/usr/bin/node', '/opt/imep/dist/cli/main.js'],
  partition: null,
  gpusPerTask: 0,
  cpusPerTask: 1,
  time: null,
  batch: null,
};

describe('cluster: the sbatch array script', () => {
  it('one array task per shard, logs under the unit, the shard run with absolute paths', () => {
    const s = sbatchScript(base);
    const lines = s.split('\n');
    expect(lines[0]).toBe('#!/bin/bash');
    expect(lines).toContain('#SBATCH --array=0-3');
    expect(lines).toContain('#SBATCH --job-name=imep-p');
    expect(lines).toContain('#SBATCH --output=/data/campaigns/p-0123456789ab.shards/logs/shard-%a-of-4.job-%A.out');
    expect(lines).toContain('#SBATCH --error=/data/campaigns/p-0123456789ab.shards/logs/shard-%a-of-4.job-%A.err');
    expect(lines).toContain('#SBATCH --chdir=/data');
    expect(s).not.toMatch(/--gres|--partition|--time/);
    expect(lines).toContain(
      'exec /usr/bin/node /opt/imep/dist/cli/main.js cluster shard-run /data/campaigns/p-0123456789ab --shard "${SLURM_ARRAY_TASK_ID}/4"',
    );
    // every #SBATCH line comes before the first command
    const firstCommand = lines.findIndex((l) => l !== '' && !l.startsWith('#'));
    expect(lines.slice(firstCommand).some((l) => l.startsWith('#SBATCH'))).toBe(false);
  });

  it('GPUs, partition, time, batch and a resubmission subset', () => {
    const s = sbatchScript({
      ...base,
      gpusPerTask: 2,
      partition: 'gpu-a100',
      time: '01:30:00',
      batch: 8,
      shards: [1, 3],
      cpusPerTask: 4,
    });
    expect(s).toContain('#SBATCH --gres=gpu:2\n');
    expect(s).toContain('#SBATCH --partition=gpu-a100\n');
    expect(s).toContain('#SBATCH --time=01:30:00\n');
    expect(s).toContain('#SBATCH --array=1,3\n');
    expect(s).toContain('#SBATCH --cpus-per-task=4\n');
    expect(s).toMatch(/--shard "\$\{SLURM_ARRAY_TASK_ID\}\/4" --batch 8\n$/);
  });

  it('refuses bad options and paths SLURM cannot carry; quotes the command', () => {
    expect(() => checkTime('1h')).toThrow(/not a SLURM time limit/);
    for (const t of ['90', '01:30:00', '1-00:00:00', '2-12']) expect(checkTime(t)).toBe(t);
    expect(() => sbatchScript({ ...base, partition: 'a b' })).toThrow(/not a partition name/);
    expect(() => sbatchScript({ ...base, logsDir: '/my campaigns/x.shards/logs' })).toThrow(/whitespace/);
    expect(sbatchScript({ ...base, unitDir: '/d/100%', logsDir: '/d/100%.shards/logs' })).toContain(
      '--output=/d/100%%.shards/logs/',
    );
    // --chdir takes no filename patterns (man sbatch): its '%' stays single, or SLURM chdirs to a folder that does not exist
    const inPercent = sbatchScript({ ...base, chdir: '/runs/100%d' }).split('\n');
    expect(inPercent).toContain('#SBATCH --chdir=/runs/100%d');
    expect(() => sbatchScript({ ...base, chdir: '/my runs' })).toThrow(/whitespace/);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('/usr/bin/node')).toBe('/usr/bin/node');
  });

  it('submit --dry-run prints the script for the unit and writes and submits nothing', async () => {
    const box = sandbox('imep-cluster-dry-');
    const unit = await precommitCampaign(
      writeProtocol(box, 'p.yaml', blackoutYaml({ n: 6, sha: box.checkpointSha })),
      scriptedOptions(box, 'shell'),
    );
    const before = readdirSync(unit).sort();
    const printed: string[] = [];
    const { slurm, calls } = fakeSlurm(() => ({ code: 127 }));
    const r = await submitCluster(unit, {
      count: 4,
      gpusPerTask: 1,
      dryRun: true,
      slurm,
      say: (l) => printed.push(l),
      launcher: ['/usr/bin/node', '/x/main.js'],
      chdir: box.dir,
    });
    expect(r.jobId).toBeNull();
    expect(printed.join('\n')).toBe(r.script.trimEnd());
    expect(r.script).toContain('#SBATCH --array=0-3\n');
    expect(r.script).toContain('#SBATCH --gres=gpu:1\n');
    expect(r.script).toContain(`cluster shard-run ${unit} --shard`);
    expect(r.script).toContain(`--output=${unit}.shards/logs/shard-%a-of-4.job-%A.out`);
    expect(calls.filter((c) => c[0] === 'sbatch')).toEqual([]);
    expect(readdirSync(unit).sort()).toEqual(before);
    expect(existsSync(join(unit, 'cluster'))).toBe(false);
    await expect(submitCluster(unit, { count: 7, dryRun: true, slurm, say: () => undefined })).rejects.toThrow(
      /7 shards for 6 units/,
    );
  });
});
