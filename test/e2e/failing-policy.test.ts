/**
 * Issue #31 item 4: a hosted policy that raises KeyError at step 7 of every episode (a key missing from the settings
 * file it reads — outside its frozen identity, so the fix does not change the policy). Through the built CLI:
 *
 * 1. `imep campaign run` stops before the seal under the default execution-failure budget (the first 5 units of
 *    wave 1 × A all failed): exit 6, the unit 'running' (not sealed, the seeds not spent), the KeyError on the
 *    terminal (Failures section and the error line), and how to go on (resume after the fix, or fail-run).
 * 2. After the fix, `imep campaign resume UNIT --through closeout` goes on at the next unit: the 5 rows written stay
 *    byte for byte, the rest run ok, the unit seals and closes; the terminal and the report carry a Failures section.
 * 3. `imep campaign smoke --n 2` on the broken policy prints the failures, never suggests the formal run, exits 6.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const POLICY = `
import json
from pathlib import Path

from imep_sim_bridge.policy_host import ShellGameMemoryPolicy

SETTINGS = Path(__file__).with_name("settings.json")


class KeyErrorPolicy(ShellGameMemoryPolicy):
    """The reference memory policy, but at step 7 it looks up "gain" in its settings file."""

    name = "keyerror-memory"
    version = "1"

    def infer(self, slot, obs, memory):
        if self._slots[slot].t == 7:
            json.loads(SETTINGS.read_text())["gain"]
        return super().infer(slot, obs, memory)


POLICIES = {KeyErrorPolicy.name: KeyErrorPolicy}
`;

function protocol(id: string, moduleDir: string, start: number): string {
  return `version: 1
id: ${id}
title: a hosted policy that raises KeyError at step 7
simulator: { kind: lite }
envs:
  - { id: ShellGameTouch-lite, kwargs: { blackoutFromStep: 6, strict: true } }
policy: { runtime: remote, name: keyerror-memory, module: keyerror_policy, pythonPath: [${moduleDir}] }
memory: { bank: episode-local, banks: [perceptual], capacity: 96, k: 4, consolidation: fifo }
seeds: { bands: [{ start: ${start}, end: ${start + 5} }] }
n: 6
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: N_blk, kind: N, variant: block }
waves:
  - { id: 1, conditions: [A, N_blk], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

const rowLines = (unit: string): string[] => readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');
const FIRST = /E_BRIDGE_REMOTE ×5 — first at row 0 \(wave 1 × A\): [^\n]*KeyError: 'gain'/;

describe('a hosted policy that fails every episode (KeyError at step 7)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-keyerror-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const moduleDir = join(dir, 'policy-module');
  mkdirSync(moduleDir);
  writeFileSync(join(moduleDir, 'keyerror_policy.py'), POLICY);
  const settings = join(moduleDir, 'settings.json');

  it('stops unsealed with exit 6 and the KeyError; resumed after the fix it goes on, seals and reports the failures', async () => {
    writeFileSync(settings, '{}\n');
    const file = join(dir, 'run.yaml');
    writeFileSync(file, protocol('keyerror-run', moduleDir, 683000));
    const campaigns = join(dir, 'runs');
    const r = await imep(['campaign', 'run', file, '--campaigns-dir', campaigns], dir);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout).toContain(
      'Failures: 5 of 5 rows failed to execute (recorded as failed; they stay in the denominators)',
    );
    expect(r.stdout).toMatch(FIRST);
    expect(r.stdout).not.toMatch(/^sealed /m);
    expect(r.stderr).toMatch(/stopped before the seal: the first 5 units of wave 1 × A all failed/);
    expect(r.stderr).toMatch(FIRST);
    expect(r.stderr).toMatch(/the unit is NOT sealed and its 5 rows are kept/);
    expect(r.stderr).toMatch(/`imep campaign resume \S+keyerror-run-[0-9a-f]{12}`/);
    expect(r.stderr).toMatch(/`imep campaign fail-run \S+keyerror-run-[0-9a-f]{12} --reason "…"`/);
    const unit = unitIn(campaigns) as string;
    expect((await readUnitState(unit)).state).toBe('running');
    const before = rowLines(unit);
    expect(before).toHaveLength(5);
    const status = await imep(['campaign', 'status', unit], dir);
    expect(status.stdout).toMatch(/^unit keyerror-run: running/m);
    expect(status.stdout).toContain('Failures: 5 of 5 rows failed to execute');
    expect(status.stdout).toMatch(FIRST);

    // the fix: the key the policy looks up; its frozen identity (its source) is unchanged
    writeFileSync(settings, '{"gain": 1}\n');
    const again = await imep(
      ['campaign', 'resume', unit, '--through', 'closeout', '--same-operator-reason', 'single-operator test'],
      dir,
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^resuming \S+ at row 5 of 12$/m);
    expect(again.stdout).toContain(
      'Failures: 5 of 12 rows failed to execute (recorded as failed; they stay in the denominators)',
    );
    expect(again.stdout).toMatch(FIRST);
    expect((await readUnitState(unit)).state).toBe('closed');
    const after = rowLines(unit);
    expect(after.slice(0, 5)).toEqual(before);
    expect(after.slice(5).map((l) => (JSON.parse(l) as { status: string }).status)).toEqual(Array(7).fill('ok'));
    // the report goes next to the unit: <campaigns>/reports/<unit folder>/
    const md = readFileSync(join(campaigns, 'reports', basename(unit), 'report.md'), 'utf8');
    expect(md).toContain('Failures: 5 of 12 rows failed to execute (E_BRIDGE_REMOTE ×5)');
    expect(md).toMatch(/## Failures\n/);
    expect(md).toMatch(/\| E_BRIDGE_REMOTE \| 5 \| 0 \(wave 1 × A\) \| [^\n]*KeyError: 'gain'/);
  }, 180_000);

  it('`imep campaign smoke --n 2` prints what failed, never suggests the formal run, and exits 6', async () => {
    writeFileSync(settings, '{}\n');
    const file = join(dir, 'smoke.yaml');
    writeFileSync(file, protocol('keyerror-smoke', moduleDir, 684000));
    const r = await imep(['campaign', 'smoke', file, '--n', '2', '--campaigns-dir', join(dir, 'smokes')], dir);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout).toContain('Failures: 4 of 4 rows failed to execute (a smoke run: descriptive, never adjudicated)');
    expect(r.stdout).toMatch(/E_BRIDGE_REMOTE ×4 — first at row 0 \(wave 1 × A\): [^\n]*KeyError: 'gain'/);
    expect(r.stdout).not.toContain('next: imep campaign run');
    expect(r.stdout).toContain('next: fix the cause of the failures above, then run the smoke again');
    // the table counts what ran to its end and what failed (rows say 'ok', never 'completed')
    expect(r.stdout).toMatch(/^ +1 +ShellGameTouch-lite +A +2 +0 +2 +0\/2 /m);
    expect(r.stderr).toMatch(/the smoke run had 4 of 4 rows fail to execute/);
  }, 120_000);
});
