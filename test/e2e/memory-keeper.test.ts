/**
 * Issue #24: a hosted policy that keeps its own copy of its memory. It makes every read through memory.read and
 * reports exactly the items it got back (so the path gate and RemotePolicy's read check pass), but decides from its
 * own copy. With reads blocked it still finds the ball every time, so without a read-path canary the ladder reads
 * "blocking reads does not lower success" — a statement about a read path the policy never used. The shipped hosted
 * protocol registers a read-canary gate (S_pi's scrambled reads must change some outcome): it catches the keeper,
 * withholds the read interventions' numbers (invalid) and says why; the same protocol without the gate gives the
 * misleading verdict and says the canary was not run.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const KEEPER = `
import numpy as np
from imep_sim_bridge.policy_host import ShellGameMemoryPolicy, ball_feature, CUE_STEPS, CUP_X, CUP_Y, STEP_LEN


class MemoryKeeper(ShellGameMemoryPolicy):
    """Reads through memory.read and reports what it got, but decides from its own copy of the features."""

    name = "memory-keeper"
    version = "1"

    def infer(self, slot, obs, memory):
        s = self._slots[slot]
        tool = obs["toolPosition"]
        feature = ball_feature(obs["rgb"])
        ep = s.episode
        own = self._select(s)
        items = [
            {"identity": {"slot": i, "scope": ep, "sourceEpisode": ep, "timestep": t, "version": 0}, "leaves": {"feature": f.copy()}}
            for i, t, f in own
        ]
        ctx = {"bank": self.bank, "scope": ep, "episode": ep, "queryIndex": s.t + 1, "decisionStep": True, "candidateCount": len(s.entries)}
        got = memory.read(self.bank, ctx, items)
        logits = np.zeros(3, np.float64)
        for _, _, f in own:  # its own copy, not what the read returned
            logits += f.astype(np.float64)[:3]
        action = np.zeros(2, np.float32)
        if s.t >= CUE_STEPS:
            target = int(np.argmax(logits)) if float(logits.sum()) > 0 else 0
            d = np.array([CUP_X[target], CUP_Y], np.float64) - tool.astype(np.float64)
            dist = float(np.linalg.norm(d))
            if dist > 0:
                action = (d * (min(STEP_LEN, dist) / dist)).astype(np.float32)
        s.entries.append((s.t, feature))
        s.t += 1
        return {"action": action, "decisionLogits": logits.astype(np.float32), "reads": [{"ctx": ctx, "identities": [dict(g["identity"]) for g in got]}]}


POLICIES = {MemoryKeeper.name: MemoryKeeper}
`;

function protocol(moduleDir: string, withGate: boolean): string {
  let text = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
  text = text.replace(/^id: .*$/m, `id: memory-keeper-${withGate ? 'gated' : 'ungated'}`);
  text = text.replace(
    /name: shell-game-memory .*$/m,
    `name: memory-keeper\n  module: memory_keeper\n  pythonPath: [${moduleDir}]`,
  );
  text = text.replace(
    /start: 630000, end: 630023/,
    withGate ? 'start: 660000, end: 660023' : 'start: 670000, end: 670023',
  );
  if (!withGate) {
    const before = text;
    text = text.replace(/^ {2}- \{ id: read_canary, kind: read-canary.*\n/m, '');
    if (text === before) throw new Error('the shipped hosted protocol has no read_canary gate line to remove');
  }
  return text;
}

interface Row {
  condition: string;
  wave: number;
  success: boolean | null;
}
interface Adjudication {
  gates: { gate: string; kind: string; passed: boolean; detail: string; failing: string[] }[];
  verdicts: { criterion: string; verdict: string }[];
}

describe('a hosted policy that keeps its own copy of its memory (issue #24)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-keeper-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const moduleDir = join(dir, 'policy-module');
  mkdirSync(moduleDir);
  writeFileSync(join(moduleDir, 'memory_keeper.py'), KEEPER);

  async function run(withGate: boolean): Promise<{ stdout: string; rows: Row[]; adjudication: Adjudication }> {
    const file = join(dir, `p-${withGate}.yaml`);
    writeFileSync(file, protocol(moduleDir, withGate));
    const campaigns = join(dir, `c-${withGate}`);
    const r = await imep(
      [
        'campaign',
        'run',
        file,
        '--through',
        'closeout',
        '--same-operator-reason',
        'single-operator test',
        '--campaigns-dir',
        campaigns,
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const unit = unitIn(campaigns) as string;
    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    const adjudication = JSON.parse(
      readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8'),
    ) as Adjudication;
    return { stdout: r.stdout, rows, adjudication };
  }

  const successes = (rows: Row[], wave: number, condition: string): number =>
    rows.filter((x) => x.wave === wave && x.condition === condition && x.success === true).length;

  it('the canary catches it: blocked and scrambled reads change nothing, the read interventions are withheld and the report says why', async () => {
    const { stdout, rows, adjudication } = await run(true);
    // the attack: its decisions ignore the reads — N_blk and S_pi leave every outcome as A's
    expect(successes(rows, 2, 'A')).toBe(24);
    expect(successes(rows, 2, 'N_blk')).toBe(24);
    expect(successes(rows, 1, 'S_pi')).toBe(24);
    const gate = adjudication.gates.find((g) => g.gate === 'read_canary');
    expect(gate?.passed).toBe(false);
    expect(gate?.detail).toMatch(
      /^read path not exercised: S_pi \(wrong content at \d+\/\d+ reads with history\) changes 0\/24 outcomes against A/,
    );
    expect([...(gate?.failing ?? [])].sort()).toEqual(['N_blk', 'S_pi', 'U']);
    // the only criterion reads on N_blk: withheld, not "not detected"
    expect(adjudication.verdicts).toEqual([
      expect.objectContaining({ criterion: 'Q1_eligibility', verdict: 'invalid' }),
    ]);
    expect(stdout).toMatch(/^ {2}Q1_eligibility: invalid — /m);
    expect(stdout).toMatch(/^ {2}read-path canary read_canary: FAILED — read path not exercised/m);
  }, 240_000);

  it('without the gate the same policy gets a verdict about a read path it never used, and the run says the canary was not run', async () => {
    const { stdout, rows, adjudication } = await run(false);
    expect(successes(rows, 2, 'N_blk')).toBe(24);
    const q1 = adjudication.verdicts.find((v) => v.criterion === 'Q1_eligibility');
    expect(q1?.verdict).not.toBe('invalid');
    expect(q1?.verdict).not.toBe('holds');
    expect(stdout).toMatch(/^ {2}read-path canary: NOT RUN — the protocol registers no read-canary gate/m);
  }, 240_000);
});
