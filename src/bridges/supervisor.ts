/**
 * Supervision of a bridge server process (execa): start it, wait until it answers `hello`, notice its
 * death (exit) at once, restart it on request, and kill it on dispose. The supervisor is the client's
 * `RemoteLiveness`: when the process dies, pending calls fail with E_BRIDGE_REMOTE naming the exit status.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { ImepError, OUTSIDE_MESSAGE_MAX, OUTSIDE_NAME_MAX, outsideText } from '../core/index.js';
import { BridgeClient, type RemoteLiveness } from './client.js';
import type { CurveClientKeys } from './endpoint.js';
import type { HelloReply } from './op-schemas.js';
import { LITE_SERVER_NODE_FLAGS } from './node-flags.js';
import { commandNotFound } from './sandbox.js';
import { clearCgroups, killCgroups, releaseCgroups } from './cgroup-limits.js';

/** A command line that starts a bridge server. */
export interface ServerCommand {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Whether the process inherits IMEP's environment besides `env` (default true; a sandboxed host does not). */
  readonly extendEnv?: boolean;
  /** For messages: "lite server", "sim-bridge". */
  readonly label: string;
  /** The cgroups the process enters (resource-limits.ts): killing the host kills everything in them too. */
  readonly cgroups?: readonly string[];
  /** Written to the process's stdin, then closed (a sandbox reads its options there, off its command line). */
  readonly input?: string;
}

/** The exit code IMEP's Python servers use when an allocation fails under their memory limit (server.py). */
export const EXIT_MEMORY_LIMIT = 86;

/**
 * Hosts still running (each its process group's leader) with their cgroups: killed, whole group and cgroups, if
 * IMEP ends without stopping them — at 'exit', and on the signals that end Node without an 'exit' event.
 */
const live = new Map<number, readonly string[]>();
let exitHook = false;

function killLiveHosts(): void {
  for (const [pid, cgroups] of live) {
    signalGroup(pid, 'SIGKILL');
    killCgroups(cgroups);
  }
}

/**
 * The signals that end Node at once, without 'exit' (its default for them), and that a terminal's Ctrl-C or hang-up
 * no longer delivers to a host (a process group of its own; a sandboxed host also has bwrap's --die-with-parent, an
 * unsandboxed one nothing else).
 */
const END_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Prepended, so it runs before every other handler of the signal and sees them all. Another handler decides how IMEP
 * ends (unit-lock.ts removes its locks and exits 128 + n; a graceful stop finishes first): the 'exit' hook kills the
 * hosts then, and a stop that ends without 'exit' re-raises the signal into this handler alone. With no other
 * handler the hosts are killed now and the signal raised again with Node's default, ending IMEP as it would have.
 */
function onEndSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  killLiveHosts();
  unwatchSignals();
  process.kill(process.pid, signal);
}

let watching = false;
function watchSignals(): void {
  if (watching) return;
  watching = true;
  for (const signal of END_SIGNALS) process.prependListener(signal, onEndSignal);
}
function unwatchSignals(): void {
  if (!watching) return;
  watching = false;
  for (const signal of END_SIGNALS) process.removeListener(signal, onEndSignal);
}

function addLive(pid: number, cgroups: readonly string[]): void {
  live.set(pid, cgroups);
  watchSignals();
  if (!exitHook) {
    exitHook = true;
    process.once('exit', killLiveHosts);
  }
}

function removeLive(pid: number): void {
  live.delete(pid);
  if (live.size === 0) unwatchSignals(); // no host: IMEP's signals behave as Node's defaults again
}

/** The repository / package root (the directory holding IMEP's package.json). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'imep') return dir;
    const up = dirname(dir);
    if (up === dir) throw new ImepError('E_INTERNAL', 'cannot find the imep package root');
    dir = up;
  }
}

/**
 * `node dist/cli/main.js sim serve lite --endpoint E`; with runtime "tsx" the TypeScript sources run
 * directly (`node --import tsx src/cli/main.ts …`, for tests without a build).
 */
export function liteServerCommand(
  endpoint: string,
  options: { runtime?: 'dist' | 'tsx'; curveKeysFile?: string } = {},
): ServerCommand {
  const root = packageRoot();
  const runtime = options.runtime ?? (existsSync(join(root, 'dist/cli/main.js')) ? 'dist' : 'tsx');
  const entry = runtime === 'dist' ? ['dist/cli/main.js'] : ['--import', 'tsx', 'src/cli/main.ts'];
  const curve = options.curveKeysFile ? ['--curve-keys', options.curveKeysFile] : [];
  // a larger initial old space (see node-flags.ts; bench/bridge-roundtrip.ts measures with and without)
  return {
    file: process.execPath,
    args: [...LITE_SERVER_NODE_FLAGS, ...entry, 'sim', 'serve', 'lite', '--endpoint', endpoint, ...curve],
    cwd: root,
    label: 'lite server',
  };
}

/** The Python interpreter for the sim-bridge: $IMEP_PYTHON, else /usr/bin/python3 (never a pyenv shim). */
export function bridgePython(): string {
  return process.env['IMEP_PYTHON'] ?? '/usr/bin/python3';
}

/** `python3 -m imep_sim_bridge serve --endpoint E --adapters A,B [--replay-dir DIR]` run from sim-bridge/. */
export function pythonServerCommand(
  endpoint: string,
  options: { adapters: readonly string[]; replayDir?: string; python?: string; extraArgs?: readonly string[] },
): ServerCommand {
  const bridgeDir = join(packageRoot(), 'sim-bridge');
  const args = ['-m', 'imep_sim_bridge', 'serve', '--endpoint', endpoint, '--adapters', options.adapters.join(',')];
  if (options.replayDir !== undefined) args.push('--replay-dir', options.replayDir);
  args.push(...(options.extraArgs ?? []));
  const pythonPath = [bridgeDir, process.env['PYTHONPATH']].filter((p): p is string => !!p).join(':');
  return {
    file: options.python ?? bridgePython(),
    args,
    cwd: bridgeDir,
    env: { PYTHONPATH: pythonPath, PYTHONUNBUFFERED: '1' },
    label: 'sim-bridge',
  };
}

export interface SupervisorOptions {
  readonly endpoint: string;
  readonly curve?: CurveClientKeys;
  /** How long start() waits for the first hello (ms). */
  readonly readyTimeoutMs?: number;
  /** Grace between SIGTERM and SIGKILL on stop (ms). */
  readonly stopTimeoutMs?: number;
}

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: string | null;
}

const STDERR_TAIL = 4000;

export class ServerSupervisor implements RemoteLiveness {
  readonly command: ServerCommand;
  readonly #options: SupervisorOptions;
  #child: ResultPromise | undefined;
  #exit: ExitStatus | undefined;
  #exited: Promise<ExitStatus> | undefined;
  #stopping = false;
  #stderr = '';
  #stdoutLines: string[] = [];
  readonly #listeners = new Set<(error: ImepError) => void>();

  constructor(command: ServerCommand, options: SupervisorOptions) {
    this.command = command;
    this.#options = options;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#exit === undefined;
  }

  get exitStatus(): ExitStatus | undefined {
    return this.#exit;
  }

  /** The last few KB the process wrote to stderr. */
  get stderrTail(): string {
    return this.#stderr;
  }

  /** Lines the process wrote to stdout (the lite server's first line is its endpoint). */
  get stdoutLines(): readonly string[] {
    return this.#stdoutLines;
  }

  deathError(): ImepError | undefined {
    if (this.#child === undefined || this.#exit === undefined) return undefined;
    return this.#deathErrorFor(this.#exit);
  }

  onDeath(listener: (error: ImepError) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts the process and waits until it answers hello; a process that exits first is reported. */
  async start(): Promise<HelloReply> {
    if (this.running) throw new ImepError('E_INTERNAL', `${this.command.label} is already running (pid ${this.pid})`);
    // whatever a previous host left in its cgroups (children out of its process group) dies before a fresh one
    // enters them: it would share their pids and memory limits
    if (this.#child !== undefined) await clearCgroups(this.command.cgroups ?? []);
    this.#exit = undefined;
    this.#stopping = false;
    this.#stderr = '';
    this.#stdoutLines = [];
    const child = execa(this.command.file, [...this.command.args], {
      cwd: this.command.cwd,
      env: this.command.env,
      extendEnv: this.command.extendEnv ?? true,
      ...(this.command.input === undefined ? { stdin: 'ignore' as const } : { input: this.command.input }),
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      // its own process group: a stop or a kill reaches everything it forked (execa's cleanup does not cover a
      // detached child: killLiveHosts does, at exit and on SIGINT / SIGTERM / SIGHUP)
      detached: true,
      cleanup: false,
      forceKillAfterDelay: false,
    });
    this.#child = child;
    const pid = child.pid;
    if (pid !== undefined) addLive(pid, this.command.cgroups ?? []);
    child.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      this.#stdoutLines.push(...lines);
    });
    this.#exited = new Promise<ExitStatus>((resolve) => {
      child.once('exit', (code, signal) => {
        if (pid !== undefined) {
          removeLive(pid);
          signalGroup(pid, 'SIGKILL'); // whatever it left behind in its group
        }
        // and in its cgroups (a child that left its group: setsid, a daemon), however it ended — a crash, the OOM
        // killer, a prompt exit on SIGTERM
        killCgroups(this.command.cgroups ?? []);
        const status = { code, signal };
        this.#exit = status;
        resolve(status);
        if (!this.#stopping) {
          const error = this.#deathErrorFor(status);
          for (const l of this.#listeners) l(error);
        }
      });
    });
    const spawnFailed = new Promise<never>((_, reject) => {
      child.once('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') {
          reject(commandNotFound(this.command));
        }
      });
    });
    spawnFailed.catch(() => undefined);
    return this.#awaitReady(spawnFailed);
  }

  async #awaitReady(spawnFailed: Promise<never>): Promise<HelloReply> {
    const timeout = this.#options.readyTimeoutMs ?? 20_000;
    const probe = new BridgeClient({
      endpoint: this.#options.endpoint,
      curve: this.#options.curve,
      heartbeatMs: 0,
      clientName: 'imep-supervisor',
    });
    const exited = (this.#exited as Promise<ExitStatus>).then((status) => {
      throw this.#deathErrorFor(status, 'before it was ready');
    });
    try {
      return await Promise.race([probe.connect({ deadlineMs: timeout }), exited, spawnFailed]);
    } catch (e) {
      await this.stop();
      if (e instanceof ImepError && e.code === 'E_BRIDGE_TIMEOUT') {
        const tail = this.#stderr.trim() ? `; stderr: ${lastLines(this.#stderr)}` : '';
        throw new ImepError(
          'E_BRIDGE_TIMEOUT',
          `${this.command.label} did not answer hello on ${this.#options.endpoint} within ${timeout} ms${tail}`,
          { cause: e },
        );
      }
      throw e;
    } finally {
      exited.catch(() => undefined);
      await probe.close();
    }
  }

  /** Sends a signal to the process (tests use SIGSTOP / SIGCONT / SIGKILL). */
  signal(signal: NodeJS.Signals): boolean {
    return this.#child?.kill(signal) ?? false;
  }

  /** Stops the process (SIGTERM to its process group, then SIGKILL after the grace period) and waits for its exit. */
  async stop(): Promise<ExitStatus | undefined> {
    return this.#end(this.#options.stopTimeoutMs ?? 3000);
  }

  /**
   * Kills the process at once, with its whole process group and cgroups (a host stuck past a call deadline has
   * nothing to save), and waits for its exit. Its death is not reported to listeners: the caller restarts it.
   */
  async kill(): Promise<ExitStatus | undefined> {
    return this.#end(0);
  }

  async #end(graceMs: number): Promise<ExitStatus | undefined> {
    const child = this.#child;
    if (child === undefined) return undefined;
    // never spawned (its file was not found): no process, and no 'exit' event will ever come
    if (child.pid === undefined && this.#exit === undefined) return undefined;
    if (this.#exit === undefined) {
      this.#stopping = true;
      const pid = child.pid as number;
      const hard = (): void => {
        signalGroup(pid, 'SIGKILL');
        killCgroups(this.command.cgroups ?? []);
      };
      if (graceMs <= 0) hard();
      else {
        signalGroup(pid, 'SIGCONT'); // a stopped process cannot handle SIGTERM
        signalGroup(pid, 'SIGTERM');
        const timer = setTimeout(hard, graceMs);
        void (this.#exited as Promise<ExitStatus>).then(() => clearTimeout(timer));
      }
    }
    const status = await (this.#exited as Promise<ExitStatus>);
    await clearCgroups(this.command.cgroups ?? []); // nothing of the host outlives its stop
    return status;
  }

  /** Stops a running process (if any) and starts a fresh one on the same endpoint. */
  async restart(): Promise<HelloReply> {
    await this.stop();
    return this.start();
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.#listeners.clear();
    await releaseCgroups(this.command.cgroups ?? []);
  }

  #deathErrorFor(status: ExitStatus, when = ''): ImepError {
    const how = status.signal
      ? `was killed by ${status.signal}${status.signal === 'SIGXCPU' || status.signal === 'SIGKILL' ? ' (a limit, the OOM killer or a kill)' : ''}`
      : status.code === EXIT_MEMORY_LIMIT
        ? `exited: an allocation failed under its memory limit (code ${EXIT_MEMORY_LIMIT})`
        : `exited with code ${status.code}`;
    const stderr = this.#stderr;
    const missing = /No module named '([^']+)'/.exec(stderr);
    if (missing) {
      const pkg = outsideText(missing[1] as string, OUTSIDE_NAME_MAX); // the process's words
      // under the sandbox the command is bwrap; the interpreter is the first python among its arguments
      const sandboxed = basename(this.command.file) === 'bwrap';
      const python = sandboxed
        ? (this.command.args.find((a) => /(^|\/)python[0-9.]*$/.test(a)) ?? 'the bridge Python')
        : this.command.file;
      return new ImepError(
        'E_SIM_UNAVAILABLE',
        `${this.command.label} ${how}${when ? ` ${when}` : ''}: its Python (${python}) cannot import the package '${pkg}' — it is not installed for that interpreter${sandboxed ? ', or not visible inside the bwrap sandbox IMEP runs it in' : ''}`,
        {
          hint:
            pkg === 'zmq' || pkg === 'msgpack' || pkg === 'numpy'
              ? 'apt-get install -y python3-zmq python3-msgpack python3-numpy (or: bash scripts/setup-system.sh)'
              : `install ${pkg} for ${python} (a simulator's own packages come from its setup script, e.g. bash scripts/sims/mikasa.sh)`,
        },
      );
    }
    const tail = stderr.trim() ? `; stderr: ${lastLines(stderr)}` : '';
    return new ImepError(
      'E_BRIDGE_REMOTE',
      `${this.command.label} (pid ${this.pid}) ${how}${when ? ` ${when}` : ''}${tail}`,
    );
  }
}

/** Signals a process group (its leader's pid); a group already gone is not an error. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // gone
  }
}

function lastLines(text: string, n = 3): string {
  // the process's own words (a policy's, a simulator's): one cleaned, capped line (src/core/outside-text.ts)
  return outsideText(text.trim().split('\n').slice(-n).join(' | '), OUTSIDE_MESSAGE_MAX);
}
