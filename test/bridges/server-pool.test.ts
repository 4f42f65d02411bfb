/**
 * BridgeServerPool (src/bridges/server-pool.ts) against the Python sim-bridge serving the recorded
 * fixture sim-bridge/tests/fixtures/replay/tiny.msgpack (env replay/tiny: seeds 0 and 1, three steps,
 * recorded action at step t of seed s = float32 [0.25·t − 0.5, 0.1·s], success at the end of seed 1):
 * spawned servers are restarted after a death, error replies do not make a server suspect, an attached
 * server is never restarted (only reconnected once its owner restarts it), and an endpoint where nothing
 * listens is a clear error naming it.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { privateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import { BridgeCallError } from '../../src/bridges/remote-error.js';
import { RemoteEnvironment } from '../../src/bridges/remote-environment.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { sendSteps } from '../../src/runtime/send-steps.js';
import { BridgeServerPool } from '../../src/bridges/server-pool.js';
import type { EnvSpec, SimEnvironment } from '../../src/runtime/environment.js';
import { liteServerCommand, packageRoot, pythonServerCommand, ServerSupervisor } from '../../src/bridges/supervisor.js';
import { ImepError } from '../../src/core/errors.js';

const REPLAY_DIR = join(packageRoot(), 'sim-bridge/tests/fixtures/replay');
const ENV = 'replay/tiny';
const action = (seed: number, t: number) => ndarray('float32', [2], Float32Array.of(0.25 * t - 0.5, 0.1 * seed));
const replayServer = (endpoint: string) =>
  pythonServerCommand(endpoint, { adapters: ['replay'], replayDir: REPLAY_DIR });

async function specOf(pool: BridgeServerPool): Promise<EnvSpec> {
  const env = await RemoteEnvironment.make(pool.client(0), ENV, {});
  await env.close();
  return env.spec;
}

/** Runs seed `seed` to its end with the recorded actions; returns the final evaluator fields. */
async function playEpisode(env: SimEnvironment, seed: number): Promise<Record<string, unknown>> {
  let r = await env.reset({ seed });
  for (let t = 0; !r.done; t++) r = await env.step(action(seed, t));
  return r.evaluator as Record<string, unknown>;
}

async function rejection(p: Promise<unknown>): Promise<ImepError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ImepError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

async function freeTcpPort(): Promise<number> {
  return new Promise((resolvePort) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

describe('BridgeServerPool', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('spawned: an error reply fails only its call; a killed server fails fast, is restarted on the next reset, and its envs are re-made', async () => {
    const failures: string[] = [];
    const pool = await BridgeServerPool.spawn(1, replayServer, {
      deadlines: { stepMs: 5000 },
      observer: { onFailure: (_, e) => failures.push(e.code) },
    });
    cleanups.push(() => pool.dispose());
    const env = pool.environment(0, ENV, {}, await specOf(pool));
    expect(await playEpisode(env, 1)).toMatchObject({ success: true, seed: 1 });

    await env.reset({ seed: 0 });
    const bad = await rejection(env.step(action(1, 0))); // seed 1's action on seed 0's episode
    expect(bad).toBeInstanceOf(BridgeCallError);
    expect((bad as BridgeCallError).wireCode).toBe('E_BAD_ACTION');
    expect(pool.suspectError(0)).toBeNull(); // the server answered: it is not suspect
    expect(await playEpisode(env, 0)).toMatchObject({ success: false, seed: 0 });
    expect(pool.stats().recoveries).toBe(0);

    const pid = pool.pids()[0] as number;
    await env.reset({ seed: 1 });
    process.kill(pid, 'SIGKILL');
    const t0 = performance.now();
    const died = await rejection(env.step(action(1, 0)));
    expect(died.code).toBe('E_BRIDGE_REMOTE'); // the supervisor saw the exit: no deadline to wait for
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(pool.suspectError(0)?.code).toBe('E_BRIDGE_REMOTE');

    expect(await playEpisode(env, 1)).toMatchObject({ success: true }); // restart + re-make on the new process
    expect(pool.pids()[0]).not.toBe(pid);
    expect(pool.generation(0)).toBe(1);
    expect(pool.stats()).toEqual({ origin: 'spawned', servers: 1, recoveries: 1, failedCalls: { E_BRIDGE_REMOTE: 2 } });
    expect(failures).toEqual(['E_BRIDGE_REMOTE', 'E_BRIDGE_REMOTE']);
  }, 60_000);

  it('attached: never restarted — a dead server fails episodes naming its endpoint, fast between tries, and is reconnected once its owner restarts it', async () => {
    const ipc = await privateIpcEndpoint();
    const sup = new ServerSupervisor(replayServer(ipc.endpoint), { endpoint: ipc.endpoint, readyTimeoutMs: 30_000 });
    cleanups.push(async () => {
      await sup.dispose();
      await ipc.dispose();
    });
    await sup.start();
    const pool = await BridgeServerPool.attach(ipc.endpoint, {
      deadlines: { stepMs: 400 },
      connectMs: 400,
      attachedRetryMs: 1500,
    });
    cleanups.push(() => pool.dispose());
    expect(pool.origin).toBe('attached');
    expect(pool.pids()).toEqual([undefined]);
    const env = pool.environment(0, ENV, {}, await specOf(pool));
    expect(await playEpisode(env, 1)).toMatchObject({ success: true });

    await env.reset({ seed: 1 });
    sup.signal('SIGKILL');
    const timedOut = await rejection(env.step(action(1, 0)));
    expect(timedOut.code).toBe('E_BRIDGE_TIMEOUT');
    const down = await rejection(env.reset({ seed: 1 })); // one reconnect try (connectMs), no restart
    expect(down.message).toContain(`the simulator server at ${ipc.endpoint} (not started by IMEP) does not answer`);
    expect(down.hint).toContain('IMEP does not restart a server it did not start');
    const t0 = performance.now();
    const fast = await rejection(env.reset({ seed: 1 })); // within attachedRetryMs: no wait
    expect(performance.now() - t0).toBeLessThan(300);
    expect(fast.message).toContain(ipc.endpoint);
    expect(sup.running).toBe(false); // IMEP never restarted it
    expect(pool.stats().recoveries).toBe(0);

    await sup.start(); // its owner restarts it
    await new Promise((r) => setTimeout(r, 1600));
    expect(await playEpisode(env, 1)).toMatchObject({ success: true });
    expect(pool.stats().recoveries).toBe(1);
    expect(pool.generation(0)).toBe(1);
  }, 60_000);

  it('a batch of steps sent at once reaches each server one call at a time, and answers as in process', async () => {
    const inFlightAtSend: string[] = [];
    let pool: BridgeServerPool | null = null;
    const observer = {
      beforeStep: (i: number) => inFlightAtSend.push(`${i}:${(pool as BridgeServerPool).client(i).inFlight}`),
    };
    pool = await BridgeServerPool.spawn(2, (e) => liteServerCommand(e, { runtime: 'dist' }), { observer });
    const p = pool;
    cleanups.push(() => p.dispose());
    const id = 'ShellGameTouch-lite';
    const spec = makeLiteEnv(id, {}).spec;
    const remote = [0, 1, 2, 3, 4, 5].map((slot) => p.environment(slot % 2, id, {}, spec));
    const local = remote.map(() => makeLiteEnv(id, {}));
    // resets sent together too: each server makes and resets its three environments in turn
    const firsts = await Promise.all(remote.map((e, slot) => e.reset({ seed: 40 + slot })));
    const localFirsts = await Promise.all(local.map((e, slot) => e.reset({ seed: 40 + slot })));
    expect(firsts.map((r) => r.firstFrameHash)).toEqual(localFirsts.map((r) => r.firstFrameHash));
    // six seeds, one first frame per ball cup: with the tool at home (the lite default since issue #32) the first frame
    // shows only the cue, so seeds 40…45 give two or three first frames (one per ball cup they draw), not six
    const frames = new Set(firsts.map((r) => r.firstFrameHash)).size;
    expect(frames).toBeGreaterThanOrEqual(2);
    expect(frames).toBeLessThanOrEqual(3);
    for (let t = 0; t < 3; t++) {
      const act = (slot: number) => ndarray('float32', [2], Float32Array.of(0.1 * slot - 0.2, 0.05 * t));
      const sent = sendSteps(remote, act);
      expect(sent.every((x) => x !== undefined)).toBe(true);
      const got = await Promise.all(sent.map((x) => x!.then((r) => r.result)));
      const want = await Promise.all(local.map((e, slot) => e.step(act(slot))));
      expect(
        got.map((r) => [
          r.step,
          r.done,
          r.evaluator,
          Buffer.from((r.obs['rgb'] as { data: Uint8Array }).data).toString('base64'),
        ]),
      ).toEqual(
        want.map((r) => [
          r.step,
          r.done,
          r.evaluator,
          Buffer.from((r.obs['rgb'] as { data: Uint8Array }).data).toString('base64'),
        ]),
      );
    }
    // every step was sent while no other call of its server was in flight
    expect(inFlightAtSend).toHaveLength(18);
    expect(inFlightAtSend.every((x) => x.endsWith(':0'))).toBe(true);
  });

  it('attach where nothing listens: a missing ipc socket at once, a silent tcp port within connectMs — both naming the endpoint', async () => {
    const ipc = await privateIpcEndpoint();
    cleanups.push(() => ipc.dispose());
    const missing = await rejection(BridgeServerPool.attach(ipc.endpoint));
    expect(missing.code).toBe('E_SIM_UNAVAILABLE');
    expect(missing.message).toBe(
      `no simulator server is listening at ${ipc.endpoint}: the socket file ${ipc.endpoint.slice(6)} does not exist`,
    );
    expect(missing.hint).toContain('start the simulator server at that endpoint');

    const tcp = `tcp://127.0.0.1:${await freeTcpPort()}`;
    const t0 = performance.now();
    const silent = await rejection(BridgeServerPool.attach(tcp, { connectMs: 300 }));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(silent.code).toBe('E_BRIDGE_TIMEOUT');
    expect(silent.message).toBe(`the simulator server at ${tcp} did not answer hello within 300 ms`);
  }, 30_000);
});
