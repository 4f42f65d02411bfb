/**
 * Spawning the built CLI (`node dist/cli/main.js …`) for the reliability tests and benches: optionally
 * under `prlimit` (resource limits), optionally killed (SIGKILL, or another signal) when a condition turns true, after a delay.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const MAIN = join(ROOT, 'dist/cli/main.js');
/** Signing keys made by these runs when IMEP_KEYS_DIR is unset (benches): a throwaway store, never ~/.imep/keys. */
export const RELIABILITY_KEYS_DIR = join(tmpdir(), 'imep-reliability-keys');

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Milliseconds from spawn to exit. */
  readonly ms: number;
}

export interface SpawnOptions {
  /** Polled every 3 ms; once true, the child is SIGKILLed after `killDelayMs`. */
  readonly killWhen?: () => boolean;
  readonly killDelayMs?: number;
  /** The signal sent once `killWhen` turns true (default SIGKILL; SIGINT: a Ctrl-C). */
  readonly killSignal?: NodeJS.Signals;
  /** Prefix arguments for `prlimit` (e.g. ['--fsize=40000']): the CLI runs under those limits. */
  readonly prlimit?: readonly string[];
  /** A command line the CLI runs under (e.g. ['setpriv', '--reuid=65534', …]); after prlimit when both are given. */
  readonly wrapper?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

export function imep(args: readonly string[], cwd: string, opts: SpawnOptions = {}): Promise<Exit> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const line = [
      ...(opts.prlimit ? ['prlimit', ...opts.prlimit, '--'] : []),
      ...(opts.wrapper ?? []),
      process.execPath,
      MAIN,
      ...args,
    ];
    const [cmd, ...argv] = line as [string, ...string[]];
    const child = spawn(cmd, argv, {
      cwd,
      env: {
        ...process.env,
        IMEP_KEYS_DIR: process.env['IMEP_KEYS_DIR'] ?? RELIABILITY_KEYS_DIR,
        IMEP_OPERATOR: 'reliability-test',
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let timer: NodeJS.Timeout | undefined;
    if (opts.killWhen) {
      const when = opts.killWhen;
      timer = setInterval(() => {
        if (!when()) return;
        clearInterval(timer);
        timer = setTimeout(() => child.kill(opts.killSignal ?? 'SIGKILL'), opts.killDelayMs ?? 0);
      }, 3);
    }
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

/** SHA-256 of the shipped lite checkpoint's model.json (protocols bind it). */
export function liteCheckpointSha(): string {
  return createHash('sha256')
    .update(readFileSync(join(ROOT, 'checkpoints/lite-memvla/model.json')))
    .digest('hex');
}

/** The blackout ladder reduced to `n` seeds from `start` (strict ShellGame), bound to the lite checkpoint. */
export function smallBlackoutYaml(n: number, opts: { start?: number; id?: string; failures?: string } = {}): string {
  const start = opts.start ?? 610000;
  let text = readFileSync(join(ROOT, 'protocols/shellgame-blackout.yaml'), 'utf8');
  text = text.replace(/sha256: \S+/, `sha256: ${liteCheckpointSha()}`);
  text = text.replace(/- \{ start: 610000, end: 610399 \}/, `- { start: ${start}, end: ${start + n - 1} }`);
  text = text.replace(/^n: 400$/m, `n: ${n}`);
  text = text.replace(/strict: false/, 'strict: true');
  if (opts.id) text = text.replace(/^id: shellgame-blackout$/m, `id: ${opts.id}`);
  if (opts.failures)
    text = text.replace('executionFailures: { policy: record }', `executionFailures: ${opts.failures}`);
  return text;
}

/** Rows of the blackout ladder for n seeds: 7 condition runs × 2 attempts × n. */
export const blackoutRows = (n: number): number => 7 * 2 * n;

/** Complete lines in a file (0 when absent). */
export function lineCount(file: string): number {
  if (!existsSync(file)) return 0;
  let n = 0;
  for (const x of readFileSync(file)) if (x === 0x0a) n++;
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

/** The rows.jsonl of the single unit under a campaigns dir (null before one exists), and its line count now. */
export function unitRows(campaigns: string): { file: () => string | null; count: () => number } {
  const file = (): string | null => {
    const u = unitIn(campaigns);
    return u === null ? null : join(u, 'rows/rows.jsonl');
  };
  return {
    file,
    count: () => {
      const f = file();
      return f === null ? 0 : lineCount(f);
    },
  };
}
