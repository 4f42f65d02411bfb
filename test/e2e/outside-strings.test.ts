/**
 * Issue 32 items 1 and 4 end to end: a hosted policy module that tries to forge terminal lines and to write its own
 * words into the evidence. Its version is "1" + newline + a conceal escape + "isolation: bubblewrap (forged)"; the
 * third episode it serves raises an exception whose text clears the screen, sets the window title, starts a new line
 * with a forged isolation claim, flips the text direction (U+202E) and runs to 6,000 characters (one failed row: within
 * the default execution-failure budget).
 *
 * `imep campaign run … --through closeout` (the built CLI): stdout and stderr carry no escape sequence or control,
 * the `policy:` line stays one line ending in the real isolation, and no line of output starts with the forged
 * claim; rows.jsonl records the failed episode with the exception's text cleaned and capped; precommit.json and the
 * report (HTML and Markdown) hold the cleaned version and no control character.
 *
 * The same for a simulator server someone started (`simulator.endpoint`) that names itself with escapes and whose
 * environment raises such an exception in its fourth episode: its failed row holds the cleaned, capped text.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BridgeServer } from '../../src/bridges/server.js';
import type { NdArray, SimEnvironment } from '../../src/runtime/environment.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/cli-support.js';

/** What a terminal acts on, or what starts a line (LF is checked apart, per output). */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;

const MODULE = String.raw`from imep_sim_bridge.policy_host import ShellGameMemoryPolicy


class EvilPolicy(ShellGameMemoryPolicy):
    name = "evil-memory"
    version = "1\n\x1b[8misolation: bubblewrap (forged)\x1b[0m"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.resets = 0
        self.doomed = {}
        self.steps = {}

    def reset(self, slot, episode):
        super().reset(slot, episode)
        self.resets += 1
        self.doomed[slot] = self.resets == 3
        self.steps[slot] = 0

    def infer(self, slot, obs, memory):
        self.steps[slot] += 1
        if self.doomed[slot] and self.steps[slot] == 3:
            raise RuntimeError(
                "\x1b[2J\x1b[H\x1b]0;pwned\x07policy crashed\nisolation: bubblewrap (forged)\u202e " + "x" * 6000
            )
        return super().infer(slot, obs, memory)


POLICIES = {EvilPolicy.name: EvilPolicy}
`;

function yaml(mod: string): string {
  return `version: 1
id: evil-strings
title: a hosted policy that forges terminal lines
simulator: { kind: lite }
envs:
  - { id: ShellGameTouch-lite, kwargs: { blackoutFromStep: 6, strict: true } }
policy: { runtime: remote, name: evil-memory, module: evil_policy, pythonPath: [${mod}] }
memory: { bank: episode-local, banks: [perceptual], capacity: 96, k: 4, consolidation: fifo }
seeds: { bands: [{ start: 631000, end: 631007 }] }
n: 8
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

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe('a hosted policy cannot forge output or write raw text into the evidence', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-e2e-outside-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('`campaign run --through closeout`: terminal, rows.jsonl, precommit and report hold only cleaned text', async () => {
    const mod = join(dir, 'mod');
    mkdirSync(mod);
    writeFileSync(join(mod, 'evil_policy.py'), MODULE);
    const file = join(dir, 'evil.yaml');
    writeFileSync(file, yaml(mod));
    const r = await imep(
      [
        'campaign',
        'run',
        file,
        '--batch',
        '1',
        '--through',
        'closeout',
        '--same-operator-reason',
        'test',
        '--campaigns-dir',
        'cli',
      ],
      dir,
    );
    // the terminal: nothing a terminal would act on, no forged line, the policy line whole and ending in the truth
    for (const out of [r.stdout, r.stderr]) expect(out).not.toMatch(UNSAFE);
    const lines = r.stdout.split('\n');
    expect(lines.filter((l) => /^\s*isolation:/.test(l))).toEqual([]);
    const policyLine = lines.find((l) => l.startsWith('policy: remote evil-memory'));
    expect(policyLine).toMatch(
      /^policy: remote evil-memory v1\\n\uFFFDisolation: bubblewrap \(forged\)\uFFFD on imep-policy-host .*; isolation: (bubblewrap \(|none \()/,
    );
    expect(r.code, r.stderr).toBe(0);

    const unit = unitIn(join(dir, 'cli')) as string;
    // rows: the failed episodes keep the exception's words, cleaned and capped
    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; failure: { code: string; message: string } | null });
    const failed = rows.filter((x) => x.status === 'failed');
    expect(failed.length).toBe(1); // one failure: within the default execution-failure budget
    for (const x of failed) {
      expect(x.failure?.code).toBe('E_BRIDGE_REMOTE');
      expect(x.failure?.message).toMatch(/policy crashed\\nisolation: bubblewrap \(forged\)\uFFFD x+/);
      expect(x.failure?.message).not.toMatch(UNSAFE);
      expect(x.failure?.message).not.toContain('\n');
      expect((x.failure?.message ?? '').length).toBeLessThanOrEqual(2048 + 40);
      expect(x.failure?.message).toMatch(/…\[truncated, \d+ chars\]/);
    }
    // precommit froze the cleaned version
    const pre = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as { hostedPolicy: { version: string } };
    expect(pre.hostedPolicy.version).toBe('1\\n\uFFFDisolation: bubblewrap (forged)\uFFFD');
    // every text file of the unit and of the report: no control character, no escape
    const reportDir = join(dir, 'cli', 'reports', unit.split('/').at(-1) as string);
    const report = filesUnder(reportDir).filter((f) => /\.(html|md|csv|json)$/.test(f));
    expect(report.map((f) => f.split('/').at(-1))).toEqual(expect.arrayContaining(['report.html', 'report.md']));
    for (const f of [...filesUnder(unit).filter((x) => /\.(json|jsonl|md|txt)$/.test(x)), ...report]) {
      expect(readFileSync(f, 'utf8'), f).not.toMatch(UNSAFE);
    }
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    expect(md).toMatch(/^\| policy host, session 1 \(start\) \| isolation: (bubblewrap|none) /m);
    expect(md).not.toMatch(/^\|? ?isolation: bubblewrap \(forged\)/m);
  }, 240_000);

  it('an attached simulator server whose errors forge lines: rows and report hold only cleaned text', async () => {
    const endpoint = `ipc://${join(dir, 'evil-sim.sock')}`;
    let resets = 0;
    const factory = (envId: string, kwargs: Readonly<Record<string, unknown>>): SimEnvironment => {
      const inner = makeLiteEnv(envId, kwargs);
      let doomed = false;
      let steps = 0;
      return {
        spec: inner.spec,
        reset: (r) => {
          resets += 1;
          doomed = resets === 4;
          steps = 0;
          return inner.reset(r);
        },
        step: (a: NdArray) => {
          steps += 1;
          if (doomed && steps === 2) {
            throw new Error(
              `\x1b[2J\x1b]0;pwned\x07sim crashed\nisolation: bubblewrap (forged)\u202e ${'s'.repeat(6000)}`,
            );
          }
          return inner.step(a);
        },
        close: () => inner.close(),
      };
    };
    const server = await BridgeServer.bind({
      endpoint,
      factory,
      envIds: ['ShellGameTouch-lite'],
      adapters: ['replay'],
      name: 'evil\n\x1b[8msim',
    });
    try {
      const file = join(dir, 'evil-sim.yaml');
      writeFileSync(
        file,
        `version: 1
id: evil-sim
title: a simulator server that forges lines
simulator: { kind: sim-bridge, adapter: replay, endpoint: "${endpoint}" }
envs:
  - { id: ShellGameTouch-lite, task: shellgame, kwargs: { blackoutFromStep: 6, strict: true } }
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${liteCheckpointSha()} }
memory: { bank: episode-local, banks: [perceptual, cognitive], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 632000, end: 632007 }] }
n: 8
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: C, kind: C }
waves:
  - { id: 1, conditions: [A, C], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`,
      );
      const r = await imep(
        ['campaign', 'run', file, '--through', 'closeout', '--same-operator-reason', 'test', '--campaigns-dir', 'sim'],
        dir,
      );
      for (const out of [r.stdout, r.stderr]) expect(out).not.toMatch(UNSAFE);
      expect(r.stdout.split('\n').filter((l) => /^\s*isolation:/.test(l))).toEqual([]);
      expect(r.code, r.stderr).toBe(0);
      const unit = unitIn(join(dir, 'sim')) as string;
      const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { status: string; failure: { code: string; message: string } | null });
      const failed = rows.filter((x) => x.status === 'failed');
      expect(failed.length).toBe(1); // one failure: within the default execution-failure budget
      for (const x of failed) {
        expect(x.failure?.code).toBe('E_BRIDGE_REMOTE');
        expect(x.failure?.message).toMatch(
          /sim crashed\\nisolation: bubblewrap \(forged\)\uFFFD s+…\[truncated, \d+ chars\]/,
        );
        expect(x.failure?.message).not.toMatch(UNSAFE);
        expect((x.failure?.message ?? '').length).toBeLessThanOrEqual(2048 + 40);
      }
      const reportDir = join(dir, 'sim', 'reports', unit.split('/').at(-1) as string);
      for (const f of [...filesUnder(unit).filter((x) => /\.(json|jsonl|md|txt)$/.test(x)), ...filesUnder(reportDir)]) {
        if (/\.(html|md|csv|json|jsonl|txt)$/.test(f)) expect(readFileSync(f, 'utf8'), f).not.toMatch(UNSAFE);
      }
    } finally {
      await server.close();
    }
  }, 240_000);
});
