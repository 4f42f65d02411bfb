/**
 * Issue 35 §7: a bridge that dies on a missing Python module says in plain words which interpreter cannot import
 * which package — under the bwrap sandbox the interpreter among bwrap's arguments, not "not importable by bwrap" —
 * and how to install it.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { ServerSupervisor } from '../../src/bridges/supervisor.js';
import { isImepError } from '../../src/core/errors.js';

async function startError(file: string, args: string[]): Promise<Error> {
  const ipc = await privateIpcEndpoint();
  const sup = new ServerSupervisor(
    { file, args, label: 'sim-bridge' },
    { endpoint: ipc.endpoint, readyTimeoutMs: 10_000 },
  );
  try {
    return await sup.start().then(
      () => new Error('started'),
      (e: unknown) => e as Error,
    );
  } finally {
    await sup.dispose();
    await ipc.dispose();
  }
}

describe('a missing Python module', () => {
  it('under bwrap: names the interpreter inside the sandbox, the package and the fix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-fake-bwrap-'));
    const bwrap = join(dir, 'bwrap');
    writeFileSync(bwrap, `#!/bin/sh\necho "ModuleNotFoundError: No module named 'mani_skill'" >&2\nexit 1\n`);
    chmodSync(bwrap, 0o755);
    const e = await startError(bwrap, ['--ro-bind', '/', '/', '--', '/opt/venv/bin/python3', '-m', 'imep_sim_bridge']);
    expect(isImepError(e) && e.code).toBe('E_SIM_UNAVAILABLE');
    expect(e.message).toContain(
      "sim-bridge exited with code 1 before it was ready: its Python (/opt/venv/bin/python3) cannot import the package 'mani_skill' — it is not installed for that interpreter, or not visible inside the bwrap sandbox IMEP runs it in",
    );
    expect(e.message).not.toContain('importable by');
    expect(isImepError(e) && e.hint).toBe(
      "install mani_skill for /opt/venv/bin/python3 (a simulator's own packages come from its setup script, e.g. bash scripts/sims/mikasa.sh)",
    );
  });

  it('without a sandbox: the interpreter is the command itself; core packages get the apt line', async () => {
    const e = await startError(process.execPath, [
      '-e',
      'process.stderr.write("ModuleNotFoundError: No module named \'zmq\'\\n"); process.exit(1)',
    ]);
    expect(e.message).toContain(`its Python (${process.execPath}) cannot import the package 'zmq'`);
    expect(e.message).not.toContain('bwrap');
    expect(isImepError(e) && e.hint).toContain('apt-get install -y python3-zmq python3-msgpack python3-numpy');
  });
});
