import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';
import { bridgePython } from '../../src/bridges/supervisor.js';

export const MAIN = join(ROOT, 'dist/cli/main.js');

/** SHA-256 of the shipped lite checkpoint's model.json (protocols bind it). */
export function liteCheckpointSha(): string {
  return createHash('sha256')
    .update(readFileSync(join(ROOT, 'checkpoints/lite-memvla/model.json')))
    .digest('hex');
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `imep …` (the built CLI) in `cwd`. With `killWhen`, polls it every few ms and SIGKILLs the child
 * as soon as it returns true (the child may finish first).
 */
export function imep(
  args: readonly string[],
  cwd: string,
  killWhen?: () => boolean,
  env: NodeJS.ProcessEnv = {},
): Promise<Exit> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd,
      env: { ...process.env, IMEP_OPERATOR: 'cli-test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let timer: NodeJS.Timeout | undefined;
    if (killWhen) {
      timer = setInterval(() => {
        if (killWhen()) {
          clearInterval(timer);
          child.kill('SIGKILL');
        }
      }, 3);
    }
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearInterval(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

/** Complete lines in a file (0 when absent). */
export function lineCount(file: string): number {
  if (!existsSync(file)) return 0;
  const b = readFileSync(file);
  let n = 0;
  for (const x of b) if (x === 0x0a) n++;
  return n;
}

/** The single unit folder under a campaigns dir (or null). */
export function unitIn(campaigns: string): string | null {
  if (!existsSync(campaigns)) return null;
  const d = readdirSync(campaigns, { withFileTypes: true }).find(
    (e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'reports' && !e.name.endsWith('.shards'),
  );
  return d ? join(campaigns, d.name) : null;
}

/** Whether the sim-bridge's Python (IMEP_PYTHON, else /usr/bin/python3) can import `module`. */
export function bridgeImportable(module: string): boolean {
  try {
    execFileSync(
      bridgePython(),
      ['-c', `import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('${module}') else 1)`],
      { stdio: 'ignore' },
    );
    return true;
  } catch {
    return false;
  }
}
