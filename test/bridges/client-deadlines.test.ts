/** The client's one shared deadline timer: an earlier deadline re-arms it; a later one waits its turn. */
import * as zmq from 'zeromq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { isImepError } from '../../src/core/errors.js';

let ipc: PrivateIpcEndpoint;
let silent: zmq.Router;

beforeAll(async () => {
  ipc = await privateIpcEndpoint();
  silent = new zmq.Router({ linger: 0 }); // reads nothing, answers nothing
  await silent.bind(ipc.endpoint);
});

afterAll(async () => {
  silent.close();
  await ipc.dispose();
});

async function settle(p: Promise<unknown>): Promise<{ at: number; code: string; message: string }> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  return {
    at: performance.now(),
    code: isImepError(e) ? e.code : String(e),
    message: e instanceof Error ? e.message : '',
  };
}

describe('client deadlines', () => {
  it('a call with an earlier deadline than the one in flight times out at its own deadline', async () => {
    const client = new BridgeClient({ endpoint: ipc.endpoint, heartbeatMs: 0 });
    try {
      const t0 = performance.now();
      const late = settle(client.call('ping', {}, { deadlineMs: 20_000 }));
      const early = settle(client.call('ping', {}, { deadlineMs: 300 }));
      const [e, l] = await Promise.all([early, late]);
      expect(e.code).toBe('E_BRIDGE_TIMEOUT');
      expect(e.message).toMatch(/no reply .* within 300 ms/);
      expect(e.at - t0).toBeGreaterThanOrEqual(300);
      expect(e.at - t0).toBeLessThan(3000);
      // the timeout resets the connection: the other call fails with it, not 20 s later
      expect(l.code).toBe('E_BRIDGE_TIMEOUT');
      expect(l.message).toMatch(/call reset/);
    } finally {
      await client.close();
    }
  });

  it('a later deadline does not fire early, and fires once due', async () => {
    const client = new BridgeClient({ endpoint: ipc.endpoint, heartbeatMs: 0 });
    try {
      // one call after another: the second arms the timer afresh for its own 600 ms
      const t0 = performance.now();
      const first = await settle(client.call('ping', {}, { deadlineMs: 200 }));
      expect(first.code).toBe('E_BRIDGE_TIMEOUT');
      const t1 = performance.now();
      const second = await settle(client.call('ping', {}, { deadlineMs: 600 }));
      expect(second.code).toBe('E_BRIDGE_TIMEOUT');
      expect(second.message).toMatch(/within 600 ms/);
      expect(second.at - t1).toBeGreaterThanOrEqual(600);
      expect(first.at - t0).toBeGreaterThanOrEqual(200);
    } finally {
      await client.close();
    }
  });
});
