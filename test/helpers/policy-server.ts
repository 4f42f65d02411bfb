/**
 * Starts a Python policy server script (examples/servers/*.py or any server that takes --host/--port) from
 * .venvs/policies on a free port, waits until it answers its HTTP health path, and stops it after. Suites that need
 * the venv skip with `POLICIES_VENV_MISSING` as the reason when it is absent (bash scripts/policies/setup.sh).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const POLICIES_PYTHON = resolve(REPO_ROOT, '.venvs/policies/bin/python');
/** Why the real-server suites skip here, or undefined when the venv is present. */
export const POLICIES_VENV_MISSING: string | undefined = existsSync(POLICIES_PYTHON)
  ? undefined
  : `${POLICIES_PYTHON} is absent (make it with: bash scripts/policies/setup.sh)`;

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

export interface PolicyServerOptions {
  /** HTTP path answering 200 once the server accepts connections: /healthz (openpi), /health (vla-eval). */
  readonly healthPath: string;
  readonly args?: readonly string[];
  /** How long to wait for the health path (default 30 s). */
  readonly startMs?: number;
  /** The port to listen on (default: a free one); an example protocol names its server's port. */
  readonly port?: number;
}

export interface RunningPolicyServer {
  readonly port: number;
  readonly endpoint: string;
  readonly process: ChildProcess;
  /** stdout + stderr so far. */
  output(): string;
  /** SIGKILL, resolved when the process has exited (the "server died" case). */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after 3 s), resolved when the process has exited; idempotent. */
  stop(): Promise<void>;
}

function healthy(port: number, path: string): Promise<boolean> {
  return new Promise((ok) => {
    const req = get({ host: '127.0.0.1', port, path, timeout: 1000 }, (res) => {
      res.resume();
      ok(res.statusCode === 200);
    });
    req.on('error', () => ok(false));
    req.on('timeout', () => {
      req.destroy();
      ok(false);
    });
  });
}

/** Starts `script` (relative to the repo root) with `--host 127.0.0.1 --port <port or a free one>` and waits for its health path. */
export async function startPolicyServer(script: string, options: PolicyServerOptions): Promise<RunningPolicyServer> {
  if (POLICIES_VENV_MISSING !== undefined) throw new Error(POLICIES_VENV_MISSING);
  const port = options.port ?? (await freePort());
  const child = spawn(
    POLICIES_PYTHON,
    [resolve(REPO_ROOT, script), '--host', '127.0.0.1', '--port', String(port), ...(options.args ?? [])],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  const signal = async (sig: NodeJS.Signals, graceMs?: number): Promise<void> => {
    if (gone) return;
    child.kill(sig);
    if (graceMs === undefined) return exited;
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  };
  const server: RunningPolicyServer = {
    port,
    endpoint: `ws://127.0.0.1:${port}`,
    process: child,
    output: () => out,
    kill: () => signal('SIGKILL'),
    stop: () => signal('SIGTERM', 3000),
  };
  const until = Date.now() + (options.startMs ?? 30_000);
  while (Date.now() < until) {
    if (gone) throw new Error(`${script} exited before it was ready:\n${out}`);
    if (await healthy(port, options.healthPath)) return server;
    await new Promise((r) => setTimeout(r, 100));
  }
  await server.stop();
  throw new Error(
    `${script} did not answer ${options.healthPath} on port ${port} within ${options.startMs ?? 30_000} ms:\n${out}`,
  );
}
