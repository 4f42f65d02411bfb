/**
 * A crash that cuts a unit whose durable rows record an execution failure (a transient bridge timeout): resuming
 * recomputes that unit, does not meet the failure again, and cannot produce rows consistent with the durable
 * ones — it refuses, says why, and writes nothing. `imep campaign fail-run` then keeps the run's rows under
 * failed-runs/ and returns the unit to precommitted; running it again gives the rows of a clean run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { isImepError } from '../../src/core/errors.js';
import { startRun } from '../../src/evidence/transitions/formal-run.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { precommitCampaign, resumeCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { type EnvProvider } from '../../src/campaign/index.js';
import { runCli } from '../support/run-cli.js';
import { FlakyEnv } from './flaky-env.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

describe('resume across a cut unit with a transient failure in its durable rows', () => {
  it('refuses with the cause, writes nothing; fail-run keeps the rows and a new run gives the clean rows', async () => {
    // the run with the transient failure, to get its rows
    const flaky = sandbox();
    let fired = false;
    const envs: EnvProvider = (t) =>
      new FlakyEnv(makeLiteEnv(t.envId, t.kwargs), (s, a, st) => {
        if (!fired && s === 610001 && a === 1 && st === 3) return (fired = true);
        return false;
      });
    const flakyUnit = await runCampaign(
      writeProtocol(flaky, 'p.yaml', blackoutYaml({ n: 4, sha: flaky.checkpointSha })),
      scriptedOptions(flaky, 'shell', { envs }),
    );
    const rows = readFileSync(join(flakyUnit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const timings = readFileSync(join(flakyUnit, 'rows/timings.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const k = rows.findIndex((r) => r['status'] === 'failed' && r['attempt'] === 1);
    expect(k).toBeGreaterThanOrEqual(0);

    // the crash state: rows up to the failed attempt-1 row durable, the unit's attempt-2 row not
    const box = sandbox();
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 4, sha: box.checkpointSha }));
    const unit = await precommitCampaign(file, scriptedOptions(box, 'shell'));
    const run = await startRun(unit, { operator: { id: 'runner-test', source: 'explicit' } });
    for (let i = 0; i <= k; i++) {
      await run.appendTiming(timings[i] as never);
      await run.appendRow(rows[i] as never);
    }
    await run.close();
    const before = readFileSync(join(unit, 'rows/rows.jsonl'));

    const err = await resumeCampaign(unit, scriptedOptions(box, 'shell')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isImepError(err) && err.code).toBe('E_OUT_OF_ORDER');
    expect((err as Error).message).toMatch(
      new RegExp(
        `durable row seq ${k} records an execution failure \\(E_BRIDGE_TIMEOUT: simulated timeout at seed 610001 step 3\\) that the resumed run did not meet again`,
      ),
    );
    expect(readFileSync(join(unit, 'rows/rows.jsonl'))).toEqual(before);
    expect(existsSync(`${unit}.lock`)).toBe(false);

    // fail-run through the CLI: rows kept, unit precommitted; a new run gives the clean rows
    const failed = runCli(['campaign', 'fail-run', unit, '--reason', 'a transient failure in a unit the crash cut'], {
      env: { IMEP_OPERATOR: 'runner-test' },
    });
    expect(failed.stderr).toBe('');
    expect(failed.code).toBe(0);
    expect(failed.stdout).toMatch(/failed the run of .*: its rows and traces are in .*failed-runs/);
    expect((await readUnitState(unit)).state).toBe('precommitted');
    await resumeCampaign(unit, scriptedOptions(box, 'shell'));
    const clean = sandbox();
    const cleanUnit = await runCampaign(
      writeProtocol(clean, 'p.yaml', blackoutYaml({ n: 4, sha: clean.checkpointSha })),
      scriptedOptions(clean, 'shell'),
    );
    expect(readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')).toBe(
      readFileSync(join(cleanUnit, 'rows/rows.jsonl'), 'utf8'),
    );
  }, 120_000);
});
