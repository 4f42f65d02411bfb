/**
 * The policy-server examples of docs/your-policy.md, run as the guide says: the server started from .venvs/policies on
 * the port its protocol names, then `npx imep campaign run …` (the built CLI, from the repository root, into a
 * temporary campaigns folder), through closeout:
 *
 * 1. examples/servers/history.yaml — an UNMODIFIED vla-eval 0.8.0 model server (vla_eval_history_server.py) given its
 *    past frames by IMEP (memory.bank: history): Q1 holds, the read canary passes, and the rows equal those of the same
 *    policy run as a Python host class (history-hosted.yaml), row by row (status, success, steps, action digest, reads).
 * 2. examples/servers/bank-hook.yaml — an UNMODIFIED openpi WebsocketPolicyServer (openpi_bank_server.py) keeping its
 *    own bank, each read routed through IMEP's bank hook: Q1 holds, and the rows equal protocols/shellgame-hosted-
 *    policy.yaml's (the same policy hosted natively by IMEP's Python host), row by row.
 *
 * Needs .venvs/policies (scripts/test-all.sh makes it): skipped with the reason without it, failed under CI=true.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { imep, unitIn } from '../campaign/cli-support.js';
import { ROOT } from '../campaign/helpers.js';
import { expectSameRows, readUnitRows, type UnitRow } from '../helpers/unit-rows.js';
import { POLICIES_PYTHON, startPolicyServer, type RunningPolicyServer } from '../helpers/policy-server.js';

const SAME_OPERATOR = ['--same-operator-reason', 'trying the example alone'];

type Row = UnitRow;
interface Adjudication {
  readonly gates: { gate: string; passed: boolean }[];
  readonly verdicts: { criterion: string; verdict: string }[];
}

const dirs: string[] = [];
const servers: RunningPolicyServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `npx imep campaign run PROTOCOL --through T …` from the repository root; the unit's rows (and adjudication). */
async function run(protocol: string, through: 'closeout' | 'seal'): Promise<{ rows: Row[]; adj: Adjudication | null }> {
  const dir = mkdtempSync(join(tmpdir(), 'imep-server-examples-'));
  dirs.push(dir);
  const args = ['campaign', 'run', protocol, '--through', through, '--campaigns-dir', join(dir, 'campaigns')];
  const r = await imep(through === 'closeout' ? [...args, ...SAME_OPERATOR] : args, ROOT);
  expect(r.code, r.stderr).toBe(0);
  const unit = unitIn(join(dir, 'campaigns')) as string;
  const rows = readUnitRows(unit);
  const adj =
    through === 'closeout'
      ? (JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as Adjudication)
      : null;
  return { rows, adj };
}

const wins = (rows: readonly Row[], wave: number, c: string): number =>
  rows.filter((x) => x.wave === wave && x.condition === c && x.success === true).length;

/** The port an example protocol names in `endpoint: ws://127.0.0.1:PORT` (the guide starts its server there). */
function portOf(protocol: string): number {
  const m = /endpoint: ws:\/\/127\.0\.0\.1:(\d+)/.exec(readFileSync(join(ROOT, protocol), 'utf8'));
  if (m?.[1] === undefined) throw new Error(`${protocol} names no loopback endpoint`);
  return Number(m[1]);
}

const MISSING = existsSync(POLICIES_PYTHON)
  ? undefined
  : `${POLICIES_PYTHON} is missing: run bash scripts/policies/setup.sh`;
it.runIf(process.env['CI'] === 'true')('CI: .venvs/policies exists (scripts/test-all.sh makes it)', () => {
  expect(MISSING).toBeUndefined();
});

describe('docs/your-policy.md shows the server commands this file runs', () => {
  it('each start command and campaign command, in the guide and in the example protocol', () => {
    const guide = readFileSync(join(ROOT, 'docs/your-policy.md'), 'utf8');
    for (const [protocol, server] of [
      ['examples/servers/history.yaml', 'examples/servers/vla_eval_history_server.py'],
      ['examples/servers/bank-hook.yaml', 'examples/servers/openpi_bank_server.py'],
    ] as const) {
      const start = `.venvs/policies/bin/python ${server} --port ${portOf(protocol)}`;
      const campaign = `npx imep campaign run ${protocol} --through closeout --same-operator-reason "${SAME_OPERATOR[1]}"`;
      for (const text of [guide, readFileSync(join(ROOT, protocol), 'utf8')]) {
        expect(text).toContain(start);
        expect(text).toContain(campaign);
      }
    }
  });
});

describe.skipIf(MISSING !== undefined)('the policy-server examples of docs/your-policy.md', () => {
  it('history.yaml: a vla-eval server given IMEP-owned history — Q1 holds, rows equal the Python-host form', async () => {
    const protocol = 'examples/servers/history.yaml';
    servers.push(
      await startPolicyServer('examples/servers/vla_eval_history_server.py', {
        healthPath: '/health',
        port: portOf(protocol),
        startMs: 120_000,
      }),
    );
    const served = await run(protocol, 'closeout');
    expect(served.adj?.verdicts.map((v) => [v.criterion, v.verdict])).toEqual([['Q1_eligibility', 'holds']]);
    expect(served.adj?.gates.every((g) => g.passed)).toBe(true);
    // A finds the ball on every seed; withheld history (what the server sees at step 0) leaves the middle cup only
    expect([wins(served.rows, 1, 'A'), wins(served.rows, 1, 'N_blk'), wins(served.rows, 1, 'C')]).toEqual([12, 4, 12]);
    expect([wins(served.rows, 2, 'U'), wins(served.rows, 2, 'T')]).toEqual([12, 0]);
    const hosted = await run('examples/servers/history-hosted.yaml', 'seal');
    expectSameRows(served.rows, hosted.rows);
  }, 600_000);

  it('bank-hook.yaml: an openpi server keeping its own bank — Q1 holds, rows equal the natively hosted policy', async () => {
    const protocol = 'examples/servers/bank-hook.yaml';
    servers.push(
      await startPolicyServer('examples/servers/openpi_bank_server.py', {
        healthPath: '/healthz',
        port: portOf(protocol),
        startMs: 120_000,
      }),
    );
    const served = await run(protocol, 'closeout');
    expect(served.adj?.verdicts.map((v) => [v.criterion, v.verdict])).toEqual([['Q1_eligibility', 'holds']]);
    expect([wins(served.rows, 2, 'A'), wins(served.rows, 2, 'N_blk'), wins(served.rows, 2, 'C')]).toEqual([24, 9, 24]);
    const native = await run('protocols/shellgame-hosted-policy.yaml', 'seal');
    expectSameRows(served.rows, native.rows);
  }, 600_000);
});
