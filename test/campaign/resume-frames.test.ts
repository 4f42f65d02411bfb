/**
 * Rollout frames (protocol `frames`, runner/frame-recorder.ts) are part of the deterministic evidence: an
 * interrupted and resumed run leaves traces/frames.jsonl byte-identical to an uninterrupted one, the seal
 * lists it, and each line holds the registered steps of a recorded episode only.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { crashFormalRun, rememberColorYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

const FRAMES = '\nframes:\n  steps: [0, 2, 3]\n  conditions: [A, T]\n  units: 2\n';

function sideFiles(unit: string): Record<string, string> {
  const out: Record<string, string> = { rows: readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8') };
  const traces = join(unit, 'traces');
  for (const f of existsSync(traces) ? readdirSync(traces).sort() : [])
    out[`traces/${f}`] = readFileSync(join(traces, f), 'utf8');
  return out;
}

describe('rollout frames through an interruption', () => {
  it('frames.jsonl after an interruption + resume equals an uninterrupted run, byte for byte; sealed', async () => {
    const whole = sandbox();
    const wantDir = await runCampaign(
      writeProtocol(whole, 'rc.yaml', rememberColorYaml({ n: 4, sha: whole.checkpointSha }) + FRAMES),
      scriptedOptions(whole, 'color'),
    );
    const want = sideFiles(wantDir);
    expect(Object.keys(want)).toContain('traces/frames.jsonl');
    const lines = want['traces/frames.jsonl']!.trimEnd()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            seq: number;
            condition: string;
            seed: number;
            attempt: number;
            frames: { step: number; png: string }[];
          },
      );
    const rows = want['rows']!.trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; condition: string; seed: number; steps: number });
    // 2 tasks × the first 2 seeds × conditions A and T × 2 attempts
    expect(lines).toHaveLength(2 * 2 * 2 * 2);
    const seeds = [...new Set(rows.map((r) => r.seed))].sort((a, b) => a - b).slice(0, 2);
    for (const l of lines) {
      expect(['A', 'T']).toContain(l.condition);
      expect(seeds).toContain(l.seed);
      const row = rows.find((r) => r.seq === l.seq)!;
      expect([row.condition, row.seed]).toEqual([l.condition, l.seed]);
      expect(l.frames.map((f) => f.step)).toEqual([0, 2, 3].filter((s) => s <= row.steps));
      for (const f of l.frames) expect(Buffer.from(f.png, 'base64').subarray(1, 4).toString('ascii')).toBe('PNG');
    }
    const seal = JSON.parse(readFileSync(join(wantDir, 'seal.json'), 'utf8')) as { files: { path: string }[] };
    expect(seal.files.map((f) => f.path)).toContain('traces/frames.jsonl');

    const total = rows.length;
    for (const stopAt of [1, 21, 50]) {
      const box = sandbox();
      const file = writeProtocol(box, 'rc.yaml', rememberColorYaml({ n: 4, sha: box.checkpointSha }) + FRAMES);
      const unit = await precommitCampaign(file, scriptedOptions(box, 'color'));
      await crashFormalRun(unit, file, 'color', stopAt, 3);
      const opts = scriptedOptions(box, 'color', { batchSize: 5 });
      await runCampaign(file, opts);
      expect(opts.lines.join('\n')).toMatch(new RegExp(`resuming .* at row ${stopAt} of ${total}`));
      expect((await readUnitState(unit)).state).toBe('sealed');
      expect(sideFiles(unit), `interrupted at row ${stopAt}`).toEqual(want);
    }
  }, 180_000);
});
