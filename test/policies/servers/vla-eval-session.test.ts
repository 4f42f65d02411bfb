/**
 * connectVlaEval against in-process fake vla-eval model servers: HELLO (what IMEP sends, the reply payload as
 * metadata), EPISODE_START / OBSERVATION → ACTION with seq numbers / EPISODE_END as vla-eval's serve.py reads them,
 * ERROR messages, and every bad server as one ImepError line naming the endpoint.
 */
import type { WebSocket } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectVlaEval,
  packVlaEvalMessage,
  packWire,
  unpackVlaEvalMessage,
  type VlaEvalMessage,
  type VlaEvalMessageType,
  type WireMap,
} from '../../../src/policies/servers/index.js';
import { deadPort, expectImepError, fakeServer, timeToSettle, type FakeServer } from './fake-server.js';
import { asNd, comparable, f32 } from './wire-cases.js';

const HELLO_REPLY: WireMap = {
  harness_version: '0.8.0',
  protocol_version: 1,
  model_server: 'FakeServer',
  capabilities: {},
  action_spec: { actions: { name: 'actions', dims: 2, format: 'delta' } },
};

let servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

const reply = (ws: WebSocket, type: VlaEvalMessageType, payload: WireMap, seq: number): void =>
  ws.send(packVlaEvalMessage(type, payload, seq, 1.5));

/** A model server like serve.py: HELLO reply, nothing for episode_start/end, `onObs` for observations. */
async function modelServer(
  onObs: (ws: WebSocket, msg: VlaEvalMessage) => void,
  hello = HELLO_REPLY,
): Promise<FakeServer> {
  const s = await fakeServer(
    () => undefined,
    (ws, frame) => {
      const msg = unpackVlaEvalMessage(frame);
      if (msg.type === 'hello') reply(ws, 'hello', hello, msg.seq);
      else if (msg.type === 'observation') onObs(ws, msg);
    },
  );
  servers.push(s);
  return s;
}

const echo = (ws: WebSocket, msg: VlaEvalMessage): void => {
  const s = Array.from(asNd(msg.payload['state']).data as Float32Array);
  reply(
    ws,
    'action',
    {
      actions: f32(
        [s.length],
        s.map((x) => x * 2),
      ),
    },
    msg.seq,
  );
};

describe('connectVlaEval: the protocol', () => {
  it('HELLO, EPISODE_START, OBSERVATION → ACTION by seq, EPISODE_END, as serve.py reads them', async () => {
    const srv = await modelServer(echo);
    const session = await connectVlaEval(srv.endpoint, { deadlineMs: 2000 });
    expect(session.metadata).toEqual(HELLO_REPLY);
    await session.startEpisode({ envId: 'ShellGameTouch-lite', instruction: 'find the ball' });
    const a1 = await session.infer({ state: f32([2], [1, -2]), task_description: 'find the ball' });
    expect(comparable(a1)).toEqual(comparable({ actions: f32([2], [2, -4]) }));
    const a2 = await session.infer({ state: f32([2], [0.25, 3]) });
    expect(comparable(a2)).toEqual(comparable({ actions: f32([2], [0.5, 6]) }));
    await session.endEpisode({ success: true, steps: 2 });
    await session.close();
    const sent = srv.received.map((f) => unpackVlaEvalMessage(f));
    expect(sent.map((m) => [m.type, m.seq])).toEqual([
      ['hello', 1],
      ['episode_start', 2],
      ['observation', 3],
      ['observation', 4],
      ['episode_end', 5],
    ]);
    expect(sent[0]!.payload).toEqual({ harness_version: 'imep', protocol_version: 1 });
    expect(sent[1]!.payload).toEqual({ task: { name: 'ShellGameTouch-lite', instruction: 'find the ball' } });
    expect(sent[2]!.payload['task_description']).toBe('find the ball');
    expect(sent[4]!.payload).toEqual({ metrics: { success: true }, steps: 2 });
    for (const m of sent) expect(Math.abs(m.timestamp - Date.now() / 1000)).toBeLessThan(60);
    // the array went out in vla-eval's dialect: str keys
    expect(srv.received[2]!.includes(Buffer.from('\xab__ndarray__', 'latin1'))).toBe(true);
  });
  it('an episode without instruction sends only the task name', async () => {
    const srv = await modelServer(echo);
    const session = await connectVlaEval(srv.endpoint, { deadlineMs: 2000 });
    await session.startEpisode({ envId: 'MemoryColor-lite' });
    await session.close();
    expect(unpackVlaEvalMessage(srv.received[1]!).payload).toEqual({ task: { name: 'MemoryColor-lite' } });
  });
  it('an ERROR answer is E_BRIDGE_PROTOCOL with the server message; the session stays usable', async () => {
    let n = 0;
    const srv = await modelServer((ws, msg) => {
      if (n++ === 0) reply(ws, 'error', { error: "observation_failed: KeyError: 'state'\nmore" }, msg.seq);
      else echo(ws, msg);
    });
    const session = await connectVlaEval(srv.endpoint, { deadlineMs: 2000 });
    await expectImepError(
      session.infer({}),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /the server answered ERROR: observation_failed: KeyError: 'state'\\nmore$/,
    );
    expect(comparable(await session.infer({ state: f32([1], [3]) }))).toEqual(comparable({ actions: f32([1], [6]) }));
    await session.close();
  });
  it('an episode_start_failed ERROR surfaces at the next call', async () => {
    const srv = await fakeServer(
      () => undefined,
      (ws, frame) => {
        const msg = unpackVlaEvalMessage(frame);
        if (msg.type === 'hello') reply(ws, 'hello', HELLO_REPLY, msg.seq);
        if (msg.type === 'episode_start')
          reply(ws, 'error', { error: 'episode_start_failed: ValueError: no level' }, msg.seq);
      },
    );
    servers.push(srv);
    const session = await connectVlaEval(srv.endpoint, { deadlineMs: 2000 });
    await session.startEpisode({ envId: 'X' });
    await expectImepError(
      session.infer({}),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /episode_start_failed: ValueError: no level/,
    );
    await session.close();
  });
});

describe('connectVlaEval: bad servers, one line naming the endpoint', () => {
  it('not listening', async () => {
    const endpoint = `ws://127.0.0.1:${await deadPort()}`;
    await expectImepError(connectVlaEval(endpoint, { deadlineMs: 1000 }), 'E_BRIDGE_REMOTE', endpoint, /not listening/);
  });
  it('connects but never answers HELLO', async () => {
    const srv = await fakeServer(
      () => undefined,
      () => undefined,
    );
    servers.push(srv);
    const p = connectVlaEval(srv.endpoint, { deadlineMs: 300 });
    const ms = await timeToSettle(p);
    await expectImepError(p, 'E_BRIDGE_TIMEOUT', srv.endpoint, /no HELLO reply message within 300 ms/);
    expect(ms).toBeGreaterThanOrEqual(280);
    expect(ms).toBeLessThan(2000);
  });
  it('answers HELLO with something else, or another protocol version', async () => {
    const srv = await fakeServer(
      () => undefined,
      (ws, frame) => reply(ws, 'action', {}, unpackVlaEvalMessage(frame).seq),
    );
    servers.push(srv);
    await expectImepError(
      connectVlaEval(srv.endpoint, { deadlineMs: 1000 }),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /a action message answered HELLO/,
    );
    const v2 = await modelServer(echo, { ...HELLO_REPLY, protocol_version: 2 });
    await expectImepError(
      connectVlaEval(v2.endpoint, { deadlineMs: 1000 }),
      'E_BRIDGE_PROTOCOL',
      v2.endpoint,
      /speaks vla-eval protocol version 2; IMEP speaks 1/,
    );
  });
  it('non-msgpack frames, and msgpack that is not a message', async () => {
    const srv = await fakeServer(
      () => undefined,
      (ws) => ws.send(Buffer.from('{"type": "hello"}')),
    );
    servers.push(srv);
    await expectImepError(
      connectVlaEval(srv.endpoint, { deadlineMs: 1000 }),
      'E_BRIDGE_PROTOCOL',
      srv.endpoint,
      /message: not msgpack \(17 bytes\).*\(expected the HELLO reply\)/,
    );
    const srv2 = await modelServer((ws) => ws.send(packWire({ type: 'action', seq: 3 }, 'vla-eval')));
    const session = await connectVlaEval(srv2.endpoint, { deadlineMs: 1000 });
    await expectImepError(
      session.infer({}),
      'E_BRIDGE_PROTOCOL',
      srv2.endpoint,
      /message: missing payload, timestamp \(expected the action\)/,
    );
    const srv3 = await modelServer((ws) => ws.send(packWire([1, 2, 3], 'vla-eval')));
    const s3 = await connectVlaEval(srv3.endpoint, { deadlineMs: 1000 });
    await expectImepError(s3.infer({}), 'E_BRIDGE_PROTOCOL', srv3.endpoint, /expected a msgpack map, got an array/);
    const srv4 = await modelServer((ws, msg) => reply(ws, 'action', { actions: 'x' }, msg.seq + 7));
    const s4 = await connectVlaEval(srv4.endpoint, { deadlineMs: 1000 });
    await expectImepError(
      s4.infer({}),
      'E_BRIDGE_PROTOCOL',
      srv4.endpoint,
      /an action for seq 9 answered observation seq 2/,
    );
    const srv5 = await modelServer((ws) => ws.send('Traceback (most recent call last):\nValueError: x'));
    const s5 = await connectVlaEval(srv5.endpoint, { deadlineMs: 1000 });
    await expectImepError(
      s5.infer({}),
      'E_BRIDGE_PROTOCOL',
      srv5.endpoint,
      /a text frame instead of the action: Traceback/,
    );
    await Promise.all([session.close(), s3.close(), s4.close(), s5.close()]);
  });
  it('slower than the deadline', async () => {
    const srv = await modelServer(() => undefined);
    const session = await connectVlaEval(srv.endpoint, { deadlineMs: 300 });
    const p = session.infer({});
    const ms = await timeToSettle(p);
    await expectImepError(p, 'E_BRIDGE_TIMEOUT', srv.endpoint, /no action message within 300 ms/);
    expect(ms).toBeLessThan(2000);
    await session.close();
  });
  it('dies while a call is pending: the call rejects at once', async () => {
    const srv = await modelServer((ws) => setTimeout(() => ws.terminate(), 50));
    const session = await connectVlaEval(srv.endpoint, { deadlineMs: 20_000 });
    const p = session.infer({});
    const ms = await timeToSettle(p);
    await expectImepError(p, 'E_BRIDGE_REMOTE', srv.endpoint, /the server closed the connection \(code 1006\)/);
    expect(ms).toBeLessThan(1500);
    await expectImepError(session.endEpisode({ success: false, steps: 1 }), 'E_BRIDGE_REMOTE', srv.endpoint, /closed/);
    await session.close();
  });
});
