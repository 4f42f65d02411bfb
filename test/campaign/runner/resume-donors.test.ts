import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUnitState } from '../../../src/campaign/unit-state.js';
import { precommitCampaign, runCampaign } from '../../../src/campaign/runner/index.js';
import { crashFormalRun, rememberColorYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

function sideFiles(unit: string): Record<string, string> {
  const out: Record<string, string> = { rows: readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8') };
  const traces = join(unit, 'traces');
  for (const f of existsSync(traces) ? readdirSync(traces).sort() : []) out[`traces/${f}`] = readFileSync(join(traces, f), 'utf8');
  return out;
}

describe('resume with donor swaps (in-process interruption at several rows)', () => {
  it('rows and traces after an interruption + resume equal an uninterrupted run, byte for byte', async () => {
    const whole = sandbox();
    const wantDir = await runCampaign(writeProtocol(whole, 'rc.yaml', rememberColorYaml({ n: 6, sha: whole.checkpointSha })), scriptedOptions(whole, 'color'));
    const want = sideFiles(wantDir);
    const total = want['rows']?.trimEnd().split('\n').length ?? 0;
    expect(total).toBe(5 * 2 * 6 * 2);
    expect(Object.keys(want)).toEqual(['rows', 'traces/donors.jsonl', 'traces/interventions.jsonl']);

    for (const stopAt of [1, 49, 72, 86, 97, 110]) {
      const box = sandbox();
      const file = writeProtocol(box, 'rc.yaml', rememberColorYaml({ n: 6, sha: box.checkpointSha }));
      const unit = await precommitCampaign(file, scriptedOptions(box, 'color'));
      await crashFormalRun(unit, file, 'color', stopAt, 3);
      expect((await readUnitState(unit)).state).toBe('running');
      expect(readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n').length).toBe(stopAt);

      const opts = scriptedOptions(box, 'color', { batchSize: 5 });
      await runCampaign(file, opts);
      expect(opts.lines.join('\n')).toMatch(new RegExp(`resuming .* at row ${stopAt} of ${total}`));
      expect((await readUnitState(unit)).state).toBe('sealed');
      expect(sideFiles(unit), `interrupted at row ${stopAt}`).toEqual(want);
    }
  }, 180_000);
});
