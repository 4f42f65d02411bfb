/**
 * Bridge step round trip vs raw ZeroMQ, measured in the same run (`npx tsx bench/bridge-roundtrip.ts`).
 *
 * - bridge: BridgeClient → BridgeServer (a child process) hosting an env whose every step returns a
 *   128×128×3 uint8 frame: the full path (encode, ipc, decode + validation, env, split, encode, ipc,
 *   decode + validation).
 * - raw echo (the requirement's baseline): a DEALER sends the very bytes of an encoded step reply (the
 *   128×128×3 frame message) and a ROUTER (a child process) echoes them back: ZeroMQ alone.
 * - raw fixed reply (for reference, stricter): the DEALER sends the step request's bytes and the ROUTER
 *   answers with one pre-encoded step reply it never re-allocates.
 * - lite Shell Game at 128×128: steps/s of `ShellGameTouch-lite` alone (in this process) and through
 *   the bridge, served by `imep sim serve lite` started exactly as IMEP starts it (`liteServerCommand`).
 *
 * One call in flight at a time; every figure is measured in fresh client and server processes, best of
 * three alternating rounds, in two configurations:
 * - "as imep runs" (the requirement's figure): the client process with the `imep` CLI's node flags
 *   (`CLIENT_NODE_FLAGS`, its `#!` line) and the server process with those IMEP starts lite servers with
 *   (`LITE_SERVER_NODE_FLAGS`); the raw echo and fixed reply run under the same flags on each side, and
 *   the ratio is taken against the faster raw echo of the two configurations, so the flags can only make
 *   the requirement harder;
 * - node defaults on both sides (reference: with V8's small initial old space, the external memory of
 *   the received frames makes the client run a full GC every 60–150 frames; see src/bridges/node-flags.ts).
 * Prints steps/s for each, CPU per round trip, and the ratio; requirement: the bridge within 1.5× of
 * the raw echo (printed, not asserted).
 */
import { loadavg } from 'node:os';
import { execPath } from 'node:process';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import * as zmq from 'zeromq';
import { BridgeClient } from '../src/bridges/client.js';
import { privateIpcEndpoint } from '../src/bridges/endpoint.js';
import { encodeMessage } from '../src/bridges/envelope.js';
import { ndarray } from '../src/bridges/ndarray-codec.js';
import { RemoteEnvironment } from '../src/bridges/remote-environment.js';
import { makeLiteEnv } from '../src/sims/lite/registry.js';
import { CLIENT_NODE_FLAGS, LITE_SERVER_NODE_FLAGS } from '../src/bridges/node-flags.js';
import { BridgeServer } from '../src/bridges/server.js';
import { ServerSupervisor, liteServerCommand } from '../src/bridges/supervisor.js';
import type { EnvSpec, NdArray, ResetRequest, SimEnvironment, StepResult } from '../src/runtime/environment.js';

const SIDE = 128;
const WARMUP = 300;
const N = Number(process.env['BENCH_N'] ?? 3000);
const ENV_ID = 'bench/Frame128-v0';
const SELF = fileURLToPath(import.meta.url);

class FrameEnv implements SimEnvironment {
  readonly spec: EnvSpec = {
    id: ENV_ID,
    maxSteps: 1_000_000,
    action: { shape: [2], dtype: 'float32' },
    observation: {
      rgb: { shape: [SIDE, SIDE, 3], dtype: 'uint8' },
      toolPosition: { shape: [2], dtype: 'float32' },
      reward: { shape: [], dtype: 'float64' },
    },
    methodVisible: ['rgb', 'toolPosition'],
    evaluatorOnly: ['reward'],
  };
  #step = 0;
  readonly #frames = Array.from({ length: 4 }, (_, k) =>
    new Uint8Array(SIDE * SIDE * 3).map((_, i) => (i * 7 + k) & 0xff),
  );

  #result(): StepResult {
    return {
      obs: {
        rgb: { dtype: 'uint8', shape: [SIDE, SIDE, 3], data: this.#frames[this.#step % 4] as Uint8Array },
        toolPosition: { dtype: 'float32', shape: [2], data: Float32Array.of(0.1, 0.2) },
      },
      evaluator: { reward: 0.5 },
      done: false,
      step: this.#step,
    };
  }

  async reset(_request: ResetRequest): Promise<StepResult> {
    this.#step = 0;
    return this.#result();
  }

  async step(_action: NdArray): Promise<StepResult> {
    this.#step += 1;
    return this.#result();
  }

  async close(): Promise<void> {}
}

/** Child process: `--serve bridge|echo|fixed ENDPOINT`; prints `ready`, and `cpu MICROS` when stopped. */
async function serve(kind: string, endpoint: string): Promise<void> {
  let cpuMark = process.cpuUsage();
  const reportCpu = () => {
    const c = process.cpuUsage(cpuMark);
    process.stdout.write(`cpu ${c.user + c.system}\n`);
  };
  if (kind === 'bridge') {
    const server = await BridgeServer.bind({ endpoint, factory: () => new FrameEnv(), envIds: [ENV_ID] });
    process.stdout.write('ready\n');
    cpuMark = process.cpuUsage();
    await new Promise<void>((resolve) => process.once('SIGTERM', resolve));
    await server.close();
    reportCpu();
    return;
  }
  const reply = sampleReply();
  const router = new zmq.Router({ linger: 0 });
  await router.bind(endpoint);
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => router.close());
  cpuMark = process.cpuUsage();
  try {
    if (kind === 'echo') for await (const [id, msg] of router) await router.send([id as Buffer, msg as Buffer]);
    else for await (const [id] of router) await router.send([id as Buffer, reply]);
  } catch {
    // closed
  }
  reportCpu();
}

function sampleRequest(id: number): Buffer {
  const r = encodeMessage({
    kind: 'request',
    id,
    op: 'step',
    body: { handle: 'h1', action: ndarray('float32', [2], Float32Array.of(0.01, 0.02)) },
  });
  if (!r.ok) throw new Error(r.message);
  return r.bytes;
}

function sampleReply(): Buffer {
  const frame = new Uint8Array(SIDE * SIDE * 3).map((_, i) => (i * 7 + 1) & 0xff);
  const obs = {
    rgb: ndarray('uint8', [SIDE, SIDE, 3], frame),
    toolPosition: ndarray('float32', [2], Float32Array.of(0.1, 0.2)),
  };
  const r = encodeMessage({ kind: 'reply', id: 1, body: { obs, evaluator: { reward: 0.5 }, done: false, step: 1 } });
  if (!r.ok) throw new Error(r.message);
  return r.bytes;
}

interface ServerChild {
  readonly child: ResultPromise;
  /** Stops the child; resolves to its CPU time while serving (µs). */
  stop(): Promise<number>;
}

/** Node flags of the server child (the measuring process gets its own on its command line). */
const SERVER_FLAGS = JSON.parse(process.env['BENCH_SERVER_FLAGS'] ?? '[]') as string[];

async function startChild(kind: 'bridge' | 'echo' | 'fixed', endpoint: string): Promise<ServerChild> {
  const child = execa(execPath, [...SERVER_FLAGS, '--import', 'tsx', SELF, '--serve', kind, endpoint], {
    stdout: 'pipe',
    stderr: 'inherit',
    reject: false,
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) resolve();
    });
    void child.then((r) => reject(new Error(`${kind} server exited early: ${r.exitCode}`)));
  });
  return {
    child,
    stop: async () => {
      child.kill('SIGTERM');
      await child;
      return Number(/cpu (\d+)/.exec(out)?.[1] ?? NaN);
    },
  };
}

interface Figures {
  /** Round trips per second (wall clock). */
  rate: number;
  /** CPU per round trip (µs), client and server process (server: averaged over warm-up too). */
  clientCpu: number;
  serverCpu: number;
}

async function timedLoop(one: () => Promise<unknown>): Promise<{ rate: number; clientCpu: number }> {
  for (let i = 0; i < WARMUP; i++) await one();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await one();
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { rate: N / s, clientCpu: (c.user + c.system) / N };
}

async function benchBridge(): Promise<Figures> {
  const ipc = await privateIpcEndpoint();
  const server = await startChild('bridge', ipc.endpoint);
  const client = new BridgeClient({ endpoint: ipc.endpoint, heartbeatMs: 0 });
  try {
    await client.connect();
    const env = await RemoteEnvironment.make(client, ENV_ID, {});
    await env.reset({ seed: 0 });
    const action = ndarray('float32', [2], Float32Array.of(0.01, 0.02));
    const t = await timedLoop(async () => {
      if ((await env.step(action)).obs['rgb'] === undefined) throw new Error('missing frame');
    });
    await client.close();
    return { ...t, serverCpu: (await server.stop()) / (N + WARMUP) };
  } finally {
    await client.close();
    await server.stop();
    await ipc.dispose();
  }
}

async function benchRaw(kind: 'echo' | 'fixed'): Promise<Figures & { bytes: number }> {
  const ipc = await privateIpcEndpoint();
  const server = await startChild(kind, ipc.endpoint);
  const dealer = new zmq.Dealer({ linger: 0 });
  dealer.connect(ipc.endpoint);
  try {
    const message = kind === 'echo' ? sampleReply() : sampleRequest(1);
    const t = await timedLoop(async () => {
      await dealer.send(message);
      await dealer.receive();
    });
    dealer.close();
    return { ...t, serverCpu: (await server.stop()) / (N + WARMUP), bytes: message.length };
  } finally {
    if (!dealer.closed) dealer.close();
    await server.stop();
    await ipc.dispose();
  }
}

const LITE_ID = 'ShellGameTouch-lite';
const LITE_KWARGS = { resolution: SIDE };
const LITE_STEPS = Number(process.env['BENCH_LITE_STEPS'] ?? 3000);

/** Steps `env` for `steps` steps (resetting at episode ends, resets timed too); steps/s. */
async function liteLoop(
  env: { reset(r: { seed: number }): Promise<unknown>; step(a: NdArray): Promise<StepResult> },
  steps: number,
): Promise<number> {
  const action = ndarray('float32', [2], Float32Array.of(0.02, -0.01));
  let seed = 0;
  const run = async (n: number): Promise<void> => {
    await env.reset({ seed: seed++ });
    for (let i = 0; i < n; i++) {
      const r = await env.step(action);
      if (r.obs['rgb'] === undefined) throw new Error('missing frame');
      if (r.done) await env.reset({ seed: seed++ });
    }
  };
  await run(200);
  const t0 = performance.now();
  await run(steps);
  return steps / ((performance.now() - t0) / 1000);
}

/** `ShellGameTouch-lite` at 128×128: alone (this process) and through `imep sim serve lite` started as IMEP starts it. */
async function benchLite(): Promise<{ alone: number; bridged: number }> {
  const alone = await liteLoop(makeLiteEnv(LITE_ID, LITE_KWARGS), LITE_STEPS);
  const ipc = await privateIpcEndpoint();
  const sup = new ServerSupervisor(liteServerCommand(ipc.endpoint, { runtime: 'tsx' }), {
    endpoint: ipc.endpoint,
    readyTimeoutMs: 60_000,
  });
  const client = new BridgeClient({ endpoint: ipc.endpoint, liveness: sup });
  try {
    await sup.start();
    await client.connect();
    const env = await RemoteEnvironment.make(client, LITE_ID, LITE_KWARGS);
    const bridged = await liteLoop(env, LITE_STEPS);
    await env.close();
    return { alone, bridged };
  } finally {
    await client.close();
    await sup.dispose();
    await ipc.dispose();
  }
}

function best(fs: readonly Figures[]): Figures {
  return fs.reduce((a, b) => (b.rate > a.rate ? b : a));
}

function line(label: string, f: Figures, unit: string): string {
  return `${label}${f.rate.toFixed(0).padStart(6)} ${unit}   (CPU per round trip: client ${f.clientCpu.toFixed(0)} µs + server ${f.serverCpu.toFixed(0)} µs)`;
}

type Kind = 'echo' | 'fixed' | 'bridge' | 'lite';

/** Child process: `--measure KIND` measures one configuration and prints its figures as JSON. */
async function measure(kind: Kind): Promise<void> {
  const f =
    kind === 'lite'
      ? await benchLite()
      : kind === 'bridge'
        ? { ...(await benchBridge()), bytes: 0 }
        : await benchRaw(kind);
  process.stdout.write(`${JSON.stringify(f)}\n`);
}

interface Config {
  readonly label: string;
  /** Node flags of the client (measuring) process and of the server process. */
  readonly client: readonly string[];
  readonly server: readonly string[];
}

/** Runs one measurement in a fresh client process (the server child gets `config.server`). */
async function measured<T>(kind: Kind, config: Config): Promise<T> {
  const r = await execa(execPath, [...config.client, '--import', 'tsx', SELF, '--measure', kind], {
    stderr: 'inherit',
    env: { BENCH_N: String(N), BENCH_SERVER_FLAGS: JSON.stringify(config.server) },
  });
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as T;
}

interface Round {
  readonly echo: Figures[];
  readonly fixed: Figures[];
  readonly bridge: Figures[];
  echoBytes: number;
}

async function round(config: Config, into: Round): Promise<void> {
  const e = await measured<Figures & { bytes: number }>('echo', config);
  into.echo.push(e);
  into.echoBytes = e.bytes;
  into.fixed.push(await measured<Figures>('fixed', config));
  into.bridge.push(await measured<Figures>('bridge', config));
}

function flagsText(flags: readonly string[]): string {
  return flags.length === 0 ? 'node defaults' : flags.join(' ');
}

function section(config: Config, r: Round, baseline: Figures, baselineNote: string): string[] {
  const b = best(r.bridge);
  const e = best(r.echo);
  const f = best(r.fixed);
  const ratio = baseline.rate / b.rate;
  const cpuRatio = (b.clientCpu + b.serverCpu) / (baseline.clientCpu + baseline.serverCpu);
  return [
    `[${config.label}: client ${flagsText(config.client)}; server ${flagsText(config.server)}]`,
    line(`raw ZeroMQ DEALER/ROUTER echo of the step-reply bytes (${r.echoBytes} B each way): `, e, 'round trips/s'),
    line('raw ZeroMQ, step-request bytes → one fixed step-reply buffer (reference):   ', f, 'round trips/s'),
    line(
      `bridge step (BridgeClient → BridgeServer → env; ${sampleRequest(1).length} B → ${r.echoBytes} B):         `,
      b,
      'steps/s',
    ),
    `ratio raw echo / bridge: ${ratio.toFixed(2)}×${baselineNote} (requirement ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'NOT met'}); CPU ratio bridge / raw echo: ${cpuRatio.toFixed(2)}×; raw fixed / bridge: ${(f.rate / b.rate).toFixed(2)}×`,
  ];
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--serve') return serve(argv[1] as string, argv[2] as string);
  if (argv[0] === '--measure') return measure(argv[1] as Kind);
  const product: Config = { label: 'as imep runs', client: CLIENT_NODE_FLAGS, server: LITE_SERVER_NODE_FLAGS };
  const defaults: Config = { label: 'node defaults (reference)', client: [], server: [] };
  const load0 = loadavg()[0] ?? 0;
  const p: Round = { echo: [], fixed: [], bridge: [], echoBytes: 0 };
  const d: Round = { echo: [], fixed: [], bridge: [], echoBytes: 0 };
  const lite: { alone: number; bridged: number }[] = [];
  // alternate configurations and kinds, best of three each, so drift in machine load hits all alike
  for (let i = 0; i < 3; i++) {
    await round(product, p);
    await round(defaults, d);
    lite.push(await measured<{ alone: number; bridged: number }>('lite', product));
  }
  const pe = best(p.echo);
  const de = best(d.echo);
  const baseline = de.rate > pe.rate ? de : pe;
  const alone = Math.max(...lite.map((l) => l.alone));
  const bridged = Math.max(...lite.map((l) => l.bridged));
  const lines = [
    `bridge step round trip, ${SIDE}×${SIDE}×3 uint8 frame over ipc://, ${N} round trips, one in flight, best of 3 (load average ${load0.toFixed(2)} at start, ${(loadavg()[0] ?? 0).toFixed(2)} at end)`,
    ...section(
      product,
      p,
      baseline,
      ` (against the faster raw echo of both configurations: ${baseline === pe ? 'this one' : 'node defaults'})`,
    ),
    ...section(defaults, d, de, ''),
    `[lite Shell Game, ${SIDE}×${SIDE}, as imep runs; ${LITE_STEPS} steps, resets included, best of 3]`,
    `${LITE_ID} alone (in-process SimEnvironment):                        ${alone.toFixed(0).padStart(6)} steps/s`,
    `${LITE_ID} through the bridge (imep sim serve lite over ipc://):     ${bridged.toFixed(0).padStart(6)} steps/s`,
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

main().catch((e: unknown) => {
  process.stderr.write(`bridge-roundtrip: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
