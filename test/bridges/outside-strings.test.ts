/**
 * Issue 32 items 1, 4 and 5 at the bridge client, against a scripted malicious server (a ZeroMQ ROUTER in this
 * process that answers what the test says):
 * - every string a server sends — hello's server name and version, env ids, adapter metadata, the policies it serves
 *   and their identity (version, file paths), a make reply's spec (id, instruction, observation keys), an error
 *   reply's code and message (escape codes, newlines, bidi controls, ill-formed UTF-8, 5,000 characters) — reaches
 *   IMEP cleaned and capped (src/core/outside-text.ts), and so does a server process's stderr tail;
 * - a reset / step / stepBatch result that does not fit the spec the environment declared at make time (a frame of
 *   another shape or dtype, an undeclared or evaluator-only key in obs, a 100k-character string, an untyped blob, a
 *   map or list where a scalar dtype is declared, a boolean / nil / string / fraction / out-of-range integer for a
 *   numeric dtype, a number for a bool, a declared method-visible key left out) is refused naming the key, while an
 *   evaluator field may be nil or absent; and a message over the client's wire cap never reaches it.
 */
import * as zmq from 'zeromq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { decodeMessage, encodeError, encodeMessage } from '../../src/bridges/envelope.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import { RemoteEnvironment } from '../../src/bridges/remote-environment.js';
import { StepBatcher } from '../../src/bridges/step-batcher.js';
import { ServerSupervisor } from '../../src/bridges/supervisor.js';
import { failureOf } from '../../src/campaign/episode-loop.js';
import { isImepError } from '../../src/core/errors.js';
import type { EnvSpec } from '../../src/runtime/environment.js';

/** Anything a terminal would act on, or that would start a new line. */
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\ud800-\udfff]/;
const FORGED = '1.0\n\x1b[8misolation: bubblewrap\x1b[0m';
const FORGED_CLEAN = '1.0\\n\uFFFDisolation: bubblewrap\uFFFD';

/** Every string and map key in a decoded value. */
function stringsOf(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) return [];
  if (Array.isArray(v)) return v.flatMap(stringsOf);
  return Object.entries(v).flatMap(([k, x]) => [k, ...stringsOf(x)]);
}

type Handler = (op: string, body: Record<string, unknown>, id: number) => Buffer | null;

let ipc: PrivateIpcEndpoint;
let router: zmq.Router;
let handler: Handler;
let client: BridgeClient | undefined;

const reply = (id: number, body: Record<string, unknown>): Buffer => {
  const r = encodeMessage({ kind: 'reply', id, body });
  if (!r.ok) throw new Error(r.message);
  return r.bytes;
};

beforeEach(async () => {
  ipc = await privateIpcEndpoint();
  router = new zmq.Router({ linger: 0 });
  await router.bind(ipc.endpoint);
  void (async () => {
    try {
      for await (const [peer, frame] of router) {
        const d = decodeMessage(frame as Buffer);
        if (!d.ok || d.message.kind !== 'request') continue;
        const { op, id, body } = d.message;
        const out = op === 'ping' ? reply(id, { t: 0 }) : handler(op, body as unknown as Record<string, unknown>, id);
        if (out !== null) await router.send([peer as Buffer, out]);
      }
    } catch {
      // closed
    }
  })();
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  router.close();
  await ipc.dispose();
});

const HELLO = {
  protocol: 1,
  server: { name: 'imep-sim-bridge', version: '1' },
  ops: ['hello', 'ping', 'make', 'reset', 'step', 'close', 'makeBatch', 'stepBatch'],
  envs: ['fake/Env-v0'],
  adapters: ['fake'],
};

const SPEC: EnvSpec = {
  id: 'fake/Env-v0',
  maxSteps: 10,
  action: { shape: [2], dtype: 'float32' },
  observation: {
    rgb: { shape: [4, 4, 3], dtype: 'uint8' },
    toolPosition: { shape: [2], dtype: 'float32' },
    instruction: { shape: [], dtype: 'string' },
    q: { shape: [], dtype: 'float32' },
    cue: { shape: [], dtype: 'uint8' },
    success: { shape: [], dtype: 'bool' },
    stats: { shape: [], dtype: 'map' },
    firstVisit: { shape: [], dtype: 'int32' },
    episode: { shape: [], dtype: 'int64' },
  },
  methodVisible: ['rgb', 'toolPosition', 'instruction', 'q', 'cue'],
  evaluatorOnly: ['success', 'stats', 'firstVisit', 'episode'],
};

const goodObs = (): Record<string, unknown> => ({
  rgb: ndarray('uint8', [4, 4, 3], new Uint8Array(48).fill(7)),
  toolPosition: ndarray('float32', [2], Float32Array.from([0.5, -0.5])),
  instruction: 'find the ball',
  q: 0.25,
  cue: 2,
});
const result = (obs: Record<string, unknown>, evaluator: Record<string, unknown> = { success: false }) => ({
  obs,
  evaluator,
  done: false,
  step: 0,
});

async function connected(options: { maxMessageBytes?: number } = {}): Promise<BridgeClient> {
  client = new BridgeClient({ endpoint: ipc.endpoint, heartbeatMs: 0, deadlineMs: 5000, ...options });
  await client.connect();
  return client;
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof Error)) throw new Error(`expected a rejection, got ${String(e)}`);
  return e;
}

describe('strings from a server are cleaned where they enter', () => {
  it('hello: server name and version, envs, adapters, metadata, policies and their identity', async () => {
    handler = (op, _b, id) =>
      op === 'hello'
        ? reply(id, {
            ...HELLO,
            server: { name: `evil${FORGED}`, version: '9\u202e1' },
            envs: ['fake/Env-v0', 'env\x1b[31mred'],
            adapters: ['fake\r\nforged: line'],
            unavailable: { mikasa: `missing ${'y'.repeat(5000)}` },
            environment: { fake: { renderer: 'egl\x1b]0;title\x07', 'pkg\x1b[8m': { version: '1\n2' } } },
            policies: [`p${FORGED}`],
            policyIdentity: {
              [`p${FORGED}`]: {
                version: FORGED,
                memory: { bank: 'episode-local', banks: ['perc\x1b[8meptual'] },
                files: [{ path: 'mod\n\x1b[2J.py', bytes: 1, sha256: '0'.repeat(64) }],
              },
            },
          })
        : null;
    client = new BridgeClient({ endpoint: ipc.endpoint, heartbeatMs: 0 });
    const hello = await client.connect();
    expect(hello.server).toEqual({ name: `evil${FORGED_CLEAN}`, version: '9\uFFFD1' });
    expect(hello.envs).toEqual(['fake/Env-v0', 'env\uFFFDred']);
    expect(hello.adapters).toEqual(['fake\\r\\nforged: line']);
    expect(hello.unavailable?.['mikasa']).toBe(`missing ${'y'.repeat(1016)}…[truncated, 5008 chars]`);
    expect(hello.environment).toEqual({ fake: { renderer: 'egl\uFFFD', 'pkg\uFFFD': { version: '1\\n2' } } });
    expect(hello.policies).toEqual([`p${FORGED_CLEAN}`]);
    const id = hello.policyIdentity?.[`p${FORGED_CLEAN}`];
    expect(id?.version).toBe(FORGED_CLEAN);
    expect(id?.memory.banks).toEqual(['perc\uFFFDeptual']);
    expect(id?.files.map((f) => f.path)).toEqual(['mod\\n\uFFFD.py']);
    for (const text of stringsOf(hello)) expect(text).not.toMatch(UNSAFE);
  });

  it('make: the spec id, instruction, observation keys and lists', async () => {
    const evilKey = 'rgb\n\x1b[8m';
    handler = (op, _b, id) => {
      if (op === 'hello') return reply(id, HELLO);
      if (op === 'make') {
        return reply(id, {
          handle: 'h1',
          spec: {
            ...SPEC,
            id: `fake/Env-v0${FORGED}`,
            instruction: 'go \u202eleft',
            observation: { ...SPEC.observation, [evilKey]: { shape: [1], dtype: 'uint8\x1b[1m' } },
            methodVisible: [...SPEC.methodVisible, evilKey],
          },
        });
      }
      return null;
    };
    const env = await RemoteEnvironment.make(await connected(), 'fake/Env-v0');
    expect(env.spec.id).toBe(`fake/Env-v0${FORGED_CLEAN}`);
    expect(env.spec.instruction).toBe('go \uFFFDleft');
    expect(Object.keys(env.spec.observation)).toContain('rgb\\n\uFFFD');
    expect(env.spec.observation['rgb\\n\uFFFD']).toEqual({ shape: [1], dtype: 'uint8\uFFFD' });
    expect(env.spec.methodVisible).toEqual([...SPEC.methodVisible, 'rgb\\n\uFFFD']);
    for (const k of Object.keys(env.spec.observation)) expect(k).not.toMatch(UNSAFE);
  });

  it('an error reply: code and message cleaned and capped (escapes, newlines, bidi, ill-formed UTF-8, 5,000 chars)', async () => {
    const long = `Traceback\n\x1b[2J\x1b]0;pwned\x07boom \u202eexe QQQQ ${'z'.repeat(5000)}`;
    handler = (op, _b, id) => {
      if (op === 'hello') return reply(id, HELLO);
      const bytes = Buffer.from(encodeError(id, 'E_ADAPTER\x1b[8m', long));
      // four bytes of ill-formed UTF-8 where the message says QQQQ (an unpaired surrogate, an overlong NUL)
      bytes.set([0xed, 0xa0, 0xc0, 0x80], bytes.indexOf('QQQQ'));
      return bytes;
    };
    const c = await connected();
    const e = await rejection(c.call('step', { handle: 'h', action: ndarray('float32', [2], new Float32Array(2)) }));
    expect(isImepError(e) && e.code).toBe('E_BRIDGE_REMOTE');
    expect(e.message).toMatch(
      /^step: E_ADAPTER\uFFFD: Traceback\\n\uFFFD\uFFFDboom \uFFFDexe \uFFFD+ z+…\[truncated, \d+ chars\]$/,
    );
    expect(e.message).not.toMatch(UNSAFE);
    // what the runner writes into the row (and so into the sealed unit and the report)
    const row = failureOf(e);
    expect(row.code).toBe('E_BRIDGE_REMOTE');
    expect(row.message).not.toMatch(UNSAFE);
    expect(row.message.length).toBeLessThan(1200);
  });

  it("the row's failure record cleans and caps any error text, whatever its origin", () => {
    const row = failureOf(new Error(`policy said: ${FORGED}\u202e ${'w'.repeat(10_000)}`));
    expect(row.message).toMatch(
      /^policy said: 1\.0\\n\uFFFDisolation: bubblewrap\uFFFD\uFFFD w+…\[truncated, \d+ chars\]$/,
    );
    expect(row.message.length).toBeLessThanOrEqual(2048 + 30);
  });

  it("a server process's stderr tail, quoted in its death, is cleaned", async () => {
    const bad = new ServerSupervisor(
      {
        file: process.execPath,
        args: ['-e', 'process.stderr.write("boom\\x1b[8m\\nisolation: bubblewrap\\u202e\\n"); process.exit(3)'],
        label: 'sim-bridge',
      },
      { endpoint: ipc.endpoint.replace(/[^/]+$/, 'none.sock'), readyTimeoutMs: 10_000 },
    );
    const e = await rejection(bad.start());
    await bad.dispose();
    expect(e.message).toMatch(
      /exited with code 3 before it was ready; stderr: boom\uFFFD \| isolation: bubblewrap\uFFFD$/,
    );
    expect(e.message).not.toMatch(UNSAFE);
  });
});

describe('observations are checked against the spec declared at make time', () => {
  const serve = (obs: () => Record<string, unknown>, evaluator?: Record<string, unknown>): void => {
    handler = (op, body, id) => {
      if (op === 'hello') return reply(id, HELLO);
      if (op === 'make') return reply(id, { handle: 'h1', spec: SPEC });
      if (op === 'makeBatch') return reply(id, { handles: ['h1'], spec: SPEC, host: 'inline' });
      if (op === 'reset' || op === 'step') return reply(id, result(obs(), evaluator));
      if (op === 'stepBatch')
        return reply(id, { results: (body['steps'] as unknown[]).map(() => result(obs(), evaluator)) });
      return null;
    };
  };
  const resetWith = async (obs: () => Record<string, unknown>, evaluator?: Record<string, unknown>) => {
    serve(obs, evaluator);
    const env = await RemoteEnvironment.make(await connected(), 'fake/Env-v0');
    return env.reset({ seed: 1 });
  };

  it('an honest result passes as it came', async () => {
    const r = await resetWith(goodObs, { success: true, stats: { k: [1, 2] } });
    expect(Object.keys(r.obs)).toEqual(['rgb', 'toolPosition', 'instruction', 'q', 'cue']);
    expect(r.evaluator).toEqual({ success: true, stats: { k: [1, 2] } });
  });

  it('an evaluator field may be nil (not yet known) or absent; int64 takes any safe integer', async () => {
    const r = await resetWith(goodObs, { firstVisit: null, success: null, episode: -(2 ** 53 - 1) });
    expect(r.evaluator).toEqual({ firstVisit: null, success: null, episode: -(2 ** 53 - 1) });
  });

  const offSpec: [string, () => Record<string, unknown>, RegExp][] = [
    [
      'a frame of another shape',
      () => ({ ...goodObs(), rgb: ndarray('uint8', [64, 64, 3], new Uint8Array(64 * 64 * 3)) }),
      /observation field "rgb" \(obs\) is off spec: shape \[64, 64, 3\], the spec declares \[4, 4, 3\]/,
    ],
    [
      'a frame of another dtype',
      () => ({ ...goodObs(), rgb: ndarray('float32', [4, 4, 3], new Float32Array(48)) }),
      /"rgb" \(obs\) is off spec: dtype float32, the spec declares uint8/,
    ],
    [
      'an undeclared key',
      () => ({ ...goodObs(), 'extra\x1b[8m': 1 }),
      /"extra\uFFFD" \(obs\) is off spec: not method-visible in the spec/,
    ],
    [
      'an evaluator-only key in obs',
      () => ({ ...goodObs(), success: true }),
      /"success" \(obs\) is off spec: not method-visible in the spec/,
    ],
    [
      'a 100k-character string',
      () => ({ ...goodObs(), instruction: 'i'.repeat(100_000) }),
      /"instruction" \(obs\) is off spec: a string of 100000 characters \(at most 65536\)/,
    ],
    [
      'a 1 MiB blob (msgpack bin)',
      () => ({ ...goodObs(), rgb: Buffer.alloc(1 << 20) }),
      /"rgb" \(obs\) is off spec: shape \[1048576\], the spec declares \[4, 4, 3\]/,
    ],
    [
      'a list where an array is declared',
      () => ({ ...goodObs(), toolPosition: [0.5, -0.5] }),
      /"toolPosition" \(obs\) is off spec: a list, the spec declares float32 \[2\]/,
    ],
    [
      'a map with a 60,000-character string for a float32 [] field',
      () => ({ ...goodObs(), q: { evil: 'x'.repeat(60_000), more: [1, 2] } }),
      /"q" \(obs\) is off spec: a map, the spec declares float32 \[\]/,
    ],
    [
      'a list for a float32 [] field',
      () => ({ ...goodObs(), q: [0.5] }),
      /"q" \(obs\) is off spec: a list, the spec declares float32 \[\]/,
    ],
    [
      'a boolean for a float32 field',
      () => ({ ...goodObs(), q: true }),
      /"q" \(obs\) is off spec: a boolean, the spec declares float32/,
    ],
    [
      'nil for a float32 field',
      () => ({ ...goodObs(), q: null }),
      /"q" \(obs\) is off spec: nil \(no value\), the spec declares float32 \[\]/,
    ],
    [
      'a string for a float32 field',
      () => ({ ...goodObs(), q: 'x' }),
      /"q" \(obs\) is off spec: a string, the spec declares float32/,
    ],
    [
      'a fraction for a uint8 field',
      () => ({ ...goodObs(), cue: 2.5 }),
      /"cue" \(obs\) is off spec: 2.5, the spec declares uint8 \(an integer in 0 … 255\)/,
    ],
    [
      'an integer out of a uint8 range',
      () => ({ ...goodObs(), cue: 256 }),
      /"cue" \(obs\) is off spec: 256, the spec declares uint8 \(an integer in 0 … 255\)/,
    ],
    [
      'a boolean for a uint8 field',
      () => ({ ...goodObs(), cue: false }),
      /"cue" \(obs\) is off spec: a boolean, the spec declares uint8/,
    ],
    [
      'a number for a string field',
      () => ({ ...goodObs(), instruction: 7 }),
      /"instruction" \(obs\) is off spec: a number, the spec declares string/,
    ],
    [
      'a declared method-visible field left out',
      () => {
        const { toolPosition: _, ...rest } = goodObs();
        return rest;
      },
      /"toolPosition" \(obs\) is off spec: missing: the spec declares it method-visible, float32 \[2\]/,
    ],
    ['an empty obs', () => ({}), /"rgb" \(obs\) is off spec: missing: the spec declares it method-visible/],
  ];
  for (const [what, obs, message] of offSpec) {
    it(`reset refuses ${what}, naming the key`, async () => {
      const e = await rejection(resetWith(obs));
      expect(isImepError(e) && e.code).toBe('E_BRIDGE_PROTOCOL');
      expect(e.message).toMatch(message);
      expect(failureOf(e).message).toMatch(message); // what the row records
    });
  }

  it('an evaluator field off spec, and a structured value over the cap, are refused too', async () => {
    const big = { list: Array.from({ length: 70_000 }, (_, i) => i) };
    let e = await rejection(resetWith(goodObs, { success: true, stats: big }));
    expect(e.message).toMatch(/"stats" \(evaluator\) is off spec: a structured value of over 65536 items/);
    await client?.close();
    e = await rejection(resetWith(goodObs, { success: true, rgb: goodObs()['rgb'] }));
    expect(e.message).toMatch(/"rgb" \(evaluator\) is off spec: not evaluator-only in the spec/);
  });

  const evaluatorOffSpec: [string, Record<string, unknown>, RegExp][] = [
    [
      'a number for a bool field',
      { success: 1 },
      /"success" \(evaluator\) is off spec: a number, the spec declares bool/,
    ],
    [
      'a string for a bool field',
      { success: 'yes' },
      /"success" \(evaluator\) is off spec: a string, the spec declares bool/,
    ],
    ['a number for a map field', { stats: 3 }, /"stats" \(evaluator\) is off spec: a number, the spec declares map/],
    [
      'a map for an int32 field',
      { firstVisit: { a: 1 } },
      /"firstVisit" \(evaluator\) is off spec: a map, the spec declares int32 \[\]/,
    ],
    [
      'a boolean for an int32 field',
      { firstVisit: true },
      /"firstVisit" \(evaluator\) is off spec: a boolean, the spec declares int32/,
    ],
    [
      'an integer beyond int32',
      { firstVisit: 2 ** 31 },
      /"firstVisit" \(evaluator\) is off spec: 2147483648, the spec declares int32 \(an integer in -2147483648 … 2147483647\)/,
    ],
  ];
  for (const [what, evaluator, message] of evaluatorOffSpec) {
    it(`reset refuses ${what} in evaluator, naming the key`, async () => {
      const e = await rejection(resetWith(goodObs, evaluator));
      expect(isImepError(e) && e.code).toBe('E_BRIDGE_PROTOCOL');
      expect(e.message).toMatch(message);
    });
  }

  it('step refuses an off-spec frame; stepBatch fails that slot naming the key', async () => {
    let frames = 0;
    serve(() => (frames++ === 0 ? goodObs() : { ...goodObs(), rgb: ndarray('uint8', [1], new Uint8Array(1)) }));
    const c = await connected();
    const env = await RemoteEnvironment.make(c, 'fake/Env-v0');
    await env.reset({ seed: 1 });
    const action = ndarray('float32', [2], new Float32Array(2));
    let e = await rejection(env.step(action));
    expect(e.message).toMatch(/"rgb" \(obs\) is off spec: shape \[1\], the spec declares \[4, 4, 3\]/);

    const [batched] = await RemoteEnvironment.makeBatch(c, 'fake/Env-v0', {}, 1);
    const faults: unknown[] = [];
    const batcher = new StepBatcher({
      client: () => c,
      schedule: (send) => void Promise.resolve().then(send),
      stepMs: 5000,
      fault: (x) => faults.push(x),
    });
    e = await rejection(batcher.step(() => batched as RemoteEnvironment, action));
    expect(isImepError(e) && e.code).toBe('E_BRIDGE_PROTOCOL');
    expect(e.message).toMatch(/"rgb" \(obs\) is off spec: shape \[1\]/);
    expect(faults).toEqual([e]);
  });

  it('a message over the wire cap never reaches the client: the call fails at its deadline, naming the cap', async () => {
    const huge = 2 * 1024 * 1024;
    handler = (op, _b, id) => {
      if (op === 'hello') return reply(id, HELLO);
      if (op === 'reset')
        return reply(id, result({ ...goodObs(), rgb: ndarray('uint8', [huge], new Uint8Array(huge)) }));
      return null;
    };
    const c = await connected({ maxMessageBytes: 1024 * 1024 });
    const t0 = performance.now();
    const e = await rejection(c.call('reset', { handle: 'h1', seed: 1 }, { deadlineMs: 1500 }));
    expect(isImepError(e) && e.code).toBe('E_BRIDGE_TIMEOUT');
    expect(e.message).toMatch(/the connection dropped while it waited: a reply over the 1048576-byte message cap/);
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
