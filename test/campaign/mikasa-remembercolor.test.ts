/**
 * Real MIKASA-Robo through closeout (protocols/mikasa-remembercolor.yaml): RememberColor3-VLA-v0 on PhysX CPU
 * behind the sim-bridge, the hosted known-answer policy remember-color-memory, conditions A, U, N_blk, C.
 *
 * Needs the stack `bash scripts/setup-sims.sh mikasa` installs; `bash scripts/sims/mikasa.sh test` runs this
 * file with IMEP_REAL_MIKASA=1 and IMEP_PYTHON set. Without IMEP_REAL_MIKASA it is skipped (the bare suite has
 * no ManiSkill).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { ROOT } from './helpers.js';
import { imep, unitIn } from './cli-support.js';

const REAL = process.env['IMEP_REAL_MIKASA'] === '1';
const PROTOCOL = join(ROOT, 'protocols/mikasa-remembercolor.yaml');
const N = 12;

interface Row {
  readonly wave: number;
  readonly condition: string;
  readonly seed: number;
  readonly status: string;
  readonly failure: { code: string } | null;
  readonly success: boolean | null;
  readonly steps: number;
  readonly actionDigest: string;
  readonly reads: {
    total: number;
    empty: number;
    withHistory: number;
    substituted: number;
    decisionQueries: number;
    coveredDecisionQueries: number;
    covered: boolean | null;
  };
}

describe.skipIf(!REAL)('real MIKASA-Robo campaign (IMEP_REAL_MIKASA=1)', () => {
  let dir = '';
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('`imep campaign run protocols/mikasa-remembercolor.yaml --through closeout --batch 1`: memory matters, reads blocked fall to chance', async () => {
    expect(process.env['IMEP_PYTHON'], 'IMEP_PYTHON (the venv bash scripts/setup-sims.sh mikasa prints)').toBeTruthy();
    dir = mkdtempSync(join(tmpdir(), 'imep-mikasa-'));
    // --batch 1: one ManiSkill env in the server (each extra env makes every reset's gc.collect slower; rows do not change)
    const r = await imep(
      [
        'campaign',
        'run',
        PROTOCOL,
        '--through',
        'closeout',
        '--same-operator-reason',
        'real-MIKASA CI test',
        '--batch',
        '1',
        '--campaigns-dir',
        'cli',
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^simulator: sim-bridge adapter mikasa: 1 server started by IMEP \(\S+ -m imep_sim_bridge serve /m,
    );
    expect(r.stdout).toMatch(/^policy: remote remember-color-memory v1 on imep-policy-host /m);
    const unit = unitIn(join(dir, 'cli')) as string;
    expect((await readUnitState(unit)).state).toBe('closed');
    expect((await verifyUnit(unit)).ok).toBe(true);

    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    const of = (wave: number, c: string): Row[] => rows.filter((x) => x.wave === wave && x.condition === c);
    const wins = (rs: readonly Row[]): number => rs.filter((x) => x.success === true).length;
    expect(rows).toHaveLength(8 * N);
    // RememberColor3-VLA-v0's registered limit; removed rows (S/T without a donor holding enough records) never ran
    expect(rows.every((x) => (x.status === 'removed' ? x.steps === 0 : x.steps === 25))).toBe(true);
    expect([wins(of(1, 'A')), wins(of(1, 'U')), wins(of(2, 'A')), wins(of(2, 'C'))]).toEqual([N, N, N, N]);
    expect(of(2, 'C').map((x) => x.actionDigest)).toEqual(of(2, 'A').map((x) => x.actionDigest));
    // N_blk: the policy goes to colour 0, right only where the cue was colour 0 (5 of these 12 seeds; chance 1/3)
    expect(wins(of(2, 'N_blk'))).toBe(5);
    expect(of(2, 'N_blk').every((x) => x.reads.total > 0 && x.reads.empty === x.reads.total)).toBe(true);
    // reads start once the candidates are out (decisionFromStep 2 from the env's spec): all are decision queries
    for (const x of rows.filter((r) => r.status === 'ok')) expect(x.reads.decisionQueries).toBe(x.reads.total);
    for (const x of of(1, 'U')) {
      expect(x.reads.substituted).toBe(x.reads.withHistory);
      expect(x.reads.coveredDecisionQueries).toBe(x.reads.decisionQueries);
    }
    // wave 3: S and T swap the stored cue at read time for a donor's with the same / another colour (the fact
    // RememberColor declares): S leaves every outcome as A had it, T sends the policy to the donor's colour
    const a3 = new Map(of(3, 'A').map((x) => [x.seed, x.success]));
    const ran = (c: string): Row[] => of(3, c).filter((x) => x.status === 'ok');
    expect(ran('S').length).toBeGreaterThanOrEqual(4);
    expect(ran('T').length).toBeGreaterThanOrEqual(4);
    for (const x of ran('S')) expect([x.success, x.reads.covered]).toEqual([a3.get(x.seed), true]);
    for (const x of ran('T')) expect([x.success, x.reads.covered]).toEqual([false, true]);
    for (const x of [...of(3, 'S'), ...of(3, 'T')].filter((r) => r.status === 'removed'))
      expect(x.failure?.code).toBe('E_DONOR_SHORT');
    const adjudication = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as {
      gates: { gate: string; passed: boolean }[];
      verdicts: { criterion: string; verdict: string }[];
    };
    expect(adjudication.gates.map((g) => [g.gate, g.passed])).toEqual([
      ['competence', true],
      ['path', true],
      ['replicate', true],
      ['G_surv', true],
      ['read_canary', true],
      // the validity checks every protocol runs (docs/validity-checks.md): no unit removed; N_blk changes outcomes
      ['informative-removal', true],
      ['blocked-reads', true],
    ]);
    expect(adjudication.verdicts).toEqual([expect.objectContaining({ criterion: 'Q1_eligibility', verdict: 'holds' })]);
    // the stack the server reported (hello.environment.mikasa) is in the run session's record and the report
    const run = JSON.parse(readFileSync(join(unit, 'rows/run.json'), 'utf8')) as {
      sessions: {
        simulatorEnvironment?: { adapter: string; reported: { versions: Record<string, string>; vulkanIcd: string } };
      }[];
    };
    const stack = run.sessions[0]?.simulatorEnvironment;
    expect(stack?.adapter).toBe('mikasa');
    expect([
      stack?.reported.versions['mikasa-robo-suite'],
      stack?.reported.versions['mani_skill'],
      stack?.reported.versions['sapien'],
    ]).toEqual(['1.0.0', '3.0.0b15', '3.0.3']);
    expect(stack?.reported.vulkanIcd).toMatch(/imep_lvp_icd\.json$/);
    const report = readFileSync(join(dir, 'cli', 'reports', unit.split('/').pop() as string, 'report.md'), 'utf8');
    expect(report).toMatch(
      /\| simulator stack, session 1 \(start\) \| mikasa — versions: .*mani_skill 3\.0\.0b15.*; vulkanIcd: \S+imep_lvp_icd\.json \|/,
    );
  }, 600_000);
});
