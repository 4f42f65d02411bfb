/**
 * Fault tests against a supervised lite server process: killed mid-episode, SIGSTOP'd, restarted.
 * Every failure must be a typed error within the call's deadline (plus a small margin) — never a hang.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import { RemoteEnvironment } from '../../src/bridges/remote-environment.js';
import { ServerSupervisor, liteServerCommand } from '../../src/bridges/supervisor.js';
import { isImepError } from '../../src/core/errors.js';

const ENV = 'ShellGameTouch-lite';
const MARGIN_MS = 1000; // generous: CI machines are shared; a hang would be far longer
const act = () => ndarray('float32', [2], Float32Array.of(0, 0.06));

async function timed<T>(p: Promise<T>): Promise<{ error: unknown; ms: number }> {
  const t0 = performance.now();
  try {
    await p;
    return { error: undefined, ms: performance.now() - t0 };
  } catch (error) {
    return { error, ms: performance.now() - t0 };
  }
}

let ipc: PrivateIpcEndpoint;
let sup: ServerSupervisor;

beforeAll(async () => {
  ipc = await privateIpcEndpoint();
  sup = new ServerSupervisor(liteServerCommand(ipc.endpoint, { runtime: 'tsx' }), {
    endpoint: ipc.endpoint,
    readyTimeoutMs: 30_000,
  });
  await sup.start();
});

afterAll(async () => {
  await sup?.dispose();
  await ipc?.dispose();
});

describe('a killed server', () => {
  it('fails an unsupervised call with E_BRIDGE_TIMEOUT at its deadline, then works after restart', async () => {
    const client = new BridgeClient({ endpoint: ipc.endpoint, heartbeatMs: 0 });
    try {
      await client.connect();
      const env = await RemoteEnvironment.make(client, ENV, {}, { stepMs: 800 });
      await env.reset({ seed: 5 });
      await env.step(act());
      sup.signal('SIGKILL');
      await sup.stop();
      const { error, ms } = await timed(env.step(act()));
      expect(isImepError(error) && error.code).toBe('E_BRIDGE_TIMEOUT');
      expect(ms).toBeGreaterThanOrEqual(790);
      expect(ms).toBeLessThan(800 + MARGIN_MS);
      expect(client.inFlight).toBe(0);

      await sup.restart();
      await client.connect();
      const env2 = await RemoteEnvironment.make(client, ENV, {});
      expect((await env2.reset({ seed: 5 })).step).toBe(0);
      expect((await env2.step(act())).step).toBe(1);
      await env2.close();
    } finally {
      await client.close();
    }
  });

  it('fails a supervised in-flight call with E_BRIDGE_REMOTE as soon as the process dies', async () => {
    const client = new BridgeClient({ endpoint: ipc.endpoint, liveness: sup, heartbeatMs: 0 });
    try {
      await client.connect();
      const env = await RemoteEnvironment.make(client, ENV, {}, { stepMs: 5000 });
      await env.reset({ seed: 6 });
      sup.signal('SIGSTOP'); // keep the next step in flight
      const pending = timed(env.step(act()));
      await new Promise((r) => setTimeout(r, 100));
      sup.signal('SIGKILL');
      const { error, ms } = await pending;
      expect(isImepError(error) && error.code).toBe('E_BRIDGE_REMOTE');
      expect(String((error as Error).message)).toMatch(/SIGKILL/);
      expect(ms).toBeLessThan(5000 - 1000);
      // dead: calls fail fast until restart + reconnect
      const fast = await timed(client.call('ping', {}, { deadlineMs: 5000 }));
      expect(isImepError(fast.error) && fast.error.code).toBe('E_BRIDGE_REMOTE');
      expect(fast.ms).toBeLessThan(250);
      expect(client.alive).toBe(false);

      await sup.restart();
      await client.reconnect();
      expect(client.alive).toBe(true);
      const env2 = await RemoteEnvironment.make(client, ENV, {});
      await env2.reset({ seed: 6 });
      await env2.close();
    } finally {
      await client.close();
    }
  });
});

describe("a SIGSTOP'd server", () => {
  it('is detected by the call deadline and by the heartbeat, and recovers after SIGCONT', async () => {
    const client = new BridgeClient({
      endpoint: ipc.endpoint,
      liveness: sup,
      heartbeatMs: 150,
      heartbeatDeadlineMs: 300,
    });
    const deaths: string[] = [];
    client.onDead((e) => deaths.push(e.code));
    try {
      await client.connect();
      const env = await RemoteEnvironment.make(client, ENV, {}, { stepMs: 600 });
      await env.reset({ seed: 7 });
      sup.signal('SIGSTOP');
      const { error, ms } = await timed(env.step(act()));
      expect(isImepError(error) && error.code).toBe('E_BRIDGE_TIMEOUT');
      expect(ms).toBeLessThan(600 + MARGIN_MS);
      // idle now: the heartbeat misses and marks the connection dead
      const t0 = performance.now();
      while (client.alive && performance.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 25));
      expect(client.alive).toBe(false);
      expect(deaths).toEqual(['E_BRIDGE_TIMEOUT']);
      const fast = await timed(client.call('ping', {}));
      expect(isImepError(fast.error) && fast.error.message).toMatch(/missed heartbeat/);

      sup.signal('SIGCONT');
      await client.reconnect({ deadlineMs: 5000 });
      expect(client.alive).toBe(true);
      await env.reset({ seed: 7 });
      expect((await env.step(act())).step).toBe(1);
      await env.close();
    } finally {
      sup.signal('SIGCONT');
      await client.close();
    }
  });
});

describe('supervisor', () => {
  it('reports a process that exits before it is ready, with its stderr', async () => {
    const bad = new ServerSupervisor(
      {
        file: process.execPath,
        args: ['-e', 'process.stderr.write("boom: no simulator\\n"); process.exit(3)'],
        label: 'bad server',
      },
      { endpoint: ipc.endpoint.replace('bridge.sock', 'none.sock'), readyTimeoutMs: 10_000 },
    );
    const { error, ms } = await timed(bad.start());
    expect(isImepError(error) && error.code).toBe('E_BRIDGE_REMOTE');
    expect(String((error as Error).message)).toMatch(/exited with code 3.*boom: no simulator/);
    expect(ms).toBeLessThan(5000);
    await bad.dispose();
  });

  it('maps a missing Python module to E_SIM_UNAVAILABLE naming the package', async () => {
    const bad = new ServerSupervisor(
      {
        file: process.execPath,
        args: ['-e', 'process.stderr.write("ModuleNotFoundError: No module named \'zmq\'\\n"); process.exit(1)'],
        label: 'sim-bridge',
      },
      { endpoint: ipc.endpoint.replace('bridge.sock', 'none2.sock'), readyTimeoutMs: 10_000 },
    );
    const { error } = await timed(bad.start());
    expect(isImepError(error) && error.code).toBe('E_SIM_UNAVAILABLE');
    expect(String((error as Error).message)).toMatch(/'zmq'/);
    await bad.dispose();
  });
});
