/**
 * connectOpenpi against in-process fake openpi servers: the metadata frame, infer (server_timing kept out of the
 * reply), nothing on the wire for episodes, the health check, and every bad server as one ImepError line naming the
 * endpoint: not listening, no metadata, non-msgpack frames, a traceback text frame, a reply that is not a map, a
 * server slower than the deadline, a server that dies while a call is pending (rejected at once).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Packr } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkOpenpiHealth,
  connectOpenpi,
  packWire,
  unpackWireMap,
  type OpenpiSession,
} from '../../../src/policies/servers/index.js';
import { deadPort, expectImepError, fakeServer, timeToSettle, type FakeServer } from './fake-server.js';
import { asNd, bytesOf, comparable, f32 } from './wire-cases.js';

const META = { policy: 'fake', action_horizon: 2 };
const sendMeta = (ws: import('ws').WebSocket): void => ws.send(packWire(META, 'openpi'));
const never = (): void => undefined;

let servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function serve(...args: Parameters<typeof fakeServer>): Promise<FakeServer> {
  const s = await fakeServer(...args);
  servers.push(s);
  return s;
}

/** Echo: actions = state + [0, 1] per row, plus server_timing as openpi's server adds it. */
function echo(ws: import('ws').WebSocket, frame: Buffer): void {
  const obs = unpackWireMap(frame);
  const s = asNd(obs['state']);
  const state = Array.from(s.data as Float32Array);
  ws.send(
    packWire(
      { actions: f32([2, state.length], [...state, ...state.map((x) => x + 1)]), server_timing: { infer_ms: 1.5 } },
      'openpi',
    ),
  );
}

describe('connectOpenpi: the protocol', () => {
  it('reads the metadata frame, infers, strips server_timing, sends nothing for episodes, closes idempotently', async () => {
    const srv = await serve(sendMeta, echo, { health: true });
    const session = (await connectOpenpi(srv.endpoint, { deadlineMs: 2000 })) as OpenpiSession;
    expect(session.endpoint).toBe(srv.endpoint);
    expect(session.metadata).toEqual(META);
    await session.startEpisode({ envId: 'ShellGameTouch-lite', instruction: 'find the ball' });
    expect(srv.received).toHaveLength(0);
    const reply = await session.infer({ state: f32([3], [0.5, -1, 2]), prompt: 'find the ball' });
    expect(Object.keys(reply)).toEqual(['actions']);
    expect(comparable(reply)).toEqual({
      actions: { dtype: 'float32', shape: [2, 3], hex: bytesOf(f32([6], [0.5, -1, 2, 1.5, 0, 3])).toString('hex') },
    });
    expect(session.lastServerTiming).toEqual({ infer_ms: 1.5 });
    // the observation went out in openpi's dialect: the array map has BYTES keys, the prompt is a str
    const raw = new Packr({ useRecords: false, mapsAsObjects: false } as never).unpack(srv.received[0]!) as Map<
      unknown,
      unknown
    >;
    const state = raw.get('state') as Map<unknown, unknown>;
    expect([...state.keys()].every((k) => k instanceof Uint8Array)).toBe(true);
    expect(raw.get('prompt')).toBe('find the ball');
    await session.endEpisode({ success: true, steps: 1 });
    expect(srv.received).toHaveLength(1);
    await checkOpenpiHealth(srv.endpoint, 1000);
    await session.close();
    await session.close();
    await expectImepError(session.infer({}), 'E_BRIDGE_REMOTE', srv.endpoint, /the session was closed/);
  });
});

describe('connectOpenpi: bad servers, one line naming the endpoint', () => {
  it('not listening', async () => {
    const endpoint = `ws://127.0.0.1:${await deadPort()}`;
    await expectImepError(connectOpenpi(endpoint, { deadlineMs: 1000 }), 'E_BRIDGE_REMOTE', endpoint, /not listening/);
    await expectImepError(checkOpenpiHealth(endpoint, 1000), 'E_BRIDGE_REMOTE', endpoint, /not listening/);
  });
  it('not a ws:// URL', async () => {
    await expectImepError(
      connectOpenpi('http://127.0.0.1:1', { deadlineMs: 1000 }),
      'E_BRIDGE_REMOTE',
      'http://127.0.0.1:1',
      /not a ws:\/\/ or wss:\/\/ URL/,
    );
  });
  it('an HTTP server that does not upgrade', async () => {
    const http = createServer((_req, res) => {
      res.writeHead(404);
      res.end('no');
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const endpoint = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
    try {
      await expectImepError(
        connectOpenpi(endpoint, { deadlineMs: 1000 }),
        'E_BRIDGE_PROTOCOL',
        endpoint,
        /answered HTTP 404 instead of a WebSocket upgrade/,
      );
      await expectImepError(
        checkOpenpiHealth(endpoint, 1000),
        'E_BRIDGE_PROTOCOL',
        endpoint,
        /GET \/healthz answered HTTP 404/,
      );
    } finally {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    }
  });
  it('connects but sends no metadata within the deadline', async () => {
    const srv = await serve(never, never);
    const p = connectOpenpi(srv.endpoint, { deadlineMs: 300 });
    const ms = await timeToSettle(p);
    await expectImepError(p, 'E_BRIDGE_TIMEOUT', srv.endpoint, /no metadata frame within 300 ms/);
    expect(ms).toBeGreaterThanOrEqual(280);
    expect(ms).toBeLessThan(2000);
  });
  it('a metadata frame that is not msgpack, or not a map', async () => {
    const srv = await serve((ws) => ws.send(Buffer.from([0xc1, 0x00])), never);
    await expectImepError(
      connectOpenpi(srv.endpoint, { deadlineMs: 1000 }),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /reply: not msgpack \(2 bytes\).*\(expected the metadata frame\)/,
    );
    const srv2 = await serve((ws) => ws.send(packWire([1, 2], 'openpi')), never);
    await expectImepError(
      connectOpenpi(srv2.endpoint, { deadlineMs: 1000 }),
      'E_BRIDGE_PROTOCOL',
      srv2.endpoint,
      /expected a msgpack map, got an array/,
    );
  });
  it('a non-msgpack reply to infer', async () => {
    const srv = await serve(sendMeta, (ws) => ws.send(Buffer.from('{"actions": [1, 2]}')));
    const session = await connectOpenpi(srv.endpoint, { deadlineMs: 1000 });
    await expectImepError(session.infer({ state: f32([1], [1]) }), 'E_BRIDGE_PROTOCOL', srv.endpoint, /not msgpack/);
    await session.close();
  });
  it('a traceback text frame instead of an action (then close 1011), and the session stays broken', async () => {
    const tb =
      'Traceback (most recent call last):\n  File "policy.py", line 3, in infer\n    raise ValueError("bad state")\nValueError: bad state\n';
    const srv = await serve(sendMeta, (ws) => {
      ws.send(tb);
      ws.close(1011, 'Internal server error. Traceback included in previous frame.');
    });
    const session = await connectOpenpi(srv.endpoint, { deadlineMs: 1000 });
    const e = await expectImepError(
      session.infer({ state: f32([1], [1]) }),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /the server sent a traceback instead of an action: ValueError: bad state$/,
    );
    await expect(session.infer({ state: f32([1], [1]) })).rejects.toBe(e);
    await session.close();
  });
  it('a reply that is not a map', async () => {
    const srv = await serve(sendMeta, (ws) => ws.send(packWire('Traceback: oops', 'openpi')));
    const session = await connectOpenpi(srv.endpoint, { deadlineMs: 1000 });
    await expectImepError(
      session.infer({ state: f32([1], [1]) }),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /reply: expected a msgpack map, got a string \(expected an action\)/,
    );
    await session.close();
  });
  it('a reply with a big-endian array', async () => {
    const bad = { __ndarray__: true, data: Buffer.alloc(4), dtype: '>f4', shape: [1] };
    const srv = await serve(sendMeta, (ws) =>
      ws.send(new Packr({ useRecords: false, variableMapSize: true } as never).pack({ actions: bad })),
    );
    const session = await connectOpenpi(srv.endpoint, { deadlineMs: 1000 });
    await expectImepError(
      session.infer({}),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /reply\.actions: big-endian numpy dtype ">f4"/,
    );
    await session.close();
  });
  it('slower than the deadline: E_BRIDGE_TIMEOUT at the deadline, then the session is closed', async () => {
    const srv = await serve(sendMeta, never);
    const session = await connectOpenpi(srv.endpoint, { deadlineMs: 300 });
    const p = session.infer({ state: f32([1], [1]) });
    const ms = await timeToSettle(p);
    await expectImepError(p, 'E_BRIDGE_TIMEOUT', srv.endpoint, /no reply to infer within 300 ms/);
    expect(ms).toBeGreaterThanOrEqual(280);
    expect(ms).toBeLessThan(2000);
    await expectImepError(session.infer({}), 'E_BRIDGE_TIMEOUT', srv.endpoint, /no reply to infer/);
    await session.close();
  });
  it('dies while a call is pending: the call rejects at once, not at the deadline', async () => {
    const srv = await serve(sendMeta, (ws) => setTimeout(() => ws.terminate(), 50));
    const session = await connectOpenpi(srv.endpoint, { deadlineMs: 20_000 });
    const p = session.infer({ state: f32([1], [1]) });
    const ms = await timeToSettle(p);
    await expectImepError(p, 'E_BRIDGE_REMOTE', srv.endpoint, /the server closed the connection \(code 1006\)/);
    expect(ms).toBeLessThan(1500);
    await session.close();
  });
  it('the whole server goes away mid-episode: the next call rejects at once', async () => {
    const srv = await serve(sendMeta, echo);
    const session = await connectOpenpi(srv.endpoint, { deadlineMs: 20_000 });
    await session.infer({ state: f32([1], [1]) });
    await srv.close();
    const p = session.infer({ state: f32([1], [1]) });
    expect(await timeToSettle(p)).toBeLessThan(1500);
    await expectImepError(p, 'E_BRIDGE_REMOTE', srv.endpoint, /closed the connection|connection lost/);
  });
});
