/**
 * The server-side bank extension end to end: openpi's WebsocketPolicyServer (openpi-server 0.1.0, unmodified) serving
 * examples/servers/openpi_bank_server.py — a port of sim-bridge's `shell-game-memory` hosted policy that keeps its
 * own episode bank and routes every read through IMEP's bank hook (sim-bridge/imep_sim_bridge/bank_hook.py) — driven on
 * ShellGameTouch-lite by a minimal openpi client written here (msgpack-numpy frames), beside the natively hosted
 * policy (RemotePolicy, the Python policy host). Same seeds, same hook: the same actions at every step, the same reads
 * recorded; with an N hook (every read answered []) both head for cup 0. A read with a stale token or outside a call
 * fails the server's infer (a traceback frame), never served unintervened.
 * Needs the policy-server venv (bash scripts/policies/setup.sh → .venvs/policies); skipped without it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Packr, Unpackr } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ReadHook } from '../../src/banks/record.js';
import { identityReadHook } from '../../src/banks/record.js';
import { packageRoot } from '../../src/bridges/supervisor.js';
import { RemotePolicy } from '../../src/policies/remote-policy.js';
import { BankHookMemory } from '../../src/policies/servers/bank-hook-memory.js';
import type { ReadReadout } from '../../src/runtime/policy.js';
import type { NdArray, ObsValue } from '../../src/runtime/environment.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';

const ROOT = packageRoot();
const PYTHON = join(ROOT, '.venvs/policies/bin/python');
const ON = existsSync(PYTHON);
const SEEDS = [630000, 630001, 630002, 630003, 630004, 630005];

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: false });

/** msgpack maps (bin or str keys) as plain objects; openpi's ndarray maps as { dtype, shape, bytes }. */
function plain(v: unknown): unknown {
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) o[k instanceof Uint8Array ? Buffer.from(k).toString() : String(k)] = plain(x);
    return o;
  }
  return Array.isArray(v) ? v.map(plain) : v;
}

/** openpi's msgpack_numpy map (bin keys, as openpi_client.msgpack_numpy.pack_array writes it). */
function numpyMap(dtype: string, shape: readonly number[], data: ArrayBufferView): Map<Buffer, unknown> {
  return new Map<Buffer, unknown>([
    [Buffer.from('__ndarray__'), true],
    [Buffer.from('data'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)],
    [Buffer.from('dtype'), dtype],
    [Buffer.from('shape'), [...shape]],
  ]);
}

/** The minimal openpi client: metadata frame first, then one msgpack-numpy observation → one reply per call. */
class OpenpiClient {
  readonly #ws: WebSocket;
  readonly #frames: (Buffer | string)[] = [];
  #waiting: ((f: Buffer | string) => void) | undefined;
  metadata: unknown;
  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data, isBinary) => {
      const frame = isBinary ? (data as Buffer) : (data as Buffer).toString();
      const w = this.#waiting;
      this.#waiting = undefined;
      if (w !== undefined) w(frame);
      else this.#frames.push(frame);
    });
  }
  static async open(url: string): Promise<OpenpiClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const c = new OpenpiClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    c.metadata = plain(unpackr.unpack((await c.#next()) as Buffer));
    return c;
  }
  #next(): Promise<Buffer | string> {
    const f = this.#frames.shift();
    if (f !== undefined) return Promise.resolve(f);
    return new Promise((resolve) => (this.#waiting = resolve));
  }
  /** The reply map, or the traceback string the server sends when its infer raised. */
  async infer(obs: Readonly<Record<string, unknown>>): Promise<Record<string, unknown> | string> {
    this.#ws.send(packr.pack(obs));
    const f = await this.#next();
    return typeof f === 'string' ? f : (plain(unpackr.unpack(f)) as Record<string, unknown>);
  }
  close(): void {
    this.#ws.close();
  }
}

function openpiObservation(obs: Readonly<Record<string, ObsValue | NdArray>>): Record<string, unknown> {
  const rgb = obs['rgb'] as NdArray;
  const tool = obs['toolPosition'] as Float32Array;
  return { rgb: numpyMap('|u1', rgb.shape, rgb.data), toolPosition: numpyMap('<f4', [2], tool) };
}

function actionOf(reply: Record<string, unknown> | string): Float32Array {
  if (typeof reply === 'string') throw new Error(`the server's infer failed:\n${reply}`);
  const a = reply['actions'] as { data: Uint8Array; dtype: string; shape: number[] };
  expect([a.dtype, a.shape]).toEqual(['<f4', [1, 2]]);
  return new Float32Array(Uint8Array.from(a.data).buffer);
}

interface Arm {
  readonly actions: number[][][];
  readonly success: boolean[];
  readonly reads: ReadReadout[][];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function healthy(port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`openpi_bank_server on port ${port} not healthy in ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!ON)('openpi_bank_server.py: a server-side bank behind an unmodified openpi server', () => {
  let server: ChildProcess | undefined;
  let url = '';
  let native: RemotePolicy | undefined;
  let memory: BankHookMemory | undefined;
  let stderr = ''; // the server's log, shown when it does not come up

  beforeAll(async () => {
    const port = await freePort();
    server = spawn(PYTHON, [join(ROOT, 'examples/servers/openpi_bank_server.py'), '--port', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    url = `ws://127.0.0.1:${port}`;
    [native, memory] = await Promise.all([
      RemotePolicy.spawn({ policy: 'shell-game-memory', maxBatch: 1, deadlineMs: 20_000 }),
      BankHookMemory.start(),
      healthy(port, 30_000).catch((e: unknown) => {
        throw new Error(`${e instanceof Error ? e.message : String(e)}\n${stderr}`);
      }),
    ]);
  }, 60_000);

  afterAll(async () => {
    server?.kill('SIGTERM');
    await native?.close();
    await memory?.close();
  });

  async function nativeArm(hook: ReadHook): Promise<Arm> {
    const p = native as RemotePolicy;
    p.setReadHook(hook);
    const arm: Arm = { actions: [], success: [], reads: [] };
    for (const seed of SEEDS) {
      const env = makeLiteEnv('ShellGameTouch-lite', { strict: true });
      let r = await env.reset({ seed });
      await p.resetSlot(0, { episode: `episode-${seed}`, seed });
      const actions: number[][] = [];
      const reads: ReadReadout[] = [];
      while (!r.done) {
        const [out] = await p.inferBatch([{ slot: 0, obs: r.obs }]);
        actions.push([...(out?.action.data as Float32Array)]);
        reads.push(...(out?.readouts.reads ?? []));
        r = await env.step(out?.action as NdArray);
      }
      arm.actions.push(actions);
      arm.success.push(r.evaluator['success'] === true);
      arm.reads.push(reads);
    }
    return arm;
  }

  async function serverArm(hook: ReadHook): Promise<Arm> {
    const m = memory as BankHookMemory;
    m.setReadHook(hook);
    const arm: Arm = { actions: [], success: [], reads: [] };
    for (const seed of SEEDS) {
      const client = await OpenpiClient.open(url); // one connection per episode slot
      expect(client.metadata).toEqual({ policy: 'shell-game-bank', bank_hook: true });
      const env = makeLiteEnv('ShellGameTouch-lite', { strict: true });
      let r = await env.reset({ seed });
      m.resetSlot(0, `episode-${seed}`);
      const actions: number[][] = [];
      const reads: ReadReadout[] = [];
      while (!r.done) {
        const extra = await m.beginCall({ slot: 0, step: r.step, decision: true, obs: r.obs });
        const action = actionOf(await client.infer({ ...openpiObservation(r.obs), ...extra }));
        reads.push(...m.endCall(0));
        actions.push([...action]);
        r = await env.step({ dtype: 'float32', shape: [2], data: action });
      }
      client.close();
      arm.actions.push(actions);
      arm.success.push(r.evaluator['success'] === true);
      arm.reads.push(reads);
    }
    return arm;
  }

  it('acts exactly like the natively hosted shell-game-memory, reads intact and blocked (N)', async () => {
    const intact = await serverArm(identityReadHook);
    expect(intact).toEqual(await nativeArm(identityReadHook));
    // every call made one read, through the hook, recorded in episode ids
    intact.reads.forEach((reads, i) => {
      expect(reads).toHaveLength((intact.actions[i] as number[][]).length);
      expect(new Set(reads.map((r) => r.ctx.episode))).toEqual(new Set([`episode-${SEEDS[i]}`]));
    });
    expect(intact.reads[0]?.[6]?.identities.length).toBe(4); // the top 4 once the bank holds 4
    // measured: 6/6 intact; blocked 1/6 (the seed whose ball is under cup 0)
    expect(intact.success).toEqual(SEEDS.map(() => true));

    const blockedHook: ReadHook = () => [];
    const blocked = await serverArm(blockedHook);
    expect(blocked).toEqual(await nativeArm(blockedHook));
    // N: the features never come back, so it heads for cup 0 (x = -0.5) after the cue phase
    for (const actions of blocked.actions) expect(actions[5]?.[0]).toBeLessThan(0);
    expect(blocked.actions).not.toEqual(intact.actions);
    expect(blocked.success.filter(Boolean).length).toBeLessThan(intact.success.filter(Boolean).length);
  }, 120_000);

  it('a read with a stale token or outside a call fails the server’s infer (never unintervened)', async () => {
    const m = memory as BankHookMemory;
    m.setReadHook(identityReadHook);
    const env = makeLiteEnv('ShellGameTouch-lite', { strict: true });
    const r = await env.reset({ seed: SEEDS[0] as number });
    m.resetSlot(0, 'stale-episode');
    const stale = await m.beginCall({ slot: 0, step: 0, decision: true, obs: r.obs });
    m.endCall(0);
    m.resetSlot(0, 'fresh-episode');
    let client = await OpenpiClient.open(url);
    const staleReply = await client.infer({ ...openpiObservation(r.obs), ...stale });
    expect(typeof staleReply).toBe('string');
    expect(staleReply).toMatch(/BankHookError: E_BANK_HOOK_TOKEN: .*stale/);
    client.close();

    // a current token, but no call in flight
    const current = await m.beginCall({ slot: 0, step: 0, decision: true, obs: r.obs });
    m.endCall(0);
    client = await OpenpiClient.open(url);
    const outside = await client.infer({ ...openpiObservation(r.obs), ...current });
    expect(outside).toMatch(/BankHookError: E_BANK_HOOK_NO_CALL/);
    client.close();
  }, 60_000);
});
