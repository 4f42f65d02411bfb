/**
 * Issue #31 item 4: the registered execution-failure budget (`executionFailures.budget`). A run whose first units
 * all fail stops UNSEALED with the first message of each failure code and how to go on; resumed after the fix it
 * goes on at the next unit (the rows written stay byte for byte, nothing is run twice) and seals. Scattered failures
 * under the budget seal, with a Failures section on the terminal. A run beyond the registered fraction stops, and
 * its resume refuses at once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { isImepError } from '../../src/core/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import type { EnvProvider } from '../../src/campaign/index.js';
import { resumeCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { loadProtocolSync, parseProtocol } from '../../src/protocol/index.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';
import { FlakyEnv } from './flaky-env.js';

const rowLines = (unit: string): string[] =>
  readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n').filter(Boolean);
const statusOf = (line: string): string => (JSON.parse(line) as { status: string }).status;

/** Lite envs that fail every episode at step 3 while `broken()` says so; counts every reset. */
function envs(broken: (seed: number, attempt: number) => boolean, resets: { n: number }): EnvProvider {
  return (t) => {
    const env = new FlakyEnv(
      makeLiteEnv(t.envId, t.kwargs),
      (seed, attempt, step) => step === 3 && broken(seed, attempt),
    );
    const reset = env.reset.bind(env);
    env.reset = (r) => {
      resets.n += 1;
      return reset(r);
    };
    return env;
  };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
}

describe('the execution-failure budget', () => {
  it('is registered with a safe default, frozen in the protocol (and its hash)', () => {
    const p = loadProtocolSync(join(__dirname, '../../protocols/shellgame-hosted-policy.yaml')).protocol;
    expect(p.executionFailures).toEqual({
      policy: 'record',
      unresolved: 'in-denominator',
      budget: { firstFailed: 5, maxFraction: 0.1 },
    });
  });

  it('stops a run whose first units all fail, unsealed, naming the first message; resumed after the fix it goes on and seals', async () => {
    const box = sandbox('imep-budget-');
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 6, sha: box.checkpointSha }));
    let broken = true;
    const resets = { n: 0 };
    const opts = scriptedOptions(box, 'shell', { envs: envs(() => broken, resets) });
    const err = await rejection(runCampaign(file, opts));
    expect(isImepError(err) && err.code).toBe('E_FAILURE_BUDGET');
    expect(exitCodeFor(err)).toBe(6);
    const line = isImepError(err) ? err.oneLine() : '';
    expect(line).toMatch(/stopped before the seal: the first 5 units of wave 1 × A all failed/);
    expect(line).toContain(
      'E_BRIDGE_TIMEOUT ×10 — first at row 0 (wave 1 × A): simulated timeout at seed 610000 step 3',
    );
    expect(line).toMatch(/the unit is NOT sealed and its 10 rows are kept/);
    expect(line).toMatch(/imep campaign resume \S+/);
    expect(line).toMatch(/imep campaign fail-run \S+ --reason/);
    // the terminal: the Failures section, not only the rows file
    expect(opts.lines).toContain(
      'Failures: 10 of 10 rows failed to execute (recorded as failed; they stay in the denominators)',
    );
    const unit = opts.lines.find((l) => l.startsWith('precommitted '))?.split(' ')[1] as string;
    expect((await readUnitState(unit)).state).toBe('running');
    // whole units, in seq order: 5 units × 2 attempts, whatever the batch size
    const before = rowLines(unit);
    expect(before).toHaveLength(10);
    expect(before.every((l) => statusOf(l) === 'failed')).toBe(true);

    // the fix; resume goes on at the next unit — the durable rows stay byte for byte, none is run again
    broken = false;
    resets.n = 0;
    const again = scriptedOptions(box, 'shell', { envs: envs(() => broken, resets) });
    await resumeCampaign(unit, again);
    expect((await readUnitState(unit)).state).toBe('sealed');
    const after = rowLines(unit);
    const planned = 7 * 6 * 2;
    expect(after).toHaveLength(planned);
    expect(after.slice(0, 10)).toEqual(before);
    expect(after.slice(10).every((l) => statusOf(l) === 'ok')).toBe(true);
    expect(resets.n).toBe(planned - 10); // one reset per episode not yet written: nothing written ran again
    expect(again.lines).toContain(
      `Failures: 10 of ${planned} rows failed to execute (recorded as failed; they stay in the denominators)`,
    );
  }, 120_000);

  it('stops at the same row whatever the batch size', async () => {
    const box = sandbox('imep-budget-b1-');
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 6, sha: box.checkpointSha }));
    const opts = scriptedOptions(box, 'shell', { envs: envs(() => true, { n: 0 }), batchSize: 1 });
    expect(isImepError(await rejection(runCampaign(file, opts)))).toBe(true);
    const unit = opts.lines.find((l) => l.startsWith('precommitted '))?.split(' ')[1] as string;
    expect(rowLines(unit)).toHaveLength(10);
  }, 120_000);

  it('seals a run with scattered failures under the budget and prints them in a Failures section', async () => {
    const box = sandbox('imep-budget-few-');
    const file = writeProtocol(box, 'p.yaml', blackoutYaml({ n: 6, sha: box.checkpointSha }));
    const opts = scriptedOptions(box, 'shell', {
      envs: envs((seed, attempt) => seed === 610002 && attempt === 1, { n: 0 }),
    });
    const unit = await runCampaign(file, opts);
    expect((await readUnitState(unit)).state).toBe('sealed');
    expect(rowLines(unit).filter((l) => statusOf(l) === 'failed')).toHaveLength(7 * 2);
    const at = opts.lines.indexOf(
      'Failures: 14 of 84 rows failed to execute (recorded as failed; they stay in the denominators)',
    );
    expect(at).toBeGreaterThan(0);
    expect(opts.lines[at + 1]).toBe(
      '  E_BRIDGE_TIMEOUT ×14 — first at row 4 (wave 1 × A): simulated timeout at seed 610002 step 3',
    );
  }, 120_000);

  it('stops when failed units exceed the registered fraction; the resume of a spent budget refuses at once', async () => {
    const box = sandbox('imep-budget-frac-');
    const text = blackoutYaml({ n: 6, sha: box.checkpointSha }).replace(
      'executionFailures: { policy: record }',
      'executionFailures: { policy: record, budget: { firstFailed: 1, maxFraction: 0.2 } }',
    );
    const file = writeProtocol(box, 'p.yaml', text);
    const failing = (seed: number): boolean => seed === 610001 || seed === 610003;
    const opts = scriptedOptions(box, 'shell', { envs: envs(failing, { n: 0 }) });
    const err = await rejection(runCampaign(file, opts));
    const line = isImepError(err) ? err.oneLine() : String(err);
    // allowance max(1, 0.2 × 6) = 1.2 failed units: the second failed unit (seed 610003, the 4th unit) stops the run
    expect(line).toMatch(
      /stopped before the seal: 2 of the 6 planned units of wave 1 × A failed, more than the 1\.2 the budget allows/,
    );
    const unit = opts.lines.find((l) => l.startsWith('precommitted '))?.split(' ')[1] as string;
    const rows = rowLines(unit);
    expect(rows).toHaveLength(8);

    const resumed = await rejection(
      resumeCampaign(unit, scriptedOptions(box, 'shell', { envs: envs(() => false, { n: 0 }) })),
    );
    expect(isImepError(resumed) && resumed.code).toBe('E_FAILURE_BUDGET');
    expect(isImepError(resumed) ? resumed.oneLine() : '').toMatch(/cannot go on before the seal/);
    expect(rowLines(unit)).toEqual(rows);
    expect((await readUnitState(unit)).state).toBe('running');
  }, 120_000);
});

describe('the execution-failure budget in a protocol file', () => {
  const base = blackoutYaml({ n: 2, sha: 'a'.repeat(64) });
  it.each([
    ['firstFailed: 0', /executionFailures\.budget\.firstFailed/],
    ['maxFraction: 1.5', /executionFailures\.budget\.maxFraction/],
    ['firstFailed: 2, typo: 1', /executionFailures\.budget/],
  ])('refuses budget { %s }, naming the field', (body, field) => {
    const text = base.replace(
      'executionFailures: { policy: record }',
      `executionFailures: { policy: record, budget: { ${body} } }`,
    );
    let err: unknown;
    try {
      parseProtocol(text, 'p.yaml');
    } catch (e) {
      err = e;
    }
    expect(isImepError(err) && err.code).toBe('E_PROTOCOL_INVALID');
    expect(isImepError(err) ? err.oneLine() : '').toMatch(field);
  });

  it('keeps a registered budget as written', () => {
    const text = base.replace(
      'executionFailures: { policy: record }',
      'executionFailures: { policy: retry, maxRetries: 2, budget: { maxFraction: 1 } }',
    );
    expect(parseProtocol(text, 'p.yaml').protocol.executionFailures).toEqual({
      policy: 'retry',
      maxRetries: 2,
      unresolved: 'in-denominator',
      budget: { firstFailed: 5, maxFraction: 1 },
    });
  });
});
