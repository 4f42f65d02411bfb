/**
 * The learned memory policies on the REAL simulators, run in process by ONNX Runtime (onnxruntime-node; no policy
 * host), through closeout, each beside its memoryless twin:
 *   protocols/mikasa-learned-memvla.yaml + mikasa-learned-blind.yaml  (IMEP_REAL_MIKASA=1, bash scripts/sims/mikasa.sh test)
 *   protocols/libero-learned-memvla.yaml + libero-learned-blind.yaml  (IMEP_REAL_LIBERO=1, bash scripts/sims/libero.sh test)
 * IMEP_PYTHON is the simulator's venv (the sim-bridge server only: the policy never leaves the orchestrator).
 *
 * What is asserted: the twin's outputs cannot depend on its bank (memory weight exactly 0), so every read condition
 * gives it the anchor's exact actions, seed by seed, and its read canary fails; the learned policy's numbers are
 * what checkpoints/README.md ("Real simulators") reports for these bands — a change in the weights, the bank or the
 * interventions shows up here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { expectSameRows, readUnitRows, type UnitRow } from '../helpers/unit-rows.js';
import { imep, unitIn } from './cli-support.js';
import { ROOT } from './helpers.js';

interface Row extends UnitRow {
  readonly reads: { total: number; empty: number; withHistory: number; substituted: number; covered: boolean | null };
}
interface Adjudication {
  readonly gates: { gate: string; passed: boolean }[];
  readonly verdicts: { criterion: string; verdict: string }[];
}
interface Unit {
  readonly precommit: { hostedPolicy?: unknown; checkpointHashes: Record<string, string> };
  readonly rows: Row[];
  readonly adjudication: Adjudication;
  readonly stdout: string;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function runThroughCloseout(protocol: string, through: 'seal' | 'closeout' = 'closeout'): Promise<Unit> {
  expect(process.env['IMEP_PYTHON'], 'IMEP_PYTHON (the venv bash scripts/setup-sims.sh prints)').toBeTruthy();
  const dir = mkdtempSync(join(tmpdir(), 'imep-learned-'));
  dirs.push(dir);
  const r = await imep(
    [
      'campaign',
      'run',
      protocol.startsWith('/') ? protocol : join(ROOT, 'protocols', protocol),
      '--through',
      through,
      '--same-operator-reason',
      'real-simulator learned-policy CI test',
      '--batch',
      '1',
      '--campaigns-dir',
      'cli',
    ],
    dir,
  );
  expect(r.code, r.stderr).toBe(0);
  const unit = unitIn(join(dir, 'cli')) as string;
  expect((await readUnitState(unit)).state).toBe(through === 'closeout' ? 'closed' : 'sealed');
  expect((await verifyUnit(unit)).ok).toBe(true);
  const rows = readUnitRows<Row>(unit);
  const adjudication =
    through === 'closeout'
      ? (JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as Adjudication)
      : { gates: [], verdicts: [] };
  const precommit = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as Unit['precommit'];
  return { precommit, rows, adjudication, stdout: r.stdout };
}

const of = (u: Unit, wave: number, c: string): Row[] => u.rows.filter((x) => x.wave === wave && x.condition === c);
const wins = (rs: readonly Row[]): number => rs.filter((x) => x.success === true).length;
/** The policy ran in the orchestrator (the checkpoint runtime: ONNX Runtime), not in a policy host. */
function expectInProcess(u: Unit, name: string): void {
  expect(u.stdout).not.toMatch(/^policy: remote /m);
  expect(u.precommit.hostedPolicy).toBeUndefined();
  expect(Object.keys(u.precommit.checkpointHashes).some((k) => k.includes(name))).toBe(true);
}

const gate = (u: Unit, id: string): boolean | undefined => u.adjudication.gates.find((g) => g.gate === id)?.passed;

/** The twin: every read condition gives the anchor's exact actions, seed by seed; its read canary fails. */
function assertTwinIgnoresItsBank(u: Unit, n: number, name: string): void {
  expectInProcess(u, name);
  for (const [wave, conditions] of [
    [1, ['U']],
    [2, ['N_blk', 'C']],
    [3, ['S', 'T']],
  ] as const) {
    const anchor = new Map(of(u, wave, 'A').map((x) => [x.seed, x.actionDigest]));
    expect(anchor.size).toBe(n);
    for (const c of conditions)
      for (const x of of(u, wave, c).filter((r) => r.status === 'ok'))
        expect([c, x.seed, x.actionDigest]).toEqual([c, x.seed, anchor.get(x.seed)]);
  }
  // the reads were made and intervened on — the twin reads its bank every step like the learned policy
  expect(of(u, 2, 'N_blk').every((x) => x.reads.total > 0 && x.reads.empty === x.reads.total)).toBe(true);
  expect(
    of(u, 3, 'T')
      .filter((x) => x.status === 'ok')
      .every((x) => x.reads.substituted > 0),
  ).toBe(true);
  expect(gate(u, 'read_canary')).toBe(false);
}

describe.skipIf(process.env['IMEP_REAL_MIKASA'] !== '1')(
  'learned memory policy on real MIKASA-Robo (IMEP_REAL_MIKASA=1)',
  () => {
    it('mikasa-rc3-memvla through closeout: it uses the remembered colour — blocked reads fall to chance, a different-colour donor sends it to that colour', async () => {
      const u = await runThroughCloseout('mikasa-learned-memvla.yaml');
      expectInProcess(u, 'mikasa-rc3-memvla');
      expect(u.rows).toHaveLength(8 * 24);
      expect(u.rows.every((x) => x.status === 'ok' && x.steps === 25)).toBe(true);
      expect([wins(of(u, 1, 'A')), wins(of(u, 2, 'A')), wins(of(u, 3, 'A'))]).toEqual([24, 24, 24]);
      // one ULP per read and the exact replicate change nothing; C's actions are A's, byte for byte
      expect([wins(of(u, 1, 'U')), wins(of(u, 2, 'C'))]).toEqual([24, 24]);
      expect(of(u, 2, 'C').map((x) => x.actionDigest)).toEqual(of(u, 2, 'A').map((x) => x.actionDigest));
      // reads blocked: 6/24 (chance is 1/3) — every read empty
      expect(wins(of(u, 2, 'N_blk'))).toBe(6);
      expect(of(u, 2, 'N_blk').every((x) => x.reads.total > 0 && x.reads.empty === x.reads.total)).toBe(true);
      // a same-colour donor's records: every success kept; a different-colour donor's: every success lost
      expect([wins(of(u, 3, 'S')), wins(of(u, 3, 'T'))]).toEqual([24, 0]);
      for (const x of [...of(u, 3, 'S'), ...of(u, 3, 'T')])
        expect([x.reads.covered, x.reads.substituted > 0]).toEqual([true, true]);
      expect(u.adjudication.gates.map((g) => [g.gate, g.passed])).toEqual([
        ['competence', true],
        ['path', true],
        ['replicate', true],
        ['G_surv', true],
        ['read_canary', true],
        ['informative-removal', true],
        ['blocked-reads', true],
      ]);
      expect(u.adjudication.verdicts.map((v) => [v.criterion, v.verdict])).toEqual([['Q1_eligibility', 'holds']]);
    }, 900_000);

    it('the same weights served by the Python policy host (onnxruntime for Python): the same rows, condition by condition', async () => {
      // protocols/mikasa-learned-memvla.yaml with its checkpoint: block replaced by the hosted runtime serving the folder
      const text = readFileSync(join(ROOT, 'protocols/mikasa-learned-memvla.yaml'), 'utf8');
      const hostedYaml = text
        .replace(
          /^checkpoint:\n(?: {2}.*\n)+/m,
          'policy: { runtime: remote, name: imep-checkpoint, checkpoint: checkpoints/mikasa-rc3-memvla }\n',
        )
        .replace('id: mikasa-learned-memvla', 'id: mikasa-learned-memvla-hosted');
      expect(hostedYaml).toContain('name: imep-checkpoint');
      const file = join(mkdtempSync(join(tmpdir(), 'imep-learned-hosted-')), 'hosted.yaml');
      dirs.push(join(file, '..'));
      writeFileSync(
        file,
        hostedYaml
          .replace('path: checkpoints', `path: ${ROOT}/checkpoints`)
          .replace('checkpoint: checkpoints/', `checkpoint: ${ROOT}/checkpoints/`),
      );
      const inProcess = await runThroughCloseout('mikasa-learned-memvla.yaml', 'seal');
      const hosted = await runThroughCloseout(file, 'seal');
      expect(hosted.stdout).toMatch(/^policy: remote imep-checkpoint /m);
      expectSameRows(hosted.rows, inProcess.rows);
    }, 1_200_000);

    it('mikasa-rc3-blind (the memoryless twin) through closeout: the same actions under every read condition', async () => {
      const u = await runThroughCloseout('mikasa-learned-blind.yaml');
      expect(u.rows).toHaveLength(8 * 24);
      assertTwinIgnoresItsBank(u, 24, 'mikasa-rc3-blind');
    }, 900_000);
  },
);

describe.skipIf(process.env['IMEP_REAL_LIBERO'] !== '1')(
  'learned memory policy on real LIBERO (IMEP_REAL_LIBERO=1)',
  () => {
    it('libero-drawer-memvla through closeout: a different-goal donor flips every success, but blocked reads do not lower success (Q1 unresolved)', async () => {
      const u = await runThroughCloseout('libero-learned-memvla.yaml');
      expectInProcess(u, 'libero-drawer-memvla');
      expect(u.rows).toHaveLength(8 * 16);
      expect([wins(of(u, 1, 'A')), wins(of(u, 2, 'A')), wins(of(u, 3, 'A'))]).toEqual([10, 10, 10]);
      expect([wins(of(u, 1, 'U')), wins(of(u, 2, 'C'))]).toEqual([10, 10]);
      expect(of(u, 2, 'C').map((x) => x.actionDigest)).toEqual(of(u, 2, 'A').map((x) => x.actionDigest));
      expect(wins(of(u, 2, 'N_blk'))).toBe(8);
      expect(of(u, 2, 'N_blk').every((x) => x.reads.total > 0 && x.reads.empty === x.reads.total)).toBe(true);
      // read-time donor swaps need a donor that holds as many records as the receiver at each read: episodes end at
      // their first success, so shorter donors leave some units without one (removed, E_DONOR_SHORT, reported)
      const ok = (c: string): Row[] => of(u, 3, c).filter((x) => x.status === 'ok');
      expect([ok('S').length, wins(ok('S')), ok('T').length, wins(ok('T'))]).toEqual([12, 8, 9, 0]);
      for (const x of [...ok('S'), ...ok('T')]) expect(x.reads.covered).toBe(true);
      expect(u.adjudication.gates.map((g) => [g.gate, g.passed])).toEqual([
        ['competence', true],
        ['path', true],
        ['replicate', true],
        ['G_surv', true],
        ['read_canary', true],
        ['informative-removal', true],
        ['blocked-reads', true],
      ]);
      expect(u.adjudication.verdicts.map((v) => [v.criterion, v.verdict])).toEqual([['Q1_eligibility', 'unresolved']]);
    }, 1_800_000);

    it('libero-drawer-blind (the memoryless twin) through closeout: the same actions under every read condition', async () => {
      const u = await runThroughCloseout('libero-learned-blind.yaml');
      expect(u.rows).toHaveLength(8 * 16);
      assertTwinIgnoresItsBank(u, 16, 'libero-drawer-blind');
    }, 1_800_000);
  },
);
