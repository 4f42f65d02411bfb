/**
 * IMEP on a real (one-node) SLURM cluster: a 4-shard array of a small lite campaign (ShellGame-lite
 * blackout ladder, 8 units × 7 conditions × 2 attempts, the shipped lite checkpoint) is submitted, waited
 * for, merged, and compared BYTE FOR BYTE with a single-process run; then one array task is scancel'd
 * mid-run, resubmitted, resumed from its last durable row, and the merge is still byte-identical.
 *
 * Needs sbatch and an idle node (scripts/slurm/start-cluster.sh; scripts/test-all.sh starts it when run as
 * root with apt). With CI=true and no SLURM, this FAILS; elsewhere it is skipped with a loud message.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { lineCount, liteCheckpointSha } from '../campaign/cli-support.js';
import { blackoutYaml } from '../campaign/helpers.js';
import { cli } from './support.js';

function slurmUp(): { ok: boolean; why: string } {
  const v = spawnSync('sbatch', ['--version'], { encoding: 'utf8' });
  if (v.error !== undefined || v.status !== 0) return { ok: false, why: 'sbatch is not installed' };
  const s = spawnSync('sinfo', ['--noheader', '--format=%t'], { encoding: 'utf8', timeout: 10_000 });
  if (s.status !== 0 || !/\b(idle|mix|alloc)/.test(s.stdout))
    return { ok: false, why: `no node is up (sinfo: ${(s.stdout || s.stderr).trim() || 'nothing'})` };
  return { ok: true, why: '' };
}

const up = slurmUp();
const CI = process.env['CI'] === 'true';
const SHARDS = 4;
const UNITS = 8;
const ROWS = UNITS * 7 * 2;
const jobs: string[] = [];

/** Array tasks of `jobId` still queued or running. */
function active(jobId: string): { task: number; state: string }[] {
  const r = spawnSync('squeue', ['--noheader', '--array', `--jobs=${jobId}`, '--format=%i|%T'], { encoding: 'utf8' });
  if (r.status !== 0) return [];
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split('|'))
    .filter((p) => /^\d+_\d+$/.test(p[0] ?? ''))
    .map((p) => ({ task: Number(p[0]!.split('_')[1]), state: p[1] ?? '' }));
}

async function waitFor(jobId: string, limitMs = 240_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (active(jobId).length > 0) {
    if (Date.now() > until)
      throw new Error(`job ${jobId} still has tasks after ${limitMs / 1000}s: ${JSON.stringify(active(jobId))}`);
    await sleep(300);
  }
}

function jobIdOf(stdout: string): string {
  const m = /submitted job (\d+) \(array ([^)]*)\)/.exec(stdout);
  if (!m) throw new Error(`no job id in: ${stdout}`);
  jobs.push(m[1]!);
  return m[1]!;
}

if (!up.ok && CI) {
  describe('cluster: SLURM array jobs', () => {
    it('has a SLURM cluster in CI', () => {
      throw new Error(
        `CI=true but ${up.why}: scripts/test-all.sh must start the one-node cluster (scripts/slurm/start-cluster.sh) before the tests`,
      );
    });
  });
} else if (!up.ok) {
  process.stderr.write(
    `\n********************************************************************************\n*** test/cluster/cluster.test.ts SKIPPED: ${up.why}.\n*** Start the one-node cluster as root: bash scripts/slurm/start-cluster.sh\n********************************************************************************\n\n`,
  );
  describe.skip('cluster: SLURM array jobs (no SLURM here)', () => {
    it('skipped', () => undefined);
  });
} else {
  describe('cluster: SLURM array jobs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-slurm-'));
    writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n: UNITS, sha: liteCheckpointSha(), strict: false }));
    let reference: Promise<string> | null = null;
    const referenceRows = (): Promise<string> =>
      (reference ??= cli(['campaign', 'run', 'p.yaml', '--campaigns-dir', 'ref'], dir).then((r) => {
        expect(r.code, r.stderr).toBe(0);
        const unit = readdirSync(join(dir, 'ref')).find(
          (n) => n.startsWith('shellgame-blackout-') && !n.endsWith('.shards'),
        )!;
        return readFileSync(join(dir, 'ref', unit, 'rows/rows.jsonl'), 'utf8');
      }));

    async function precommit(campaigns: string): Promise<string> {
      const r = await cli(['campaign', 'precommit', 'p.yaml', '--campaigns-dir', campaigns], dir);
      expect(r.code, r.stderr).toBe(0);
      const name = readdirSync(join(dir, campaigns)).find(
        (n) => n.startsWith('shellgame-blackout-') && !n.endsWith('.shards'),
      )!;
      return join(dir, campaigns, name);
    }

    afterAll(() => {
      for (const j of jobs) if (active(j).length > 0) spawnSync('scancel', [j]);
    });

    it('a 4-shard array merges into rows byte-identical to a single-process run', async () => {
      const started = Date.now();
      const [ref, unit] = await Promise.all([referenceRows(), precommit('c1')]);
      // bad input first: more shards than units, merge before any shard ran
      const tooMany = await cli(['cluster', 'plan', unit, '--shards', String(UNITS + 1)], dir);
      expect(tooMany.code).toBe(2);
      expect(tooMany.stderr.trim().split('\n')).toHaveLength(1);
      expect(tooMany.stderr).toMatch(
        /9 shards for 8 units: every shard needs at least one unit.*use --shards 8 or fewer/,
      );
      const unplanned = await cli(['cluster', 'merge', unit], dir);
      expect(unplanned.code).toBe(2);
      expect(unplanned.stderr).toMatch(/has no shard plan and no shard folders — split it first/);
      const plan = await cli(['cluster', 'plan', unit, '--shards', String(SHARDS)], dir);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/^4 shards of 8 units \(112 rows\), rule scope-ordinal-mod-n/);
      const early = await cli(['cluster', 'merge', unit], dir);
      expect(early.code).toBe(2);
      expect(early.stderr).toMatch(/4 of 4 shards are not complete: shard 0 \(never run\), shard 1 \(never run\)/);

      const sub = await cli(['cluster', 'submit', unit, '--shards', String(SHARDS), '--batch', '4'], dir);
      expect(sub.code, sub.stderr).toBe(0);
      const job = jobIdOf(sub.stdout);
      expect(sub.stdout).toContain(`(array 0-${SHARDS - 1})`);
      await waitFor(job);
      const status = await cli(['cluster', 'status', unit], dir);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout.match(/: done +28\/28 rows {2}job \d+_\d/g)).toHaveLength(SHARDS);
      const merge = await cli(['cluster', 'merge', unit], dir);
      expect(merge.code, merge.stderr).toBe(0);
      expect(merge.stdout).toMatch(new RegExp(`merged ${SHARDS} shards \\(${ROWS} rows\\)`));
      expect(readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')).toBe(ref);
      const verify = await cli(['campaign', 'verify', unit], dir);
      expect(verify.code, verify.stderr).toBe(0);
      // the tasks' logs and sessions are sealed into the unit
      expect(readdirSync(join(unit, 'cluster/logs')).filter((n) => n.endsWith('.out'))).toHaveLength(SHARDS);
      const session = JSON.parse(
        readFileSync(join(unit, 'cluster/sessions/shard-2-of-4.jsonl'), 'utf8').split('\n')[0]!,
      ) as { slurm: Record<string, string> };
      expect(session.slurm).toMatchObject({ SLURM_ARRAY_JOB_ID: job, SLURM_ARRAY_TASK_ID: '2' });
      process.stderr.write(`cluster test: 4-shard array + merge in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    }, 300_000);

    it("a scancel'd task is resumed by resubmission, and the merge is still byte-identical", async () => {
      const started = Date.now();
      const [ref, unit] = await Promise.all([referenceRows(), precommit('c2')]);
      const sub = await cli(['cluster', 'submit', unit, '--shards', String(SHARDS), '--batch', '2'], dir, {
        IMEP_TEST_EPISODE_DELAY_MS: '150',
      });
      expect(sub.code, sub.stderr).toBe(0);
      const job = jobIdOf(sub.stdout);
      // catch a running task with some durable rows, and cancel it
      const rowsOf = (i: number): number => lineCount(join(`${unit}.shards`, `shard-${i}-of-${SHARDS}`, 'rows.jsonl'));
      let victim = -1;
      const until = Date.now() + 120_000;
      while (victim < 0 && Date.now() < until) {
        for (const t of active(job))
          if (t.state === 'RUNNING' && rowsOf(t.task) >= 4 && rowsOf(t.task) <= 20) victim = t.task;
        if (victim < 0) await sleep(100);
      }
      expect(victim, 'caught no running task mid-run').toBeGreaterThanOrEqual(0);
      expect(spawnSync('scancel', [`${job}_${victim}`]).status).toBe(0);
      await waitFor(job);
      const kept = rowsOf(victim);
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(28);
      const status = await cli(['cluster', 'status', unit], dir);
      expect(status.stdout).toMatch(new RegExp(`shard ${victim}/4: failed +${kept}/28 rows {2}job ${job}_${victim}`));
      const refused = await cli(['cluster', 'merge', unit], dir);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        new RegExp(`1 of 4 shards is not complete: shard ${victim} \\(${kept}/28 rows\\)`),
      );

      const again = await cli(['cluster', 'submit', unit, '--shards', String(SHARDS)], dir, {
        IMEP_TEST_EPISODE_DELAY_MS: '0',
      });
      expect(again.code, again.stderr).toBe(0);
      const job2 = jobIdOf(again.stdout);
      expect(again.stdout).toContain(`(array ${victim})`);
      await waitFor(job2);
      const merge = await cli(['cluster', 'merge', unit], dir);
      expect(merge.code, merge.stderr).toBe(0);
      expect(readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')).toBe(ref);
      const starts = readFileSync(join(unit, `cluster/sessions/shard-${victim}-of-4.jsonl`), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { event: string; rowsAtStart?: number; slurm?: Record<string, string> })
        .filter((s) => s.event === 'start');
      expect(starts.map((s) => s.rowsAtStart)).toEqual([0, kept]);
      expect(starts[1]!.slurm).toMatchObject({ SLURM_ARRAY_JOB_ID: job2 });
      process.stderr.write(
        `cluster test: scancel + resubmit + merge in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
    }, 300_000);
  });
}
