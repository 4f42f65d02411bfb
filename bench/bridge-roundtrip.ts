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
 *
 * One call in flight at a time; every figure is measured in fresh client and server processes, best of
 * three alternating rounds, with node's defaults and with `--initial-old-space-size=64` on both sides
 * (V8's small default old space makes the client run a full GC every few dozen received frames).
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
import { BridgeServer } from '../src/bridges/server.js';
import type { EnvSpec, NdArray, ResetRequest, SimEnvironment, StepResult } from '../src/bridges/sim-environment.js';

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
    observation: { rgb: { shape: [SIDE, SIDE, 3], dtype: 'uint8' }, toolPosition: { shape: [2], dtype: 'float32' }, reward: { shape: [], dtype: 'float64' } },
    methodVisible: ['rgb', 'toolPosition'],
    evaluatorOnly: ['reward'],
  };
  #step = 0;
  readonly #frames = Array.from({ length: 4 }, (_, k) => new Uint8Array(SIDE * SIDE * 3).map((_, i) => (i * 7 + k) & 0xff));

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
  const r = encodeMessage({ kind: 'request', id, op: 'step', body: { handle: 'h1', action: ndarray('float32', [2], Float32Array.of(0.01, 0.02)) } });
  if (!r.ok) throw new Error(r.message);
  return r.bytes;
}

function sampleReply(): Buffer {
  const frame = new Uint8Array(SIDE * SIDE * 3).map((_, i) => (i * 7 + 1) & 0xff);
  const obs = { rgb: ndarray('uint8', [SIDE, SIDE, 3], frame), toolPosition: ndarray('float32', [2], Float32Array.of(0.1, 0.2)) };
  const r = encodeMessage({ kind: 'reply', id: 1, body: { obs, evaluator: { reward: 0.5 }, done: false, step: 1 } });
  if (!r.ok) throw new Error(r.message);
  return r.bytes;
}

interface ServerChild {
  readonly child: ResultPromise;
  /** Stops the child; resolves to its CPU time while serving (µs). */
  stop(): Promise<number>;
}

/** Node flags of this run's processes (the measuring process passes its own to its server child). */
const NODE_FLAGS = process.execArgv.filter((a) => a.startsWith('--initial-old-space-size') || a.startsWith('--max-old-space-size'));

async function startChild(kind: 'bridge' | 'echo' | 'fixed', endpoint: string): Promise<ServerChild> {
  const child = execa(execPath, [...NODE_FLAGS, '--import', 'tsx', SELF, '--serve', kind, endpoint], { stdout: 'pipe', stderr: 'inherit', reject: false });
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

function best(fs: readonly Figures[]): Figures {
  return fs.reduce((a, b) => (b.rate > a.rate ? b : a));
}

function line(label: string, f: Figures, unit: string): string {
  return `${label}${f.rate.toFixed(0).padStart(6)} ${unit}   (CPU per round trip: client ${f.clientCpu.toFixed(0)} µs + server ${f.serverCpu.toFixed(0)} µs)`;
}

type Kind = 'echo' | 'fixed' | 'bridge';

/** Child process: `--measure KIND` measures one configuration and prints its figures as JSON. */
async function measure(kind: Kind): Promise<void> {
  const f = kind === 'bridge' ? { ...(await benchBridge()), bytes: 0 } : await benchRaw(kind);
  process.stdout.write(`${JSON.stringify(f)}\n`);
}

/** Runs one measurement in a fresh process (client and server both started with `flags`). */
async function measured(kind: Kind, flags: readonly string[]): Promise<Figures & { bytes: number }> {
  const r = await execa(execPath, [...flags, '--import', 'tsx', SELF, '--measure', kind], { stderr: 'inherit', env: { BENCH_N: String(N) } });
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as Figures & { bytes: number };
}

async function report(label: string, flags: readonly string[]): Promise<string[]> {
  // alternate, best of three each, so drift in machine load hits all alike
  const bridge: Figures[] = [];
  const echo: Figures[] = [];
  const fixed: Figures[] = [];
  let echoBytes = 0;
  for (let round = 0; round < 3; round++) {
    const e = await measured('echo', flags);
    echo.push(e);
    echoBytes = e.bytes;
    fixed.push(await measured('fixed', flags));
    bridge.push(await measured('bridge', flags));
  }
  const b = best(bridge);
  const r = best(echo);
  const f = best(fixed);
  const ratio = r.rate / b.rate;
  const cpuRatio = (b.clientCpu + b.serverCpu) / (r.clientCpu + r.serverCpu);
  return [
    `[${label}]`,
    line(`raw ZeroMQ DEALER/ROUTER echo of the step-reply bytes (${echoBytes} B each way): `, r, 'round trips/s'),
    line('raw ZeroMQ, step-request bytes → one fixed step-reply buffer (reference):   ', f, 'round trips/s'),
    line(`bridge step (BridgeClient → BridgeServer → env; ${sampleRequest(1).length} B → ${echoBytes} B):         `, b, 'steps/s'),
    `ratio raw echo / bridge: ${ratio.toFixed(2)}× (requirement ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'NOT met'}); CPU ratio bridge / raw echo: ${cpuRatio.toFixed(2)}×; raw fixed / bridge: ${(f.rate / b.rate).toFixed(2)}×`,
  ];
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--serve') return serve(argv[1] as string, argv[2] as string);
  if (argv[0] === '--measure') return measure(argv[1] as Kind);
  const lines = [
    `bridge step round trip, ${SIDE}×${SIDE}×3 uint8 frame over ipc://, ${N} round trips, one in flight, best of 3 (load average ${loadavg()[0]?.toFixed(2)} at start)`,
    ...(await report('node defaults', [])),
    // A 64 MB initial old space: with V8's small default, the external memory of received frames
    // triggers a full GC every few dozen frames in the client process.
    ...(await report('node --initial-old-space-size=64 (client and server processes)', ['--initial-old-space-size=64'])),
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

main().catch((e: unknown) => {
  process.stderr.write(`bridge-roundtrip: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
