import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { isImepError } from '../../src/core/errors.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { type EnvProvider } from '../../src/campaign/index.js';
import { FlakyEnv } from './flaky-env.js';
import { crashFormalRun, rememberColorYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

function sideFiles(unit: string): Record<string, string> {
  const out: Record<string, string> = { rows: readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8') };
  const traces = join(unit, 'traces');
  for (const f of existsSync(traces) ? readdirSync(traces).sort() : [])
    out[`traces/${f}`] = readFileSync(join(traces, f), 'utf8');
  return out;
}

describe('resume with donor swaps (in-process interruption at several rows)', () => {
  it('rows and traces after an interruption + resume equal an uninterrupted run, byte for byte', async () => {
    const whole = sandbox();
    const wantDir = await runCampaign(
      writeProtocol(whole, 'rc.yaml', rememberColorYaml({ n: 6, sha: whole.checkpointSha })),
      scriptedOptions(whole, 'color'),
    );
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

  it('refuses to resume a segment whose recomputed donor assignment differs from the durable one (a pre-pass failed this time)', async () => {
    const whole = sandbox();
    const wantDir = await runCampaign(
      writeProtocol(whole, 'rc.yaml', rememberColorYaml({ n: 6, sha: whole.checkpointSha })),
      scriptedOptions(whole, 'color'),
    );
    const donorSegments = readFileSync(join(wantDir, 'traces/donors.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number });
    const rows = readFileSync(join(wantDir, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; seed: number });
    const first = donorSegments[0]!.seq;
    const seed = rows[first]!.seed; // the segment's first unit: its pre-pass will fail in the resumed run

    const box = sandbox();
    const file = writeProtocol(box, 'rc.yaml', rememberColorYaml({ n: 6, sha: box.checkpointSha }));
    const unit = await precommitCampaign(file, scriptedOptions(box, 'color'));
    await crashFormalRun(unit, file, 'color', first + 3, 3);
    const before = sideFiles(unit);
    const envs: EnvProvider = (t) =>
      new FlakyEnv(makeLiteEnv(t.envId, t.kwargs), (s, attempt, step) => s === seed && attempt === 1 && step === 1);
    const err = await runCampaign(file, scriptedOptions(box, 'color', { envs })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isImepError(err) && err.code).toBe('E_OUT_OF_ORDER');
    expect(String((err as Error).message)).toMatch(
      /the donor assignment of wave \d+ × \S+ × \S+ \(first row \d+\), recomputed by this run's donor pre-pass, differs from the one in traces\/donors\.jsonl that the durable rows were run with/,
    );
    // nothing written: the rows are as they were, and each trace file is what it was or a prefix of it — the only
    // change a refused resume may leave is the crash repair every resume makes first (side lines of rows that never
    // became durable are cut), never a line added or altered
    const after = sideFiles(unit);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after['rows']).toBe(before['rows']);
    for (const [name, text] of Object.entries(after)) expect(before[name]?.startsWith(text), name).toBe(true);
    // the same resume without the failure goes through to the uninterrupted bytes
    await runCampaign(file, scriptedOptions(box, 'color'));
    expect(sideFiles(unit)).toEqual(sideFiles(wantDir));
  }, 180_000);
});
