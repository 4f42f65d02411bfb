/**
 * Issue 31 item 5: `imep protocol check` makes every refusal a precommit makes before it writes anything, with the
 * same line (both run src/campaign/precommit-checks.ts), and prints the same attainable-level warnings. Each
 * bad-protocol fixture goes through both CLI commands; the precommit leaves the campaigns folder empty.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProtocol } from '../../src/protocol/load.js';
import { PRECOMMIT_CHECKS, runPrecommitChecks } from '../../src/campaign/precommit-checks.js';
import { precommitCheckInput } from '../../src/campaign/campaign-setup.js';
import { runCli } from '../support/run-cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'imep-pcc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shipped = (name: string): string => readFileSync(join(ROOT, 'protocols', name), 'utf8');
function edit(text: string, pairs: readonly (readonly [string | RegExp, string])[]): string {
  let out = text;
  for (const [what, by] of pairs) {
    const next = out.replace(what, by);
    if (next === out) throw new Error(`fixture: ${String(what)} not found`);
    out = next;
  }
  return out;
}
const BLACKOUT = shipped('shellgame-blackout.yaml');
const HOSTED = shipped('shellgame-hosted-policy.yaml');
const LIBERO = shipped('libero-drawer-memory.yaml');

/** Protocols precommit refuses before it writes anything, and what the one line says. */
const BAD: ReadonlyArray<{ name: string; text: string; line: RegExp }> = [
  {
    name: 'n = 40,000,000 (560 M planned rows)',
    text: edit(BLACKOUT, [
      [/^n: 400$/m, 'n: 40000000'],
      ['end: 610399', 'end: 40610000'],
    ]),
    line: /n: the plan is too large for one unit: 560,000,000 planned rows/,
  },
  {
    name: 'a plan above the confirmation limit, without --allow-large-plan',
    text: edit(BLACKOUT, [
      [/^n: 400$/m, 'n: 20000'],
      ['end: 610399', 'end: 629999'],
    ]),
    line: /n: a large plan: 280,000 planned rows/,
  },
  {
    name: 'a frozen power table that its inputs do not give',
    text: edit(BLACKOUT, [['effect: 0.0233', 'effect: 0.0300']]),
    line: /mde\.outputs\[0\]\.effect: registered 0\.03, src\/stats\/power\.ts computes 0\.02325/,
  },
  {
    name: 'a condition the policy runtime cannot carry out (O without an oracle source)',
    text: edit(BLACKOUT, [
      [
        '  - { id: C, kind: C, description: "C_det — exact replicate of the anchor" }',
        '  - { id: C, kind: C, description: "C_det — exact replicate of the anchor" }\n  - { id: O, kind: O, provides: fact }',
      ],
      ['conditions: [A, N_blk, C]', 'conditions: [A, N_blk, C, O]'],
    ]),
    line: /conditions\.O: condition "O" \(O\) needs an oracle source, which this policy runtime does not provide/,
  },
  {
    name: 'a checkpoint path that does not exist',
    text: edit(BLACKOUT, [['path: checkpoints/lite-memvla', 'path: checkpoints/lite-memvla-typo']]),
    line: /checkpoint\.path: checkpoint file \S+lite-memvla-typo\/model\.json cannot be read/,
  },
  {
    name: 'a checkpoint whose SHA-256 is not the bound one',
    text: edit(BLACKOUT, [[/sha256: [0-9a-f]{64}/, `sha256: ${'ab'.repeat(32)}`]]),
    line: /checkpoint\.sha256: checkpoint \S+ has SHA-256 [0-9a-f]{64}, the protocol binds (ab){32}/,
  },
  {
    name: 'a misspelled built-in hosted policy',
    text: edit(HOSTED, [['name: shell-game-memory ', 'name: shell-game-memroy ']]),
    line: /policy\.name: hosted policy 'shell-game-memroy' is not one the policy host serves \(it serves: [^)]*shell-game-memory/,
  },
  {
    name: 'a misspelled policy module',
    text: edit(LIBERO, [
      ['module: imep_sim_bridge.libero_drawer_policy', 'module: imep_sim_bridge.libero_drawer_polcy'],
    ]),
    line: /policy\.module: policy module imep_sim_bridge\.libero_drawer_polcy is not found/,
  },
  {
    name: 'a pythonPath folder that does not exist',
    text: edit(HOSTED, [['name: shell-game-memory ', 'pythonPath: [no-such-folder]\n  name: shell-game-memory ']]),
    line: /policy\.pythonPath\[0\]: policy\.pythonPath folder no-such-folder does not exist/,
  },
  {
    name: 'a hosted checkpoint folder that does not exist',
    text: edit(HOSTED, [
      ['name: shell-game-memory ', 'checkpoint: checkpoints/no-such-ckpt\n  name: imep-checkpoint '],
    ]),
    line: /policy\.checkpoint: policy\.checkpoint folder checkpoints\/no-such-ckpt does not exist \(looked in /,
  },
  {
    name: 'a hosted checkpoint folder without model.json',
    text: edit(HOSTED, [['name: shell-game-memory ', 'checkpoint: checkpoints\n  name: imep-checkpoint ']]),
    line: /policy\.checkpoint: policy\.checkpoint folder checkpoints holds no model\.json/,
  },
  {
    name: 'a replay folder that does not exist',
    text: edit(LIBERO, [['adapter: libero }', 'adapter: replay, replayDir: no-such-replays }']]),
    line: /simulator\.replayDir: replay directory no-such-replays does not exist/,
  },
];

const refusalLine = (stderr: string): string => stderr.trim().split('\n').at(-1) ?? '';

describe('protocol check refuses what precommit refuses before writing, with the same line', () => {
  for (const [i, bad] of BAD.entries()) {
    it(bad.name, () => {
      const file = join(dir, `bad-${i}.yaml`);
      writeFileSync(file, bad.text);
      const campaigns = join(dir, `campaigns-${i}`);
      const check = runCli(['protocol', 'check', file, '--campaigns-dir', campaigns], { cwd: ROOT });
      const pre = runCli(['campaign', 'precommit', file, '--campaigns-dir', campaigns], { cwd: ROOT });
      expect(check.code, check.stdout + check.stderr).toBe(2);
      expect(pre.code, pre.stdout + pre.stderr).toBe(2);
      expect(refusalLine(check.stderr)).toMatch(bad.line);
      expect(refusalLine(check.stderr)).toBe(refusalLine(pre.stderr));
      expect(check.stdout).not.toMatch(/valid protocol/);
      expect(existsSync(campaigns) ? readdirSync(campaigns) : []).toEqual([]);
    });
  }
});

describe("a module's policy name not written in its files", () => {
  it('check warns (exit 0: a module may compute its names); precommit asks the host, which refuses it, nothing written', () => {
    const text = edit(HOSTED, [
      ['name: shell-game-memory ', 'module: imep_sim_bridge.libero_drawer_policy\n  name: shell-game-memroy '],
    ]);
    const file = join(dir, 'name-not-written.yaml');
    writeFileSync(file, text);
    const campaigns = join(dir, 'campaigns-name');
    const check = runCli(['protocol', 'check', file, '--campaigns-dir', campaigns], { cwd: ROOT });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(
      /^warning: \S+name-not-written\.yaml: policy\.name: hosted policy 'shell-game-memroy' is neither built in nor written in module imep_sim_bridge\.libero_drawer_policy's files/m,
    );
    const pre = runCli(['campaign', 'precommit', file, '--campaigns-dir', campaigns], { cwd: ROOT });
    // the host refuses it when precommit starts it (exit 4, the host's own line listing what it serves)
    expect(pre.code, pre.stdout + pre.stderr).toBe(4);
    expect(pre.stdout).toMatch(/^warning: .*shell-game-memroy/m);
    expect(refusalLine(pre.stderr)).toMatch(
      /no policy 'shell-game-memroy' \(this host can serve: [^)]*shell-game-memory/,
    );
    expect(existsSync(campaigns) ? readdirSync(campaigns).filter((f) => !f.startsWith('.')) : []).toEqual([]);
  });
});

describe('attainable-level warnings', () => {
  it('n = 4 with a one-sided exact McNemar at α = 0.05: check warns, exit 0; precommit prints the same lines', () => {
    const text = edit(BLACKOUT, [
      [/^n: 400$/m, 'n: 4'],
      ['end: 610399', 'end: 610003'],
    ]);
    const file = join(dir, 'n4.yaml');
    writeFileSync(file, text);
    const campaigns = join(dir, 'campaigns-n4');
    const check = runCli(['protocol', 'check', file, '--campaigns-dir', campaigns], { cwd: ROOT });
    expect(check.code, check.stderr).toBe(0);
    const warnings = check.stdout.split('\n').filter((l) => l.startsWith('warning: '));
    expect(warnings[0]).toBe(
      'warning: criterion Q1_eligibility (Q1): p-below (exact McNemar, greater, α = 0.05) on D_N can never hold at the registered n (at most 4 paired units): at best b = 4, c = 0 gives exact McNemar p = 0.06250 (greater), not below α = 0.05; it needs at least 5 paired units',
    );
    expect(warnings[1]).toMatch(
      /^warning: criterion Q4 \(Q4\): lower-bound-above on theta can never hold .*minDiscordant: 8/,
    );
    expect(warnings).toHaveLength(2);
    expect(check.stdout).toMatch(/valid protocol shellgame-blackout, hash [0-9a-f]{64} \(2 warnings above\)/);
    const pre = runCli(['campaign', 'precommit', file, '--campaigns-dir', campaigns], { cwd: ROOT });
    expect(pre.code, pre.stderr).toBe(0);
    expect(pre.stdout.split('\n').filter((l) => l.startsWith('warning: '))).toEqual(warnings);
  }, 60_000);

  it('every shipped protocol checks clean: no refusal, no warning', async () => {
    const files = readdirSync(join(ROOT, 'protocols')).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const f of files) {
      const file = join(ROOT, 'protocols', f);
      const { protocol } = await loadProtocol(file);
      const r = await runPrecommitChecks(precommitCheckInput(protocol, file, { campaignsDir: join(dir, 'none') }));
      expect(r.warnings, f).toEqual([]);
    }
  });

  it('the list is extensible: a check appended runs after the others, its warnings returned', async () => {
    const file = join(ROOT, 'protocols', 'shellgame-blackout.yaml');
    const { protocol } = await loadProtocol(file);
    const seen: string[] = [];
    const r = await runPrecommitChecks(precommitCheckInput(protocol, file, { campaignsDir: join(dir, 'none') }), [
      ...PRECOMMIT_CHECKS,
      { id: 'extra', run: (input) => (seen.push(input.protocol.id), { warnings: ['extra says so'] }) },
    ]);
    expect(seen).toEqual(['shellgame-blackout']);
    expect(r.warnings).toEqual(['extra says so']);
  });
});
