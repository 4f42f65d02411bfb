import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pythonDirs } from '../../src/bridges/sandbox.js';
import { SANDBOX_NUMBA_CACHE_DIR, sandboxSimulator } from '../../src/bridges/simulator-sandbox.js';

describe('the folders a sandboxed Python is given', () => {
  it('binds a venv reached through a symbolic link under its real path too', () => {
    const root = mkdtempSync(join(tmpdir(), 'imep-pydirs-'));
    const real = join(root, 'main', '.venvs', 'sim');
    mkdirSync(join(real, 'bin'), { recursive: true });
    writeFileSync(join(real, 'bin', 'python'), '');
    writeFileSync(join(real, 'pyvenv.cfg'), 'home = /usr/bin\n');
    mkdirSync(join(root, 'worktree'));
    symlinkSync(join(root, 'main', '.venvs'), join(root, 'worktree', '.venvs'));
    const dirs = pythonDirs(join(root, 'worktree', '.venvs', 'sim', 'bin', 'python'));
    expect(dirs).toContain(join(root, 'worktree', '.venvs', 'sim')); // the path the server is started by
    expect(dirs).toContain(real); // what files inside the venv name
    expect(dirs).toContain('/usr'); // the venv's base
  });

  it('names nothing for an interpreter that does not exist', () => {
    expect(pythonDirs('/nonexistent/bin/python')).toEqual([]);
  });
});

describe("a sandboxed simulator server's numba cache", () => {
  const plain = { file: '/usr/bin/python3', args: ['-m', 'imep_sim_bridge', 'serve'], label: 'sim-bridge' };
  const options = { bridgePackage: join(process.cwd(), 'sim-bridge/imep_sim_bridge') };

  it('points into the private /tmp when the server is sandboxed', () => {
    const { command, isolation } = sandboxSimulator(plain, 'ipc:///tmp/x/bridge.sock', options, { ...process.env });
    if (isolation.mode === 'none') return expect(isolation.reason).not.toBe(''); // no bubblewrap here: nothing to check
    const opts = (command.input ?? '').split('\0'); // bwrap reads its options on stdin (--args 0)
    const at = opts.findIndex((a, i) => a === '--setenv' && opts[i + 1] === 'NUMBA_CACHE_DIR');
    expect(at).toBeGreaterThanOrEqual(0);
    expect(opts[at + 2]).toBe(SANDBOX_NUMBA_CACHE_DIR);
    // inside the private tmpfs bwrap mounts on /tmp, not a bind of the machine's /tmp
    expect(opts.join(' ')).toContain('--tmpfs /tmp');
    expect(SANDBOX_NUMBA_CACHE_DIR.startsWith('/tmp/')).toBe(true);
  });

  it("is left to numba (in-tree caches) when unsandboxed: the machine's /tmp is not the server's", () => {
    const { command, isolation } = sandboxSimulator(plain, 'ipc:///tmp/x/bridge.sock', options, {
      ...process.env,
      IMEP_SANDBOX: 'off',
    });
    expect(isolation.mode).toBe('none');
    expect(command.env?.['NUMBA_CACHE_DIR']).toBeUndefined();
  });
});
