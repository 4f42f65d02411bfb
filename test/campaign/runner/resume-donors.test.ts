import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../../src/bridges/lite/registry.js';
import { startRun } from '../../../src/campaign/formal-run.js';
import { readUnitState } from '../../../src/campaign/unit-state.js';
import { precommitCampaign, RowSink, runCampaign, runPlan } from '../../../src/campaign/runner/index.js';
import { buildPlan, loadProtocolSync } from '../../../src/protocol/index.js';
import { rememberColorYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';
import { scriptedProvider } from './scripted-policies.js';

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
      const run = await startRun(unit, { operator: { id: 'runner-test', source: 'explicit' } });
      let appended = 0;
      const dying = {
        appendRow: async (r: Parameters<typeof run.appendRow>[0]) => {
          if (appended >= stopAt) throw new Error('simulated crash');
          appended += 1;
          await run.appendRow(r);
        },
        appendTiming: (t: Parameters<typeof run.appendTiming>[0]) => run.appendTiming(t),
        appendTrace: (s: string, e: Parameters<typeof run.appendTrace>[1]) => run.appendTrace(s, e),
      };
      const { protocol } = loadProtocolSync(file);
      const plan = buildPlan(protocol);
      const sink = new RowSink(dying, plan.episodes.map((e) => e.seq));
      const crashed = (async () => {
        await runPlan({ protocol, episodes: plan.episodes, policies: scriptedProvider('color'), envs: (t) => makeLiteEnv(t.envId, t.kwargs), batchSize: 3, sink });
        await sink.drain();
      })();
      await expect(crashed).rejects.toThrow(/simulated crash/);
      await sink.settle();
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
