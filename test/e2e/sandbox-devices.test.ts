/**
 * A protocol that declares a device (issue 32 item 7): `policy.devices: [<a stand-in node>]` — a character device root
 * makes with mknod (/dev/null's numbers), named as an accelerator node (accel/accel0: only those are bound) — is bound into the policy host's sandbox, which opens and writes it at every
 * reset, while an undeclared node beside it is absent; the terminal and the run record (rows/run.json policyIsolation)
 * name the device. Before the fix the protocol field did not exist (and no device was ever bound).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bubblewrapWorks } from '../../src/bridges/sandbox.js';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

describe.runIf(process.getuid?.() === 0 && bubblewrapWorks().ok)('a hosted policy that declares a device', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-devrun-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'accel'));
  const declared = join(dir, 'accel', 'accel0');
  const undeclared = join(dir, 'accel', 'accel1');
  for (const p of [declared, undeclared]) expect(spawnSync('mknod', [p, 'c', '1', '3']).status).toBe(0);
  const moduleDir = join(dir, 'policy-module');
  mkdirSync(moduleDir);
  writeFileSync(
    join(moduleDir, 'device_policy.py'),
    `
import os
from imep_sim_bridge.policy_host import ShellGameMemoryPolicy

class DevicePolicy(ShellGameMemoryPolicy):
    name = "device"
    version = "1"

    def reset(self, slot, episode):
        with open(${JSON.stringify(declared)}, "wb") as f:
            f.write(b"x")
        if os.path.exists(${JSON.stringify(undeclared)}):
            raise RuntimeError("UNDECLARED DEVICE PRESENT")
        super().reset(slot, episode)

POLICIES = {DevicePolicy.name: DevicePolicy}
`,
  );
  let text = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
  text = text.replace(/^id: .*$/m, 'id: device-test');
  text = text.replace(
    /name: shell-game-memory .*$/m,
    `name: device\n  module: device_policy\n  pythonPath: [${moduleDir}]\n  devices: [${declared}]`,
  );
  text = text.replace(/start: 630000, end: 630023/, 'start: 680000, end: 680001').replace(/^n: 24$/m, 'n: 2');
  writeFileSync(join(dir, 'p.yaml'), text);

  it('opens the declared node, never sees the undeclared one, and the record names the device', async () => {
    const r = await imep(['campaign', 'run', 'p.yaml', '--through', 'seal', '--campaigns-dir', 'c'], dir, undefined, {
      IMEP_KEYS_DIR: join(dir, 'keys'),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`isolation: bubblewrap (`);
    expect(r.stdout).toContain(`; devices ${declared})`);
    const unit = unitIn(join(dir, 'c')) as string;
    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; failure: { message: string } | null });
    expect(rows.length).toBe(12);
    expect(rows.map((x) => x.failure?.message ?? null).filter((m) => m !== null)).toEqual([]);
    const run = JSON.parse(readFileSync(join(unit, 'rows/run.json'), 'utf8')) as {
      sessions: { policyIsolation?: string }[];
    };
    expect(run.sessions[0]?.policyIsolation).toMatch(new RegExp(`; devices ${declared}\\)$`));
  }, 180_000);
});
