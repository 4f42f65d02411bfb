/**
 * A shard process killed (SIGKILL, as scancel or a preemption ends it) while its RowWriter has files open
 * resumes from its last durable row: nothing lost, nothing written twice — rows, timings and traces of the
 * resumed shard are exactly those of an uninterrupted run of the same shard. Runs the test CLI
 * (test/cluster/cli.ts, the shipped lite checkpoint) with a per-episode delay so the kill lands mid-run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { lineCount, liteCheckpointSha } from '../campaign/cli-support.js';
import { blackoutYaml } from '../campaign/helpers.js';
import { CLI, cli } from './support.js';

const read = (f: string): string => readFileSync(f, 'utf8');
const seqs = (text: string): number[] =>
  text
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => (JSON.parse(l) as { seq: number }).seq);

describe('cluster: a killed shard resumes from its last durable row', () => {
  it('SIGKILL mid-run, run again: rows, timings and traces equal an uninterrupted run of the shard', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-shard-kill-'));
    writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n: 4, sha: liteCheckpointSha(), strict: false }));
    const units: Record<string, string> = {};
    for (const c of ['ref', 'kill']) {
      const r = await cli(['campaign', 'precommit', 'p.yaml', '--campaigns-dir', c], dir);
      expect(r.code, r.stderr).toBe(0);
      units[c] = join(
        dir,
        c,
        readdirSync(join(dir, c)).find((n) => n.startsWith('shellgame-blackout-') && !n.endsWith('.shards'))!,
      );
    }
    const args = (c: string): string[] => [
      'campaign',
      'run',
      join(units[c]!, 'protocol.json'),
      '--campaigns-dir',
      c,
      '--shard',
      '1/2',
      '--batch',
      '1',
    ];
    const ref = await cli(args('ref'), dir);
    expect(ref.code, ref.stderr).toBe(0);
    const refDir = `${units['ref']!}.shards/shard-1-of-2`;
    const total = lineCount(join(refDir, 'rows.jsonl'));
    expect(total).toBe(2 * 7 * 2); // 2 of the 4 units × 7 conditions × 2 attempts

    const killDir = `${units['kill']!}.shards/shard-1-of-2`;
    const child = spawn(CLI[0]!, [...CLI.slice(1), ...args('kill')], {
      cwd: dir,
      env: { ...process.env, IMEP_OPERATOR: 'cluster-test', IMEP_TEST_EPISODE_DELAY_MS: '150' },
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, signal) => res(signal)));
    const deadline = Date.now() + 120_000;
    while (lineCount(join(killDir, 'rows.jsonl')) < 5 && Date.now() < deadline) await sleep(20);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const durable = seqs(read(join(killDir, 'rows.jsonl')));
    expect(durable.length).toBeGreaterThanOrEqual(5);
    expect(durable.length).toBeLessThan(total);
    // every durable row's timing line was written before it (side lines of a row precede the row)
    expect(seqs(read(join(killDir, 'timings.jsonl'))).slice(0, durable.length)).toEqual(durable);
    expect((JSON.parse(read(join(killDir, 'shard.json'))) as { complete: boolean }).complete).toBe(false);

    const resumed = await cli(args('kill'), dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(read(join(killDir, 'rows.jsonl'))).toBe(read(join(refDir, 'rows.jsonl')));
    expect(seqs(read(join(killDir, 'timings.jsonl')))).toEqual(seqs(read(join(refDir, 'rows.jsonl'))));
    const streams = readdirSync(join(refDir, 'traces')).sort();
    expect(readdirSync(join(killDir, 'traces')).sort()).toEqual(streams);
    for (const s of streams) expect(read(join(killDir, 'traces', s)), s).toBe(read(join(refDir, 'traces', s)));
    expect((JSON.parse(read(join(killDir, 'shard.json'))) as { complete: boolean }).complete).toBe(true);
  }, 240_000);
});
