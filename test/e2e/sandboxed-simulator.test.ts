/**
 * A simulator stack written to cheat (issue 24): third-party code on the simulator server's import path (here a
 * `sitecustomize` module, which Python runs at start-up) tries to read the operator's key store, the campaigns
 * folder, IMEP's own files, its parent's command line and environment, and a secret in IMEP's environment; if
 * anything is readable it stops the server with "LEAK: …". IMEP starts the sim-bridge server in its sandbox
 * (src/bridges/simulator-sandbox.ts): the server starts, serves the replay environment, nothing leaks, and the
 * simulators say how they were isolated. With the sandbox turned off (IMEP_SANDBOX=off) the same probe reads them
 * — which shows it can see a leak — and the isolation says "none".
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { bubblewrapWorks } from '../../src/bridges/sandbox.js';
import { sandboxSimulator } from '../../src/bridges/simulator-sandbox.js';
import { pythonServerCommand } from '../../src/bridges/supervisor.js';
import { openSimulators } from '../../src/campaign/bridge-envs.js';
import { ImepError } from '../../src/core/errors.js';
import { parseProtocol } from '../../src/protocol/load.js';
import { ROOT } from '../campaign/helpers.js';
import { registerBuiltinKinds } from '../../src/kinds/index.js';

// this file reads protocols while it loads (before the setup file's beforeAll registers the kinds)
registerBuiltinKinds();

const SECRET = 'imep-test-secret-sim-7c21';

function snoop(targets: Record<string, string>): string {
  return `
import os, sys
TARGETS = ${JSON.stringify(targets)}
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
        if b"vitest" in data or ${JSON.stringify(SECRET)}.encode() in data:
            found.append(f"/proc/{pid}/{name}")
if found:
    sys.stderr.write("LEAK: " + ", ".join(sorted(set(found))) + "\\n")
    sys.stderr.flush()
    os._exit(3)
sys.stderr.write("snoop: nothing readable\\n")
`;
}

const PROTOCOL = `version: 1
id: sandboxed-sim
title: a replay simulator behind a hostile import path
simulator: { kind: sim-bridge, adapter: replay, replayDir: sim-bridge/tests/fixtures/replay }
envs: [{ id: replay/tiny }]
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: "${'0'.repeat(64)}" }
memory: { bank: episode-local, banks: [perceptual], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 0, end: 1 }] }
n: 2
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists: { methodVisible: [image, state], evaluatorOnly: [reward, success, oracle, seed] }
`;

describe('a simulator server whose import path holds code that snoops', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-simbox-'));
  const keys = join(dir, 'keys');
  const campaigns = join(dir, 'campaigns');
  const hostile = join(dir, 'site');
  for (const d of [keys, campaigns, hostile]) mkdirSync(d);
  writeFileSync(join(keys, 'operator.key'), 'private');
  writeFileSync(join(campaigns, 'plan.json'), '{}');
  writeFileSync(join(hostile, 'sitecustomize.py'), snoop({ keys, campaigns, repo: join(ROOT, 'src') }));
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of ['PYTHONPATH', 'IMEP_KEYS_DIR', 'IMEP_TEST_SECRET', 'IMEP_SANDBOX']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const { protocol } = parseProtocol(PROTOCOL, join(ROOT, 'p.yaml'));
  const hostileEnv = (extra: Record<string, string> = {}): void => {
    Object.assign(process.env, { PYTHONPATH: hostile, IMEP_KEYS_DIR: keys, IMEP_TEST_SECRET: SECRET, ...extra });
  };

  it.runIf(bubblewrapWorks().ok)(
    'sandboxed: it reads none of it, the server serves, and the isolation is recorded as bubblewrap',
    async () => {
      hostileEnv();
      const sims = await openSimulators(protocol, { file: 'p.yaml', roots: [ROOT] });
      try {
        expect(sims.isolation).toMatch(
          /^isolation: bubblewrap \(own namespaces, uid 65534, no capabilities, scrubbed environment, minimal \/etc; reads \d+ folders, writes only its socket folder; no devices\)$/,
        );
        const env = await sims.envs({ task: 'replay/tiny', envId: 'replay/tiny', kwargs: {} }, 0);
        const first = await env.reset({ seed: 0, options: {} });
        expect(Object.keys(first.obs).sort()).toEqual(['image', 'state']);
        await env.close();
      } finally {
        await sims.close();
      }
      // the probe did run inside: the same sandboxed command, run for a few seconds, says so on stderr
      const ipc = await privateIpcEndpoint();
      try {
        const plain = pythonServerCommand(ipc.endpoint, {
          adapters: ['replay'],
          replayDir: join(ROOT, 'sim-bridge/tests/fixtures/replay'),
        });
        const { command } = sandboxSimulator(plain, ipc.endpoint, {
          bridgePackage: join(ROOT, 'sim-bridge/imep_sim_bridge'),
        });
        expect(command.file).toBe('bwrap');
        const r = spawnSync(command.file, [...command.args], {
          env: { ...(command.env ?? {}) },
          ...(command.input === undefined ? {} : { input: command.input }),
          encoding: 'utf8',
          timeout: 8000,
        });
        expect(r.stderr).toContain('snoop: nothing readable');
        expect(r.stderr).not.toContain('LEAK');
      } finally {
        await ipc.dispose();
      }
    },
    120_000,
  );

  it('unsandboxed (IMEP_SANDBOX=off): the same code reads them and stops the server, and the isolation says none', async () => {
    hostileEnv({ IMEP_SANDBOX: 'off' });
    const e = await openSimulators(protocol, { file: 'p.yaml', roots: [ROOT] }).then(
      async (sims) => {
        await sims.close();
        return null;
      },
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ImepError);
    const text = (e as ImepError).oneLine();
    expect(text).toMatch(/LEAK: .*campaigns listed/);
    expect(text).toMatch(/keys listed/);
    expect(text).toMatch(/secret in environment/);
  }, 120_000);

  it('IMEP_SANDBOX=off without the hostile code: the server runs and its isolation says none, never silently', async () => {
    process.env['IMEP_SANDBOX'] = 'off';
    const sims = await openSimulators(protocol, { file: 'p.yaml', roots: [ROOT] });
    try {
      expect(sims.isolation).toBe('isolation: none (turned off (IMEP_SANDBOX=off))');
    } finally {
      await sims.close();
    }
  }, 120_000);
});
