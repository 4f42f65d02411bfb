/**
 * The envelope and handle limits of PROTOCOL.md, enforced by the TypeScript side (issue 24): `v` is the msgpack
 * integer 1 (msgpackr decodes the float 1.0 to the same number, so the frame's type bytes are checked), `id` a
 * msgpack integer ≤ 2^53 − 1, and one client holds at most MAX_HANDLES_PER_CLIENT open handles on a server
 * (before: 2,000 makes from one client were all accepted) — and IMEP's runner, which holds one per task and batch
 * slot, refuses a run that would need more before anything is written.
 */
import * as zmq from 'zeromq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { decodeMessage } from '../../src/bridges/envelope.js';
import { floatEnvelopeFields } from '../../src/bridges/msgpack-peek.js';
import { MAX_HANDLES_PER_CLIENT } from '../../src/bridges/op-schemas.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { checkHandlesPerServer } from '../../src/campaign/bridge-envs.js';
import { parseProtocol } from '../../src/protocol/load.js';
import { FAKE_ENV_ID, fakeFactory } from '../fixtures/bridge/fake-env.js';

const str = (s: string): Buffer => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s)]);
const f64 = (x: number): Buffer => {
  const b = Buffer.alloc(9);
  b[0] = 0xcb;
  b.writeDoubleBE(x, 1);
  return b;
};
const f32 = (x: number): Buffer => {
  const b = Buffer.alloc(5);
  b[0] = 0xca;
  b.writeFloatBE(x, 1);
  return b;
};
const int = (x: number): Buffer => Buffer.from([x]); // positive fixint
/** A ping envelope packed by hand, as a Python or C peer may pack it, with the entries in the given order. */
function envelope(entries: ReadonlyArray<[string, Buffer]>): Buffer {
  return Buffer.concat([Buffer.from([0x80 | entries.length]), ...entries.flatMap(([k, v]) => [str(k), v])]);
}
const OP: [string, Buffer] = ['op', str('ping')];
const BODY: [string, Buffer] = ['body', Buffer.from([0x80])];

describe('the envelope: v and id are msgpack integers', () => {
  it('v: 1.0 (float64 or float32) is E_VERSION; v: 1 is served', () => {
    for (const v of [f64(1), f32(1)]) {
      const r = decodeMessage(envelope([['v', v], ['id', int(5)], OP, BODY]));
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect({ code: r.code, id: r.id, message: r.message }).toEqual({
          code: 'E_VERSION',
          id: 5,
          message: 'protocol version 1.0 (a msgpack float) is not supported: v is the integer 1',
        });
    }
    const ok = decodeMessage(envelope([['v', int(1)], ['id', int(5)], OP, BODY]));
    expect(ok.ok && ok.message.kind === 'request' && ok.message.id).toBe(5);
  });

  it('id: 5.0 is E_BAD_MESSAGE with id null, whatever the key order (body first, nested maps and arrays skipped)', () => {
    const nested: [string, Buffer] = [
      'body',
      Buffer.concat([Buffer.from([0x82]), str('a'), Buffer.from([0x92, 0x01, 0xc0]), str('b'), f64(2.5)]),
    ];
    for (const entries of [
      [['v', int(1)], ['id', f64(5)], OP, BODY],
      [nested, OP, ['id', f64(5)], ['v', int(1)]],
    ] as Array<Array<[string, Buffer]>>) {
      const r = decodeMessage(envelope(entries));
      expect(r.ok).toBe(false);
      if (!r.ok) expect({ code: r.code, id: r.id }).toEqual({ code: 'E_BAD_MESSAGE', id: null });
    }
    expect(floatEnvelopeFields(envelope([nested, OP, ['id', int(5)], ['v', int(1)]]))).toEqual([]);
    expect(floatEnvelopeFields(envelope([nested, ['v', f64(1)], ['id', f32(5)]]))).toEqual(['v', 'id']);
    // a float elsewhere in the body is no envelope fault
    expect(decodeMessage(envelope([['v', int(1)], ['id', int(7)], OP, nested])).ok).toBe(true);
  });

  it('id 2^53 (uint64) is E_BAD_MESSAGE with id null; 2^53 − 1 is served', () => {
    const u64 = (x: bigint): Buffer => {
      const b = Buffer.alloc(9);
      b[0] = 0xcf;
      b.writeBigUInt64BE(x, 1);
      return b;
    };
    const big = decodeMessage(envelope([['v', int(1)], ['id', u64(2n ** 53n)], OP, BODY]));
    expect(big.ok ? 'accepted' : `${big.code} ${big.id}`).toBe('E_BAD_MESSAGE null');
    const max = decodeMessage(envelope([['v', int(1)], ['id', u64(2n ** 53n - 1n)], OP, BODY]));
    expect(max.ok && max.message.kind === 'request' && max.message.id).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('a server caps the handles one client holds', () => {
  let ipc: PrivateIpcEndpoint;
  let server: BridgeServer;
  const clients: BridgeClient[] = [];
  const newClient = (): BridgeClient => {
    const c = new BridgeClient({ endpoint: ipc.endpoint, deadlineMs: 5000, heartbeatMs: 0 });
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    ipc = await privateIpcEndpoint();
    server = await BridgeServer.bind({
      endpoint: ipc.endpoint,
      factory: fakeFactory,
      envIds: [FAKE_ENV_ID],
      name: 'test',
    });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await server.close();
    await ipc.dispose();
  });

  it(`the ${MAX_HANDLES_PER_CLIENT + 1}th make is E_TOO_MANY_HANDLES; closing one frees a place; another client is not affected`, async () => {
    const a = newClient();
    const handles: string[] = [];
    for (let i = 0; i < MAX_HANDLES_PER_CLIENT; i++)
      handles.push(((await a.call('make', { env: FAKE_ENV_ID, kwargs: {} })) as { handle: string }).handle);
    expect(new Set(handles).size).toBe(MAX_HANDLES_PER_CLIENT);
    await expect(a.call('make', { env: FAKE_ENV_ID, kwargs: {} })).rejects.toMatchObject({
      code: 'E_BRIDGE_REMOTE',
      wireCode: 'E_TOO_MANY_HANDLES',
      message: expect.stringContaining(
        `the most one client may hold (${MAX_HANDLES_PER_CLIENT}): close one before making another`,
      ),
    });
    expect(server.openHandles).toHaveLength(MAX_HANDLES_PER_CLIENT);
    const b = newClient();
    await expect(b.call('make', { env: FAKE_ENV_ID, kwargs: {} })).resolves.toMatchObject({
      handle: expect.any(String),
    });
    await a.call('close', { handle: handles[0]! });
    await expect(a.call('make', { env: FAKE_ENV_ID, kwargs: {} })).resolves.toMatchObject({
      handle: expect.any(String),
    });
    await expect(a.call('make', { env: FAKE_ENV_ID, kwargs: {} })).rejects.toMatchObject({
      wireCode: 'E_TOO_MANY_HANDLES',
    });
  });

  it('a raw v: 1.0 frame gets an E_VERSION reply and the server keeps serving', async () => {
    const dealer = new zmq.Dealer({ linger: 0 });
    dealer.connect(ipc.endpoint);
    try {
      await dealer.send(envelope([['v', f64(1)], ['id', int(9)], OP, BODY]));
      const [frame] = await dealer.receive();
      const r = decodeMessage(frame!);
      expect(r.ok && r.message.kind === 'error' ? [r.message.id, r.message.code] : r).toEqual([9, 'E_VERSION']);
      await dealer.send(envelope([['v', int(1)], ['id', int(10)], OP, BODY]));
      const [pong] = await dealer.receive();
      const p = decodeMessage(pong!);
      expect(p.ok && p.message.kind).toBe('reply');
    } finally {
      dealer.close();
    }
  });
});

describe('the runner never asks a server for more handles than it serves one client', () => {
  const bridged = (tasks: number): Parameters<typeof checkHandlesPerServer>[0] =>
    parseProtocol(
      `version: 1
id: handles
title: handles
simulator: { kind: lite, transport: bridge }
envs: [${Array.from({ length: tasks }, (_, i) => `{ id: ShellGameTouch-lite, task: t${i} }`).join(', ')}]
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: "${'0'.repeat(64)}" }
memory: { bank: episode-local, banks: [perceptual], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: 0, end: 1 }] }
n: 2
attempts: { count: 1, registered: 1 }
conditions: [{ id: A, kind: A }]
waves: [{ id: 1, conditions: [A], anchor: A }]
estimands: [{ id: SR_A, kind: successRate, condition: A }]
executionFailures: { policy: record }
allowlists: { methodVisible: [rgb], evaluatorOnly: [success] }
`,
      'h.yaml',
    ).protocol;

  it('tasks × slots per server over the cap: E_USAGE naming --batch and how many servers would do', () => {
    expect(() => checkHandlesPerServer(bridged(64), 'h.yaml', 16, 1)).not.toThrow(); // 1,024
    expect(() => checkHandlesPerServer(bridged(64), 'h.yaml', 17, 1)).toThrow(
      /^64 tasks × 17 batch slots per server need 1088 open environments on one simulator server, over the 1024 a server holds for one client$/,
    );
    const e = ((): unknown => {
      try {
        checkHandlesPerServer(bridged(64), 'h.yaml', 32, 1);
        return null;
      } catch (x) {
        return x;
      }
    })();
    expect(e).toMatchObject({
      code: 'E_USAGE',
      field: '--batch',
      hint: expect.stringContaining('--servers (2 or more)'),
    });
    expect(() => checkHandlesPerServer(bridged(64), 'h.yaml', 32, 2)).not.toThrow();
  });
});
