import * as zmq from 'zeromq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { encodeMessage, decodeMessage } from '../../src/bridges/envelope.js';
import { WireNdArray, ndarray } from '../../src/bridges/ndarray-codec.js';
import { RemoteEnvironment } from '../../src/bridges/remote-environment.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { AllowlistedEnvironment } from '../../src/runtime/allowlist.js';
import { wireCodeOf } from '../../src/bridges/remote-error.js';
import type { RetrievedItem } from '../../src/banks/record.js';
import { FAKE_ENV_ID, fakeFactory } from '../fixtures/bridge/fake-env.js';

let ipc: PrivateIpcEndpoint;
let server: BridgeServer;
let client: BridgeClient;

beforeEach(async () => {
  ipc = await privateIpcEndpoint();
  server = await BridgeServer.bind({
    endpoint: ipc.endpoint,
    factory: fakeFactory,
    envIds: [FAKE_ENV_ID],
    name: 'test',
  });
  client = new BridgeClient({ endpoint: ipc.endpoint, deadlineMs: 2000, heartbeatMs: 0 });
});

afterEach(async () => {
  await client.close();
  await server.close();
  await ipc.dispose();
});

const act = (x: number, y: number) => ndarray('float32', [2], Float32Array.from([x, y]));

describe('client ↔ TS server over ipc', () => {
  it('says hello', async () => {
    const hello = await client.connect();
    expect(hello.protocol).toBe(1);
    expect(hello.server.name).toBe('test');
    expect(hello.envs).toEqual([FAKE_ENV_ID]);
    expect(hello.ops).toEqual(['hello', 'ping', 'make', 'reset', 'step', 'close']);
  });

  it('runs an episode through RemoteEnvironment, splitting obs from evaluator fields', async () => {
    await client.connect();
    const env = await RemoteEnvironment.make(client, FAKE_ENV_ID, { size: 4 });
    expect(env.handle).toBe('h1');
    expect(env.spec.observation['rgb']).toEqual({ shape: [4, 4, 3], dtype: 'uint8' });
    const r0 = await env.reset({ seed: 3 });
    expect(Object.keys(r0.obs).sort()).toEqual(['rgb', 'toolPosition']);
    expect(r0.evaluator['secret']).toBe(42);
    expect(r0.firstFrameHash).toMatch(/^[0-9a-f]{64}$/);
    const rgb = r0.obs['rgb'] as WireNdArray;
    expect(rgb).toBeInstanceOf(WireNdArray);
    expect(rgb.data[0]).toBe(93);
    const r1 = await env.step(act(0.75, 0));
    expect(r1.step).toBe(1);
    expect(r1.evaluator['success']).toBe(true);
    expect(Array.from((r1.obs['toolPosition'] as WireNdArray).data as Float32Array)).toEqual([0.75, 0]);
    await env.close();
    expect(server.openHandles).toEqual([]);
  });

  it('keeps several calls in flight and matches replies by id', async () => {
    await client.connect();
    const pings = await Promise.all(Array.from({ length: 20 }, () => client.call('ping', {})));
    expect(pings.every((p) => typeof p.t === 'number')).toBe(true);
  });

  it('maps error replies to typed errors with their wire code', async () => {
    await client.connect();
    await expect(client.call('make', { env: 'nope', kwargs: {} })).rejects.toMatchObject({
      code: 'E_BRIDGE_REMOTE',
      wireCode: 'E_UNKNOWN_ENV',
    });
    await expect(client.call('reset', { handle: 'h99', seed: 1, options: {} })).rejects.toMatchObject({
      wireCode: 'E_BAD_HANDLE',
    });
    const env = await RemoteEnvironment.make(client, FAKE_ENV_ID, { failOnStep: 2 });
    await env.reset({ seed: 1 });
    const e = await env.step(ndarray('float64', [2], Float64Array.from([0, 0]))).catch((x: unknown) => x);
    expect(wireCodeOf(e)).toBe('E_BAD_ACTION');
    await env.step(act(0, 0));
    const f = await env.step(act(0, 0)).catch((x: unknown) => x);
    expect(wireCodeOf(f)).toBe('E_ADAPTER');
    expect(String((f as Error).message)).toMatch(/fake failure at step 2/);
  });

  it('answers garbage with an id-null error and keeps serving', async () => {
    const dealer = new zmq.Dealer({ linger: 0, receiveTimeout: 2000 });
    dealer.connect(ipc.endpoint);
    try {
      await dealer.send(Buffer.from('this is not msgpack \xff\xfe'));
      const [reply] = await dealer.receive();
      const d = decodeMessage(reply!);
      expect(d.ok && d.message).toMatchObject({ kind: 'error', id: null, code: 'E_BAD_MESSAGE' });
      await dealer.send([Buffer.from([0x80]), Buffer.from([0x80])]);
      const [reply2] = await dealer.receive();
      expect(decodeMessage(reply2!)).toMatchObject({
        ok: true,
        message: { kind: 'error', id: null, code: 'E_BAD_MESSAGE' },
      });
      const ping = encodeMessage({ kind: 'request', id: 9, op: 'ping', body: {} });
      await dealer.send((ping as { bytes: Buffer }).bytes);
      const [reply3] = await dealer.receive();
      expect(decodeMessage(reply3!)).toMatchObject({ ok: true, message: { kind: 'reply', id: 9 } });
    } finally {
      dealer.close();
    }
    expect((await client.connect()).protocol).toBe(1);
  });

  it('wraps a remote env with the run allowlists', async () => {
    await client.connect();
    const env = new AllowlistedEnvironment(await RemoteEnvironment.make(client, FAKE_ENV_ID, {}), {
      methodVisible: ['rgb'],
      evaluatorOnly: ['success'],
    });
    const r = await env.reset({ seed: 1 });
    expect(Object.keys(r.obs)).toEqual(['rgb']);
    expect(env.spec.methodVisible).toEqual(['rgb']);
    await env.close();
  });
});

describe('server → client memory.read', () => {
  it('passes items through the registered read hook and replies', async () => {
    const router = new zmq.Router({ linger: 0, receiveTimeout: 3000 });
    const ep = await privateIpcEndpoint();
    await router.bind(ep.endpoint);
    const c = new BridgeClient({ endpoint: ep.endpoint, heartbeatMs: 0 });
    const seen: string[] = [];
    c.setReadHook((items, ctx) => {
      seen.push(ctx.bank);
      return items.map((it): RetrievedItem => ({
        ...it,
        leaves: { v: { dtype: 'float32', shape: [1], data: Float32Array.from([9]) } },
      }));
    });
    try {
      const pending = c.call('ping', {}, { deadlineMs: 3000 });
      const [rid, req] = await router.receive();
      const ping = decodeMessage(req!);
      const item: RetrievedItem = {
        identity: { slot: 0, scope: 's', sourceEpisode: 'e', timestep: 1, version: 0 },
        leaves: { v: { dtype: 'float32', shape: [1], data: Float32Array.from([1]) } },
      };
      const read = encodeMessage({
        kind: 'request',
        id: 1,
        op: 'memory.read',
        body: {
          bank: 'pcmb',
          ctx: { bank: 'pcmb', scope: 's', episode: 'e', queryIndex: 0, decisionStep: true, candidateCount: 1 },
          items: [item],
        },
      });
      await router.send([rid!, (read as { bytes: Buffer }).bytes]);
      const [, answer] = await router.receive();
      const d = decodeMessage(answer!);
      if (!d.ok || d.message.kind !== 'reply') throw new Error('expected a reply');
      expect(d.message.id).toBe(1);
      const items = d.message.body['items'] as RetrievedItem[];
      expect(Array.from(items[0]!.leaves['v']!.data as Float32Array)).toEqual([9]);
      expect(seen).toEqual(['pcmb']);
      // now answer the ping so the call resolves
      const pong = encodeMessage({ kind: 'reply', id: (ping.ok && ping.message.id) || 0, body: { t: 1 } });
      await router.send([rid!, (pong as { bytes: Buffer }).bytes]);
      expect(await pending).toEqual({ t: 1 });
      // without a hook: refused, never silently passed through
      c.setReadHook(undefined);
      await router.send([rid!, (read as { bytes: Buffer }).bytes]);
      const [, refusal] = await router.receive();
      expect(decodeMessage(refusal!)).toMatchObject({
        ok: true,
        message: { kind: 'error', id: 1, code: 'E_UNKNOWN_OP' },
      });
    } finally {
      await c.close();
      router.close();
      await ep.dispose();
    }
  });
});
