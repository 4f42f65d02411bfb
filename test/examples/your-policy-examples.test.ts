/**
 * The runnable examples of docs/your-policy.md, run exactly as the guide says, from the repository root, with the
 * built CLI (what `npx imep` runs) into a temporary campaigns folder:
 *
 * 1. examples/python-host-torch: a PyTorch policy hosted by IMEP's Python policy host (`policy: { runtime: remote,
 *    module, pythonPath, python: .venvs/policies/bin/python }`) through closeout — A finds the ball on every seed,
 *    N_blk falls to the cup-0 rate, C replicates A, the read-path canary passes, precommit froze the module files.
 * 2. examples/onnx-checkpoint: export.py writes the checkpoint folder (byte for byte the committed one), and the same
 *    model as an in-process ONNX checkpoint runs through closeout with the same outcome per seed as the hosted one.
 *
 * Needs .venvs/policies (`bash scripts/policies/setup.sh`; scripts/test-all.sh runs it first). Without it the suite
 * is skipped with that reason, except under CI=true, where a missing venv is a setup fault and fails.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { imep, unitIn } from '../campaign/cli-support.js';
import { ROOT } from '../campaign/helpers.js';

const PYTHON = '.venvs/policies/bin/python'; // as the guide and the example protocols write it (from the repository root)
const MODULES = ['torch', 'onnx', 'onnxruntime', 'zmq', 'msgpack', 'numpy'];
/** Why the examples cannot run here (null: they can): no venv, or one set up before a module they need was pinned. */
function skipReason(): string | null {
  if (!existsSync(join(ROOT, PYTHON))) return `${PYTHON} is missing: run bash scripts/policies/setup.sh`;
  const probe = `import importlib.util as u; print(' '.join(m for m in ${JSON.stringify(MODULES)} if u.find_spec(m) is None))`;
  const r = spawnSync(join(ROOT, PYTHON), ['-c', probe], { encoding: 'utf8', timeout: 30_000 });
  const missing = r.status === 0 ? r.stdout.trim() : `(${PYTHON} did not run: ${r.stderr.trim() || r.error?.message})`;
  return missing === '' ? null : `${PYTHON} lacks ${missing}: rerun bash scripts/policies/setup.sh`;
}
const SKIP = skipReason();
const N = 24;
const SAME_OPERATOR = ['--same-operator-reason', 'trying the example alone'];

interface Row {
  readonly wave: number;
  readonly condition: string;
  readonly seed: number;
  readonly success: boolean | null;
  readonly steps: number;
  readonly actionDigest: string;
  readonly reads: { total: number; empty: number; withHistory: number; covered: boolean | null };
}
interface Adjudication {
  readonly gates: { gate: string; passed: boolean }[];
  readonly verdicts: { criterion: string; verdict: string }[];
}

const rowsOf = (unit: string): Row[] =>
  readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
const of = (rows: readonly Row[], wave: number, condition: string): Row[] =>
  rows.filter((r) => r.wave === wave && r.condition === condition).sort((a, b) => a.seed - b.seed);
const successes = (rows: readonly Row[]): number => rows.filter((r) => r.success === true).length;
/** Per seed (ascending), 1 = success: the outcome vector of one condition. */
const outcomes = (rows: readonly Row[], wave: number, condition: string): string =>
  of(rows, wave, condition)
    .map((r) => (r.success === true ? '1' : '0'))
    .join('');
const adjudicationOf = (unit: string): Adjudication =>
  JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as Adjudication;
const gates = (a: Adjudication): Record<string, boolean> => Object.fromEntries(a.gates.map((g) => [g.gate, g.passed]));
const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('docs/your-policy.md shows the commands this file runs', () => {
  it('each example command, as written in the guide and in the example it runs', () => {
    const guide = readFileSync(join(ROOT, 'docs/your-policy.md'), 'utf8');
    const commands = {
      'examples/python-host-torch/protocol.yaml': `npx imep campaign run examples/python-host-torch/protocol.yaml --through closeout --same-operator-reason "${SAME_OPERATOR[1]}"`,
      'examples/onnx-checkpoint/export.py': `${PYTHON} examples/onnx-checkpoint/export.py --out examples/onnx-checkpoint/shell-net`,
      'examples/onnx-checkpoint/protocol.yaml': `npx imep campaign run examples/onnx-checkpoint/protocol.yaml --through closeout --same-operator-reason "${SAME_OPERATOR[1]}"`,
    };
    for (const [file, command] of Object.entries(commands)) {
      expect(guide).toContain(command);
      // the example's own header names it (without the operator's reason, which is the user's to give)
      expect(readFileSync(join(ROOT, file), 'utf8')).toContain(command.replace(/ --same-operator-reason .*$/, ''));
    }
  });
});

if (SKIP !== null && process.env['CI'] === 'true') {
  describe('docs/your-policy.md examples', () => {
    it('needs .venvs/policies under CI (scripts/test-all.sh sets it up)', () => {
      expect.fail(SKIP);
    });
  });
} else {
  if (SKIP !== null) console.warn(`test/examples/your-policy-examples.test.ts skipped: ${SKIP}`);
  describe.skipIf(SKIP !== null)('docs/your-policy.md examples (.venvs/policies)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-your-policy-'));
    let torchRows: Row[] = [];
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('python-host-torch: `npx imep campaign run examples/python-host-torch/protocol.yaml --through closeout`', async () => {
      const campaigns = join(dir, 'torch');
      const r = await imep(
        [
          'campaign',
          'run',
          'examples/python-host-torch/protocol.yaml',
          '--through',
          'closeout',
          ...SAME_OPERATOR,
          '--campaigns-dir',
          campaigns,
        ],
        ROOT,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        /^policy: remote torch-shell-memory v1 on imep-policy-host \S+ \(started by IMEP: \S+\/\.venvs\/policies\/bin\/python -m imep_sim_bridge\.policy_host --endpoint ipc:\/\/… --policy torch-shell-memory --module torch_shell_policy /m,
      );
      expect(r.stdout).toMatch(/^ {2}Q1_eligibility: holds — /m);
      const unit = unitIn(campaigns) as string;
      const rows = rowsOf(unit);
      torchRows = rows;
      expect(rows).toHaveLength(6 * N);
      expect(rows.every((x) => x.success !== null)).toBe(true);
      // with its memory it finds the ball on every seed; reads blocked: its memoryless default, cup 0
      expect(successes(of(rows, 1, 'A'))).toBe(N);
      expect(successes(of(rows, 2, 'A'))).toBe(N);
      expect(successes(of(rows, 2, 'N_blk'))).toBe(9);
      expect(of(rows, 2, 'N_blk').every((x) => x.reads.total === x.steps && x.reads.empty === x.steps)).toBe(true);
      expect(of(rows, 2, 'C').map((x) => x.actionDigest)).toEqual(of(rows, 2, 'A').map((x) => x.actionDigest));
      expect(successes(of(rows, 1, 'U'))).toBe(N); // one ULP on a pixel count moves no decision
      expect(successes(of(rows, 1, 'S_pi'))).toBe(8); // permuting the cup counts misleads it
      for (const x of of(rows, 1, 'S_pi')) expect(x.reads.covered).toBe(true);
      const a = adjudicationOf(unit);
      expect(gates(a)).toMatchObject({
        competence: true,
        path: true,
        replicate: true,
        G_surv: true,
        read_canary: true,
      });
      expect(a.verdicts).toEqual([expect.objectContaining({ criterion: 'Q1_eligibility', verdict: 'holds' })]);
      // precommit froze the policy's module and the file its identity_files() names
      const pre = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as {
        hostedPolicy: { version: string; memory: unknown; files: { path: string; sha256: string }[] };
      };
      expect(pre.hostedPolicy.version).toBe('1');
      expect(pre.hostedPolicy.memory).toEqual({ bank: 'episode-local', banks: ['perceptual'], k: 4 });
      expect(pre.hostedPolicy.files).toEqual([
        expect.objectContaining({
          path: 'shell_net.py',
          sha256: sha256(join(ROOT, 'examples/python-host-torch/shell_net.py')),
        }),
        expect.objectContaining({
          path: 'torch_shell_policy.py',
          sha256: sha256(join(ROOT, 'examples/python-host-torch/torch_shell_policy.py')),
        }),
      ]);
    }, 240_000);

    it('onnx-checkpoint: export.py writes the committed folder byte for byte', () => {
      const out = join(dir, 'shell-net');
      const r = spawnSync(PYTHON, ['examples/onnx-checkpoint/export.py', '--out', out], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe(''); // no warning left unexplained
      expect(r.stdout).toMatch(/^wrote .*\/model\.json, encode\.onnx \(\d+ bytes\), act\.onnx \(\d+ bytes\)$/m);
      const committed = join(ROOT, 'examples/onnx-checkpoint/shell-net');
      expect(readdirSync(out).sort()).toEqual(['act.onnx', 'encode.onnx', 'model.json']);
      expect(readdirSync(committed).sort()).toEqual(['act.onnx', 'encode.onnx', 'model.json']);
      for (const f of ['act.onnx', 'encode.onnx', 'model.json'])
        expect(sha256(join(out, f)), f).toBe(sha256(join(committed, f)));
      // the protocol binds model.json by the hash the guide tells you to take (sha256sum)
      expect(readFileSync(join(ROOT, 'examples/onnx-checkpoint/protocol.yaml'), 'utf8')).toContain(
        `sha256: ${sha256(join(out, 'model.json'))}`,
      );
    }, 120_000);

    it('onnx-checkpoint: `npx imep campaign run examples/onnx-checkpoint/protocol.yaml --through closeout`', async () => {
      const campaigns = join(dir, 'onnx');
      const r = await imep(
        [
          'campaign',
          'run',
          'examples/onnx-checkpoint/protocol.yaml',
          '--through',
          'closeout',
          ...SAME_OPERATOR,
          '--campaigns-dir',
          campaigns,
        ],
        ROOT,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^ {2}Q1_eligibility: holds — /m);
      const unit = unitIn(campaigns) as string;
      const rows = rowsOf(unit);
      expect(rows).toHaveLength(7 * N);
      expect(successes(of(rows, 1, 'A'))).toBe(N);
      expect(successes(of(rows, 2, 'N_blk'))).toBe(9);
      expect(successes(of(rows, 1, 'T_mu'))).toBe(8);
      expect(of(rows, 2, 'C').map((x) => x.actionDigest)).toEqual(of(rows, 2, 'A').map((x) => x.actionDigest));
      const a = adjudicationOf(unit);
      expect(gates(a)).toMatchObject({
        competence: true,
        path: true,
        replicate: true,
        G_surv: true,
        read_canary: true,
      });
      // the same model, hosted in Python by torch and run in process by onnxruntime: the same outcome on every seed
      if (torchRows.length > 0) {
        for (const [wave, condition] of [
          [1, 'A'],
          [1, 'U'],
          [1, 'S_pi'],
          [2, 'A'],
          [2, 'N_blk'],
          [2, 'C'],
        ] as const)
          expect(outcomes(rows, wave, condition), `${condition} wave ${wave}`).toBe(
            outcomes(torchRows, wave, condition),
          );
      }
    }, 120_000);
  });
}
