/**
 * A hosted policy written to cheat (issue: hold against a motivated adversary). At every reset it tries to read the
 * operator's key store, the campaigns folder (plans and the rows being written), IMEP's own files, its parent's
 * command line and environment, and a secret in IMEP's environment; if anything is readable it fails the episode
 * with "LEAK: …". IMEP starts it in its sandbox (src/bridges/sandbox.ts): every episode runs and nothing leaks, and
 * the run record and the terminal say how the host was isolated. With the sandbox turned off (IMEP_SANDBOX=off) the
 * same policy reads them — which shows the probe can see a leak — and the run says "isolation: none".
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bubblewrapWorks } from '../../src/bridges/sandbox.js';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const SECRET = 'imep-test-secret-3f9a';

function snoopModule(paths: { keys: string; campaigns: string; repo: string }): string {
  return `
import os
from imep_sim_bridge.policy_host import ShellGameMemoryPolicy

TARGETS = ${JSON.stringify(paths)}

def _leaks():
    found = []
    for what, path in TARGETS.items():
        try:
            os.listdir(path)
            found.append(what + " listed")
        except OSError:
            pass
    if any(${JSON.stringify(SECRET)} in v for v in os.environ.values()):
        found.append("secret in environment")
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if b"cli/main.js" in data or ${JSON.stringify(SECRET)}.encode() in data:
                found.append(f"/proc/{pid}/{name}")
    return found

class SnoopPolicy(ShellGameMemoryPolicy):
    name = "snoop"
    version = "1"

    def reset(self, slot, episode):
        found = _leaks()
        if found:
            raise RuntimeError("LEAK: " + ", ".join(sorted(set(found))))
        super().reset(slot, episode)

POLICIES = {SnoopPolicy.name: SnoopPolicy}
`;
}

function protocol(moduleDir: string): string {
  let text = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
  text = text.replace(/^id: .*$/m, 'id: sandbox-test');
  text = text.replace(
    /name: shell-game-memory .*$/m,
    `name: snoop\n  module: snoop_policy\n  pythonPath: [${moduleDir}]`,
  );
  text = text.replace(/start: 630000, end: 630023/, 'start: 650000, end: 650003').replace(/^n: 24$/m, 'n: 4');
  return text;
}

interface RunJson {
  sessions: { policyIsolation?: string }[];
}

describe('a hosted policy that tries to read what it must not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-sandbox-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const keys = join(dir, 'keys');
  const moduleDir = join(dir, 'policy-module');
  mkdirSync(moduleDir);
  writeFileSync(
    join(moduleDir, 'snoop_policy.py'),
    snoopModule({ keys, campaigns: join(dir, 'c'), repo: join(ROOT, 'src') }),
  );
  writeFileSync(join(dir, 'p.yaml'), protocol(moduleDir));
  const env = { IMEP_KEYS_DIR: keys, IMEP_TEST_SECRET: SECRET };

  it.runIf(bubblewrapWorks().ok)(
    'sandboxed: it reads none of it, every episode runs, and the run records the isolation',
    async () => {
      const r = await imep(
        ['campaign', 'run', 'p.yaml', '--through', 'seal', '--campaigns-dir', 'c'],
        dir,
        undefined,
        env,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^policy: remote snoop v1 .*; isolation: bubblewrap \(/m);
      const unit = unitIn(join(dir, 'c')) as string;
      const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');
      expect(rows.length).toBe(6 * 4); // wave 1 A, U, S_pi; wave 2 A, N_blk, C
      expect(rows.filter((l) => l.includes('LEAK'))).toEqual([]);
      expect(rows.every((l) => (JSON.parse(l) as { status: string }).status === 'ok')).toBe(true);
      const run = JSON.parse(readFileSync(join(unit, 'rows/run.json'), 'utf8')) as RunJson;
      expect(run.sessions[0]?.policyIsolation).toMatch(/^isolation: bubblewrap/);
    },
    180_000,
  );

  it('unsandboxed (IMEP_SANDBOX=off): the same probe sees the leaks, and the run says "isolation: none"', async () => {
    const r = await imep(
      ['campaign', 'run', 'p.yaml', '--through', 'seal', '--campaigns-dir', 'c-off'],
      dir,
      undefined,
      { ...env, IMEP_SANDBOX: 'off' },
    );
    expect(r.stdout).toMatch(/isolation: none \(turned off \(IMEP_SANDBOX=off\)\)/);
    const unit = unitIn(join(dir, 'c-off')) as string;
    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; failure: { message: string } | null });
    expect(rows.length).toBeGreaterThan(0);
    const leaks = rows.map((x) => x.failure?.message ?? '').filter((m) => m.includes('LEAK'));
    expect(leaks.length).toBe(rows.length);
    expect(leaks[0]).toMatch(/campaigns listed/);
    expect(leaks[0]).toMatch(/keys listed/);
    expect(leaks[0]).toMatch(/secret in environment/);
    const run = JSON.parse(readFileSync(join(unit, 'rows/run.json'), 'utf8')) as RunJson;
    expect(run.sessions[0]?.policyIsolation).toBe('isolation: none (turned off (IMEP_SANDBOX=off))');
  }, 180_000);
});
