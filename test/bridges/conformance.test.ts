/**
 * CONFORMANCE SUITE (PROTOCOL.md): the same message sequence against every bridge server —
 * the TS lite server (`imep sim serve lite`, live ShellGameTouch-lite) and the Python sim-bridge
 * (`python3 -m imep_sim_bridge serve --adapters replay`, playing test/fixtures/bridge/shellgame-lite.msgpack,
 * recorded from the lite env by scripts/record-lite-fixture.ts). Both must give the same decoded arrays
 * and the same error codes for the same malformed messages.
 *
 * The Python server needs /usr/bin/python3 (or $IMEP_PYTHON) with zmq, msgpack and numpy. When they are
 * missing this suite FAILS (CI installs them: apt-get install python3-zmq python3-msgpack python3-numpy).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as zmq from 'zeromq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { decodeMessage, decodeValue, encodeMessage, encodeValue } from '../../src/bridges/envelope.js';
import { isNdArray, ndarray, ndarrayBytes } from '../../src/bridges/ndarray-codec.js';
import type { HelloReply } from '../../src/bridges/op-schemas.js';
import { RemoteEnvironment } from '../../src/bridges/remote-environment.js';
import type { NdArray, StepResult } from '../../src/runtime/environment.js';
import {
  ServerSupervisor,
  bridgePython,
  liteServerCommand,
  packageRoot,
  pythonServerCommand,
  type ServerCommand,
} from '../../src/bridges/supervisor.js';

const FIXTURE_DIR = join(packageRoot(), 'test/fixtures/bridge');
const FIXTURE = join(FIXTURE_DIR, 'shellgame-lite.msgpack');

interface ReplayFile {
  spec: { id: string };
  episodes: { seed: number; steps: { action: NdArray }[] }[];
}
const replay = decodeValue(readFileSync(FIXTURE)) as unknown as ReplayFile;
const SEEDS = replay.episodes.map((e) => e.seed);
const ACTIONS = (replay.episodes[0] as ReplayFile['episodes'][0]).steps.map((s) => s.action);

interface ServerUnderTest {
  readonly name: string;
  readonly envId: string;
  command(endpoint: string): ServerCommand;
  /** Throws (failing the suite loudly) when the server cannot run here. */
  precheck(): void;
}

const SERVERS: readonly ServerUnderTest[] = [
  {
    name: 'ts-lite',
    envId: 'ShellGameTouch-lite',
    command: (endpoint) => liteServerCommand(endpoint, { runtime: 'tsx' }),
    precheck: () => undefined,
  },
  {
    name: 'python-replay',
    envId: 'replay/shellgame-lite',
    command: (endpoint) => pythonServerCommand(endpoint, { adapters: ['replay'], replayDir: FIXTURE_DIR }),
    precheck: () => {
      try {
        execFileSync(bridgePython(), ['-c', 'import zmq, msgpack, numpy'], { stdio: 'pipe' });
      } catch (e) {
        const stderr = (e as { stderr?: Buffer }).stderr?.toString() ?? String(e);
        throw new Error(
          `${bridgePython()} cannot import zmq/msgpack/numpy — the Python half of the conformance suite cannot run.\n` +
            `Install them: apt-get install -y python3-zmq python3-msgpack python3-numpy (or set IMEP_PYTHON).\n${stderr}`,
        );
      }
    },
  },
];

/** A result with arrays replaced by (dtype, shape, sha256) so transcripts compare across servers. */
function canonical(value: unknown): unknown {
  if (isNdArray(value))
    return {
      ndarray: value.dtype,
      shape: [...value.shape],
      sha256: createHash('sha256').update(ndarrayBytes(value)).digest('hex'),
    };
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function canonicalResult(r: StepResult): unknown {
  return canonical({
    obs: r.obs,
    evaluator: r.evaluator,
    done: r.done,
    step: r.step,
    firstFrameHash: r.firstFrameHash ?? null,
  });
}

const P = new (await import('msgpackr')).Packr({ useRecords: false });
const raw = (v: unknown): Buffer => P.pack(v);
const req = (id: number, op: string, body: unknown): Buffer => raw({ v: 1, id, op, body });
const act = (dtype: 'float32' | 'float64', values: number[]): Buffer =>
  encodeValue(
    dtype === 'float32'
      ? ndarray('float32', [values.length], Float32Array.from(values))
      : ndarray('float64', [values.length], Float64Array.from(values)),
  );

/** Malformed / refused messages and the code each must get. `{handle}` is replaced by a live handle. */
function malformedCases(
  handle: string,
  envId: string,
): { name: string; frames: Buffer[]; code: string; id: number | null }[] {
  const step = (id: number, action: unknown) => req(id, 'step', { handle, action });
  return [
    { name: 'garbage bytes', frames: [Buffer.from('\xc1 not msgpack', 'latin1')], code: 'E_BAD_MESSAGE', id: null },
    { name: 'truncated msgpack', frames: [req(5, 'ping', {}).subarray(0, 6)], code: 'E_BAD_MESSAGE', id: null },
    { name: 'not a map', frames: [raw([1, 2, 3])], code: 'E_BAD_MESSAGE', id: null },
    { name: 'two frames', frames: [raw({}), raw({})], code: 'E_BAD_MESSAGE', id: null },
    { name: 'version 2', frames: [raw({ v: 2, id: 11, op: 'ping', body: {} })], code: 'E_VERSION', id: 11 },
    { name: 'missing v', frames: [raw({ id: 12, op: 'ping', body: {} })], code: 'E_BAD_MESSAGE', id: 12 },
    {
      name: 'unknown envelope key',
      frames: [raw({ v: 1, id: 13, op: 'ping', body: {}, x: 1 })],
      code: 'E_BAD_MESSAGE',
      id: 13,
    },
    { name: 'missing body', frames: [raw({ v: 1, id: 14, op: 'ping' })], code: 'E_BAD_MESSAGE', id: 14 },
    { name: 'body not a map', frames: [raw({ v: 1, id: 15, op: 'ping', body: [1] })], code: 'E_BAD_MESSAGE', id: 15 },
    { name: 'id not a uint', frames: [raw({ v: 1, id: 'x', op: 'ping', body: {} })], code: 'E_BAD_MESSAGE', id: null },
    { name: 'negative id', frames: [raw({ v: 1, id: -4, op: 'ping', body: {} })], code: 'E_BAD_MESSAGE', id: null },
    { name: 'unknown op', frames: [req(16, 'fly', {})], code: 'E_UNKNOWN_OP', id: 16 },
    { name: 'memory.read to a server', frames: [req(17, 'memory.read', {})], code: 'E_UNKNOWN_OP', id: 17 },
    { name: 'make: env not a string', frames: [req(18, 'make', { env: 5 })], code: 'E_BAD_MESSAGE', id: 18 },
    {
      name: 'make: unknown env',
      frames: [req(19, 'make', { env: 'nope/Nothing-v0', kwargs: {} })],
      code: 'E_UNKNOWN_ENV',
      id: 19,
    },
    {
      name: 'reset: unknown handle',
      frames: [req(20, 'reset', { handle: 'nope', seed: 1, options: {} })],
      code: 'E_BAD_HANDLE',
      id: 20,
    },
    {
      name: 'reset: negative seed',
      frames: [req(21, 'reset', { handle, seed: -1, options: {} })],
      code: 'E_BAD_MESSAGE',
      id: 21,
    },
    {
      name: 'reset: seed not an integer',
      frames: [req(22, 'reset', { handle, seed: 'one', options: {} })],
      code: 'E_BAD_MESSAGE',
      id: 22,
    },
    {
      name: 'reset: options not a map',
      frames: [req(23, 'reset', { handle, seed: 1, options: [1] })],
      code: 'E_BAD_MESSAGE',
      id: 23,
    },
    {
      name: 'step: unknown handle',
      frames: [req(24, 'step', { handle: 'nope', action: decodeValue(act('float32', [0, 0])) })],
      code: 'E_BAD_HANDLE',
      id: 24,
    },
    {
      name: 'step: wrong dtype',
      frames: [step(25, decodeValue(act('float64', [0, 0])))],
      code: 'E_BAD_ACTION',
      id: 25,
    },
    {
      name: 'step: wrong shape',
      frames: [step(26, decodeValue(act('float32', [0, 0, 0])))],
      code: 'E_BAD_ACTION',
      id: 26,
    },
    { name: 'step: action missing', frames: [req(27, 'step', { handle })], code: 'E_BAD_MESSAGE', id: 27 },
    { name: 'step: action not an ndarray', frames: [step(28, [0, 0])], code: 'E_BAD_MESSAGE', id: 28 },
    { name: 'close: unknown handle', frames: [req(29, 'close', { handle: 'nope' })], code: 'E_BAD_HANDLE', id: 29 },
    { name: 'close: handle not a string', frames: [req(30, 'close', { handle: 7 })], code: 'E_BAD_MESSAGE', id: 30 },
    { name: 'make the served env after all that', frames: [req(31, 'make', { env: envId })], code: 'reply', id: 31 },
  ];
}

interface Transcript {
  hello: HelloReply;
  spec: unknown;
  results: unknown[];
  errors: Record<string, string>;
}

const transcripts = new Map<string, Transcript>();

for (const server of SERVERS) {
  describe(`conformance: ${server.name}`, () => {
    let ipc: PrivateIpcEndpoint;
    let sup: ServerSupervisor;
    let client: BridgeClient;

    beforeAll(async () => {
      server.precheck();
      ipc = await privateIpcEndpoint();
      sup = new ServerSupervisor(server.command(ipc.endpoint), { endpoint: ipc.endpoint, readyTimeoutMs: 30_000 });
      await sup.start();
      client = new BridgeClient({ endpoint: ipc.endpoint, liveness: sup, deadlineMs: 10_000, heartbeatMs: 0 });
    });

    afterAll(async () => {
      await client?.close();
      await sup?.dispose();
      await ipc?.dispose();
    });

    it('says hello with protocol 1, the six ops (and the batch ops where served) and the env', async () => {
      const hello = await client.connect();
      expect(hello.protocol).toBe(1);
      // the batch ops (added within version 1): the Python sim-bridge serves them, the lite server does not
      const batch = server.name === 'python-replay' ? ['makeBatch', 'stepBatch'] : [];
      expect([...hello.ops].sort()).toEqual(['close', 'hello', 'make', 'ping', 'reset', 'step', ...batch].sort());
      expect(hello.envs).toContain(server.envId);
      const pong = await client.call('ping', {});
      expect(typeof pong.t).toBe('number');
      transcripts.set(server.name, { hello, spec: undefined, results: [], errors: {} });
    });

    it('plays the recorded seeds and actions', async () => {
      const t = transcripts.get(server.name) as Transcript;
      const env = await RemoteEnvironment.make(client, server.envId, {});
      expect(env.spec.id).toBe(server.envId);
      // a replay declares the seeds it has recordings of (EnvSpec.seeds), the lite simulator takes any: compared apart
      if (server.name === 'python-replay')
        expect(env.spec.seeds?.every((r) => SEEDS.some((x) => x >= r.start && x <= r.end))).toBe(true);
      if (server.name === 'python-replay')
        expect(env.spec.seeds?.reduce((n, r) => n + r.end - r.start + 1, 0)).toBe(new Set(SEEDS).size);
      else expect(env.spec.seeds).toBeUndefined();
      t.spec = canonical({ ...env.spec, id: undefined, seeds: undefined });
      for (const seed of SEEDS) {
        const r0 = await env.reset({ seed });
        expect(r0.step).toBe(0);
        expect(r0.firstFrameHash).toMatch(/^[0-9a-f]{64}$/);
        expect(Object.keys(r0.obs).sort()).toEqual([...env.spec.methodVisible].sort());
        t.results.push(canonicalResult(r0));
        for (const action of ACTIONS) t.results.push(canonicalResult(await env.step(action)));
      }
      await env.close();
      expect(t.results.length).toBe(SEEDS.length * (ACTIONS.length + 1));
    });

    it('answers malformed messages with the documented codes and keeps serving', async () => {
      const t = transcripts.get(server.name) as Transcript;
      const env = await RemoteEnvironment.make(client, server.envId, {});
      await env.reset({ seed: SEEDS[0] as number });
      const dealer = new zmq.Dealer({ linger: 0, receiveTimeout: 5000 });
      dealer.connect(ipc.endpoint);
      try {
        // a stray reply gets no answer: the next frame back must be the ping's
        await dealer.send(raw({ v: 1, id: 99, op: 'reply', body: {} }));
        await dealer.send(req(98, 'ping', {}));
        const [first] = await dealer.receive();
        expect(decodeMessage(first as Buffer)).toMatchObject({ ok: true, message: { kind: 'reply', id: 98 } });
        for (const c of malformedCases(env.handle, server.envId)) {
          await dealer.send(c.frames);
          const [answer] = await dealer.receive();
          const d = decodeMessage(answer as Buffer);
          if (!d.ok) throw new Error(`${c.name}: undecodable answer: ${d.message}`);
          const got = d.message.kind === 'error' ? d.message.code : d.message.kind;
          t.errors[c.name] = got;
          expect({ case: c.name, code: got, id: d.message.id }).toEqual({ case: c.name, code: c.code, id: c.id });
        }
        const ok = encodeMessage({ kind: 'request', id: 100, op: 'ping', body: {} });
        await dealer.send((ok as { bytes: Buffer }).bytes);
        const [pong] = await dealer.receive();
        expect(decodeMessage(pong as Buffer)).toMatchObject({ ok: true, message: { kind: 'reply', id: 100 } });
      } finally {
        dealer.close();
      }
      await env.close();
    });
  });
}

describe('conformance: across servers', () => {
  it('gives the same spec (but the id), the same decoded arrays and the same error codes', () => {
    const [a, b] = SERVERS.map((s) => transcripts.get(s.name));
    if (a === undefined || b === undefined) throw new Error('a server block did not run (see its failure above)');
    expect(b.spec).toEqual(a.spec);
    expect(b.results.length).toBe(a.results.length);
    for (let i = 0; i < a.results.length; i++) expect({ i, r: b.results[i] }).toEqual({ i, r: a.results[i] });
    expect(b.errors).toEqual(a.errors);
  });
});
