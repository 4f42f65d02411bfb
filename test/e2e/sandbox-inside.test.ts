/**
 * What a sandboxed policy host sees inside (issue 32 item 6): an unprivileged uid, only the parts of /etc a Python
 * program needs (no shadow, gshadow, sudoers, ssh), and no host path beyond what it must import — its module at
 * /imep/policy/0, imep_sim_bridge at /imep/bridge, its socket at /imep/ipc; no process's command line or environment
 * inside names the checkout, the module's folder or the socket's folder (bwrap reads its options on stdin). The probe
 * policy fails every episode with "LEAK: …" when it finds any of it; before the fix it found all of them.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bubblewrapWorks } from '../../src/bridges/sandbox.js';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

function probeModule(markers: readonly string[]): string {
  return `
import os, sys
from imep_sim_bridge.policy_host import ShellGameMemoryPolicy

MARKERS = ${JSON.stringify(markers)}

def _leaks():
    found = []
    if os.getuid() != 65534 or os.getgid() != 65534:
        found.append(f"uid {os.getuid()} gid {os.getgid()}")
    for f in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh", "/etc/ssl/private"):
        if os.path.exists(f):
            found.append(f + " present")
    if not os.path.exists("/etc/passwd") or not os.path.exists("/etc/ld.so.cache"):
        found.append("/etc/passwd or ld.so.cache missing")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    data = f.read().decode("utf8", "replace")
            except OSError:
                continue
            for m in MARKERS:
                if m in data:
                    found.append(f"/proc/{pid}/{name} names {m}")
    for p in sys.path:
        for m in MARKERS:
            if m in p:
                found.append(f"sys.path names {m}")
    for m in MARKERS:
        if m in __file__:
            found.append(f"module path names {m}")
    if not __file__.startswith("/imep/policy/0/"):
        found.append(f"module at {__file__}")
    return found

class ProbePolicy(ShellGameMemoryPolicy):
    name = "probe"
    version = "1"

    def reset(self, slot, episode):
        found = _leaks()
        if found:
            raise RuntimeError("LEAK: " + ", ".join(sorted(set(found))))
        super().reset(slot, episode)

POLICIES = {ProbePolicy.name: ProbePolicy}
`;
}

describe('inside the sandbox of a policy host', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-inside-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const moduleDir = join(dir, 'policy-module');
  mkdirSync(moduleDir);
  // the checkout, this test's folder (module and campaigns), the socket folders' prefix
  writeFileSync(join(moduleDir, 'probe_policy.py'), probeModule([ROOT, dir, 'imep-bridge-']));
  let text = readFileSync(join(ROOT, 'protocols/shellgame-hosted-policy.yaml'), 'utf8');
  text = text.replace(/^id: .*$/m, 'id: inside-test');
  text = text.replace(
    /name: shell-game-memory .*$/m,
    `name: probe\n  module: probe_policy\n  pythonPath: [${moduleDir}]`,
  );
  text = text.replace(/start: 630000, end: 630023/, 'start: 670000, end: 670001').replace(/^n: 24$/m, 'n: 2');
  writeFileSync(join(dir, 'p.yaml'), text);

  it.runIf(bubblewrapWorks().ok)(
    'runs as uid 65534 with a minimal /etc, and nothing inside names a host path',
    async () => {
      const r = await imep(['campaign', 'run', 'p.yaml', '--through', 'seal', '--campaigns-dir', 'c'], dir, undefined, {
        IMEP_KEYS_DIR: join(dir, 'keys'),
      });
      const unit = unitIn(join(dir, 'c')) as string;
      const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { status: string; failure: { message: string } | null });
      expect(rows.length, r.stdout + r.stderr).toBe(6 * 2);
      expect(rows.map((x) => x.failure?.message ?? null).filter((m) => m !== null)).toEqual([]);
      expect(rows.every((x) => x.status === 'ok')).toBe(true);
      expect(r.stdout).toMatch(
        /^policy: remote probe v1 .*; isolation: bubblewrap \(own namespaces, uid 65534, .*minimal \/etc/m,
      );
    },
    180_000,
  );
});
