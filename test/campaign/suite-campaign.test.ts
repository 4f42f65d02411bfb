/**
 * A suite protocol through the whole pipeline (the built CLI: run → seal → adjudicate → cross-check → closeout →
 * report) on the lite simulator: lite-memory's RememberColor3 and RememberColor5, the structured-bank checkpoint
 * lite-memvla-rc, A, C, S, T at attempt 2; a per-task p-below criterion on D_T in a Holm family over the tasks;
 * frames of A and T. T replaces the cue the policy remembers with another colour's, so it flips every success.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { imep } from './cli-support.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-suite-campaign-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const YAML = `version: 1
id: lite-suite-e2e
title: lite suite end to end
simulator: { kind: lite }
suite:
  benchmark: lite-memory
  tasks: [RememberColor3, RememberColor5]
  kwargs: { reshowCueOnRetry: false, strict: false }
  perTask:
    estimands: [rho_T, D_T]
    criteria: [Q_T]
  multiplicity: { method: holm, alpha: 0.05 }
checkpoint: { path: checkpoints/lite-memvla-rc, file: model.json, sha256: 8ab4291fc597bec149bc2304e42cf62c61866c3d9e103d6ef6dde211f62de9a5 }
memory: { bank: structured-pcmb, capacity: 16, k: 4, gate: 0.45, persistence: across-attempts }
seeds: { bands: [{ start: 9001, end: 9012 }] }
n: 12
attempts: { count: 2, registered: 2 }
conditions:
  - { id: A, kind: A }
  - { id: C, kind: C }
  - { id: S, kind: S, seed: 20260824, installAt: { attempt: 2, before: first-query } }
  - { id: T, kind: T, seed: 20260825, installAt: { attempt: 2, before: first-query } }
waves:
  - { id: 1, conditions: [A, C, S, T], anchor: A }
estimands:
  - { id: rho_C, kind: rho, reference: A, intervention: C }
  - { id: rho_T, kind: rho, reference: A, intervention: T }
  - { id: D_T, kind: D, reference: A, intervention: T }
criteria:
  - { id: Q_T, estimand: D_T, rule: p-below, test: mcnemar-exact, direction: greater, alpha: 0.05 }
gates:
  - { id: replicate, kind: replicate, condition: C, reference: A, maxChanged: 0, hard: true, onFail: invalid }
executionFailures: { policy: record }
frames: { steps: [0, 5], conditions: [A, T], units: 2 }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, targetColorIndex, firstVisit, decisionCorrect, lastTouch, cueShown]
`;

describe('a lite suite through closeout and its report', () => {
  it('per-task verdicts on the Holm-adjusted p, a section per task with its filmstrips', async () => {
    writeFileSync(join(dir, 'suite.yaml'), YAML);
    const campaigns = join(dir, 'campaigns');
    const r = await imep(
      [
        'campaign',
        'run',
        'suite.yaml',
        '--through',
        'closeout',
        '--same-operator-reason',
        'suite test',
        '--campaigns-dir',
        campaigns,
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('cross-checked');
    // b = 12, c = 0 per task: one-sided p = 2^−12, Holm-adjusted 2 · 2^−12 = 2^−11 on both
    for (const line of ['Q_T: holds', 'Q_T@RememberColor3: holds', 'Q_T@RememberColor5: holds'])
      expect(r.stdout).toContain(line);
    const [unit] = readdirSync(join(campaigns, 'reports'));
    const md = readFileSync(join(campaigns, 'reports', unit!, 'report.md'), 'utf8');
    expect(md).toContain('## Suite: lite-memory');
    expect(md).toContain('| Q_T_tasks | 0.05 | D_T@RememberColor5 | 0.0002441 | 0.0004883 | yes |');
    expect(md).toContain('| T | 1 | 0/12 (0.00%) | [0.00%, 26.46%] |');
    expect(md).toContain('## Task RememberColor5: the episodes');
    expect(md).toMatch(/b flip · T vs A · RememberColor5 seed 9001, attempt 2: A success, T failure/);
  }, 120_000);
});
