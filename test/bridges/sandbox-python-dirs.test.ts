import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pythonDirs } from '../../src/bridges/sandbox.js';

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
