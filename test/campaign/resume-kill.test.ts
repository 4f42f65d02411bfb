import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blackoutYaml } from './helpers.js';
import { imep, lineCount, liteCheckpointSha, unitIn } from './cli-support.js';

describe('imep campaign run: SIGKILL at any point, then resume', () => {
  it('leaves rows byte-identical to an uninterrupted run (lite checkpoint, different batch sizes)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-kill-'));
    writeFileSync(join(dir, 'p.yaml'), blackoutYaml({ n: 8, sha: liteCheckpointSha() }));
    const planned = 7 * 8 * 2;

    const whole = await imep(['campaign', 'run', 'p.yaml', '--campaigns-dir', 'A', '--batch', '16'], dir);
    expect(whole.stderr).not.toMatch(/imep:/);
    expect(whole.code).toBe(0);
    const unitA = unitIn(join(dir, 'A')) as string;
    const want = readFileSync(join(unitA, 'rows/rows.jsonl'), 'utf8');
    expect(want.trimEnd().split('\n').length).toBe(planned);

    const rowsB = (): number => {
      const u = unitIn(join(dir, 'B'));
      return u === null ? -1 : lineCount(join(u, 'rows/rows.jsonl'));
    };
    const args = ['campaign', 'run', 'p.yaml', '--campaigns-dir', 'B', '--batch', '3'];
    const kills: string[] = [];
    for (const at of [0, 1, 30, 61, 150]) {
      const r = await imep(args, dir, () => rowsB() >= at);
      kills.push(r.signal === 'SIGKILL' ? `killed at ≥${at} (${rowsB()} rows)` : `finished (code ${r.code})`);
    }
    expect(kills.filter((k) => k.startsWith('killed')).length, kills.join('; ')).toBeGreaterThanOrEqual(3);
    const unitB = unitIn(join(dir, 'B')) as string;
    // the lifecycle's next command for a running unit: `imep campaign resume UNIT` (from the frozen protocol)
    const last = await imep(['campaign', 'resume', unitB, '--batch', '5'], dir);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stdout).toMatch(/sealed/);
    expect(readFileSync(join(unitB, 'rows/rows.jsonl'), 'utf8')).toBe(want);
    const timings = readFileSync(join(unitB, 'rows/timings.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { seq: number }).seq);
    expect(timings).toEqual([...Array(planned).keys()]);
    expect(Math.max(...timings)).toBe(planned - 1);
    const verify = await imep(['campaign', 'verify', unitB], dir);
    expect(verify.code, verify.stderr).toBe(0);
    const run = JSON.parse(readFileSync(join(unitB, 'rows/run.json'), 'utf8')) as { sessions: { action: string }[] };
    expect(run.sessions.filter((s) => s.action === 'resume').length).toBeGreaterThanOrEqual(1);
  }, 240_000);
});
