/**
 * Issue #31 item 3: a hosted policy that tells a blocked read from an intact one. It uses what memory.read returns
 * — so wrong content (S_pi) misleads it and the read-path canary passes — unless the read comes back empty, as every
 * read does under N_blk, and then decides from a private copy of its memory. Before the blocked-reads check the
 * shipped hosted protocol published D_N = 0 and read "unresolved" on N_blk for it (blocking memory changes nothing).
 * Now the N family is withheld, with the reason in words on the terminal, in the adjudication and in the report,
 * and the independent cross-check agrees. The honest hosted policy keeps its verdict (test/e2e/hosted-policy.test.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const DETECTOR = `
import numpy as np
from imep_sim_bridge.policy_host import ShellGameMemoryPolicy, ball_feature, CUE_STEPS, CUP_X, CUP_Y, STEP_LEN


class BlockedReadDetector(ShellGameMemoryPolicy):
    """Decides from what memory.read returns, unless the read comes back empty: then from its own private copy."""

    name = "blocked-read-detector"
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
        if len(got) == 0 and len(own) > 0:  # a blocked read: fall back on the private copy
            for _, _, f in own:
                logits += f.astype(np.float64)[:3]
        else:
            for item in got:
                logits += np.asarray(item["leaves"]["feature"], np.float64)[:3]
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


POLICIES = {BlockedReadDetector.name: BlockedReadDetector}
`;

interface Row {
  condition: string;
  wave: number;
  success: boolean | null;
}
interface Adjudication {
  gates: { gate: string; kind: string; passed: boolean; detail: string; failing: string[]; onFail: string }[];
  verdicts: { criterion: string; verdict: string; reason: string }[];
}

describe('a hosted policy that detects blocked reads (issue #31 item 3)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-detector-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the read-path canary, but blocking changes nothing while wrong content does: the N family is withheld, in words, everywhere', async () => {
    const moduleDir = join(dir, 'policy-module');
    mkdirSync(moduleDir);
    writeFileSync(join(moduleDir, 'blocked_read_detector.py'), DETECTOR);
    let text = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
    text = text.replace(/^id: .*$/m, 'id: blocked-read-detector');
    text = text.replace(
      /name: shell-game-memory .*$/m,
      `name: blocked-read-detector\n  module: blocked_read_detector\n  pythonPath: [${moduleDir}]`,
    );
    text = text.replace(/start: 630000, end: 630023/, 'start: 680000, end: 680023');
    const file = join(dir, 'p.yaml');
    writeFileSync(file, text);
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
        'c',
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const unit = unitIn(join(dir, 'c')) as string;
    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    const wins = (wave: number, condition: string): number =>
      rows.filter((x) => x.wave === wave && x.condition === condition && x.success === true).length;
    // the attack, as the issue measured it: A 24/24, S_pi misled on some units (the canary passes), N_blk 24/24
    expect(wins(1, 'A')).toBe(24);
    expect(wins(2, 'A')).toBe(24);
    expect(wins(2, 'N_blk')).toBe(24);
    expect(wins(1, 'S_pi')).toBeLessThanOrEqual(18);
    const adjudication = JSON.parse(
      readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8'),
    ) as Adjudication;
    expect(adjudication.gates.find((g) => g.gate === 'read_canary')?.passed).toBe(true);
    const g = adjudication.gates.find((x) => x.gate === 'blocked-reads');
    expect(g?.passed).toBe(false);
    expect(g?.onFail).toBe('invalid');
    expect(g?.failing).toEqual(['N_blk']);
    expect(g?.detail).toMatch(
      /^decisions under blocking do not follow from what the policy was given: wrong content changes outcomes \(S_pi changes \d+\/24 outcomes against A .*\), yet with every read blocked N_blk changes 0\/24 outcomes against A \(b = 0, c = 0, exact McNemar p = 1\.00\)/,
    );
    const q1 = adjudication.verdicts.find((v) => v.criterion === 'Q1_eligibility');
    expect(q1?.verdict).toBe('invalid');
    expect(q1?.reason).toMatch(/^number withheld: gate blocked-reads: decisions under blocking do not follow/);
    // terminal: the verdict, then the reason in words
    expect(r.stdout).toMatch(/^ {2}Q1_eligibility: invalid — /m);
    expect(r.stdout).toMatch(
      /^ {2}blocked-reads \(numbers withheld\): decisions under blocking do not follow from what the policy was given/m,
    );
    expect(r.stdout).toMatch(/^cross-checked .*: agrees$/m);
    // the report says it too
    const html = readFileSync(join(dir, 'c', 'reports', basename(unit), 'report.html'), 'utf8');
    expect(html).toContain(
      'blocked-reads (numbers withheld): decisions under blocking do not follow from what the policy was given',
    );
  }, 300_000);
});
