/**
 * `imep cluster …` through the CLI (the test entry test/cluster/cli.ts; no SLURM needed): plan, the dry-run
 * script, and one-line refusals with their exit codes.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { liteCheckpointSha } from '../campaign/cli-support.js';
import { blackoutYaml } from '../campaign/helpers.js';
import { cli } from './support.js';

describe('imep cluster (CLI)', () => {
  it('plan, submit --dry-run, and one-line refusals', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-cluster-cli-'));
    writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n: 5, sha: liteCheckpointSha(), strict: false }));
    const pre = await cli(['campaign', 'precommit', 'p.yaml'], dir);
    expect(pre.code, pre.stderr).toBe(0);
    const unit = join(
      dir,
      'campaigns',
      readdirSync(join(dir, 'campaigns')).find((n) => n.startsWith('shellgame-blackout-'))!,
    );

    const plan = await cli(['cluster', 'plan', unit, '--shards', '2'], dir);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout.split('\n').slice(0, 3)).toEqual([
      expect.stringMatching(
        /^2 shards of 5 units \(70 rows\), rule scope-ordinal-mod-n; shard plan [0-9a-f]{12}… in .*cluster\/shards\.json$/,
      ),
      expect.stringMatching(/^shard 0\/2: 3 units, 42 rows, manifest [0-9a-f]{16}$/),
      expect.stringMatching(/^shard 1\/2: 2 units, 28 rows, manifest [0-9a-f]{16}$/),
    ]);
    const dry = await cli(
      ['cluster', 'submit', unit, '--shards', '2', '--gpus-per-task', '1', '--time', '30', '--dry-run'],
      dir,
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^#!\/bin\/bash\n/);
    expect(dry.stdout).toContain('#SBATCH --array=0-1\n#SBATCH --ntasks=1\n');
    expect(dry.stdout).toContain('#SBATCH --gres=gpu:1\n');
    expect(dry.stdout).toContain(`cluster shard-run ${unit} --shard "\${SLURM_ARRAY_TASK_ID}/2"`);

    const cases = [
      [
        ['cluster', 'plan', unit, '--shards', '6'],
        2,
        /6 shards for 5 units: every shard needs at least one unit .* — use --shards 5 or fewer$/,
      ],
      [['cluster', 'plan', unit, '--shards', '0'], 2, /--shards: must be at least 1$/],
      [
        ['cluster', 'submit', unit, '--shards', '2', '--time', '2h', '--dry-run'],
        2,
        /--time: '2h' is not a SLURM time limit/,
      ],
      [
        ['cluster', 'merge', unit],
        2,
        /2 of 2 shards are not complete: shard 0 \(never run\), shard 1 \(never run\); merge waits for every shard/,
      ],
      [['cluster', 'status', dir], 2, /not an evidence unit \(no unit\.json\)/],
      [['cluster', 'shard-run', unit, '--shard', '2/2'], 2, /expected i\/N with 0 ≤ i < N/],
    ] as const;
    const results = await Promise.all(cases.map(([args]) => cli(args, dir)));
    for (const [i, [args, code, re]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^imep: /);
      expect(lines[0]).toMatch(re);
    }
  }, 120_000);
});
