/**
 * Vectorised hosting on the client side (src/bridges/step-batcher.ts, server-pool `vectorize`): the steps the
 * episode loop sends in one tick reach a server that lists makeBatch/stepBatch as ONE stepBatch, each slot gets its
 * own result (or its own error, worded as a per-handle step's), and a server without the ops gets one message per
 * handle. Against the Python sim-bridge's replay adapter on the committed fixture
 * sim-bridge/tests/fixtures/replay/tiny.msgpack (env replay/tiny: seeds 0 and 1, three steps), and the lite server.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import { BridgeCallError } from '../../src/bridges/remote-error.js';
import { RemoteEnvironment } from '../../src/bridges/remote-environment.js';
import { BridgeServerPool } from '../../src/bridges/server-pool.js';
import { liteServerCommand, packageRoot, pythonServerCommand } from '../../src/bridges/supervisor.js';
import { sendSteps } from '../../src/runtime/send-steps.js';
import type { NdArray, SimEnvironment, StepResult } from '../../src/runtime/environment.js';

const REPLAY_DIR = join(packageRoot(), 'sim-bridge/tests/fixtures/replay');
const ENV = 'replay/tiny';
const action = (seed: number, t: number): NdArray =>
  ndarray('float32', [2], Float32Array.of(0.25 * t - 0.5, 0.1 * seed));
const replayServer = (endpoint: string) =>
  pythonServerCommand(endpoint, { adapters: ['replay'], replayDir: REPLAY_DIR });

/** A result as comparable bytes (typed arrays as their dtype, shape and bytes). */
function bytesOf(r: StepResult): unknown {
  return JSON.parse(
    JSON.stringify(r, (_k, v: unknown) =>
      v !== null && typeof v === 'object' && 'dtype' in v && 'data' in v
        ? {
            dtype: (v as NdArray).dtype,
            shape: (v as NdArray).shape,
            bytes: Buffer.from(
              ((v as NdArray).data as Uint8Array).buffer,
              ((v as NdArray).data as Uint8Array).byteOffset,
              ((v as NdArray).data as Uint8Array).byteLength,
            ).toString('hex'),
          }
        : v,
    ),
  );
}

/** Both seeds' episodes in two slots, stepped together as the episode loop does; every result by slot. */
async function playTogether(envs: readonly SimEnvironment[]): Promise<unknown[][]> {
  const seeds = [0, 1];
  const out: unknown[][] = [[], []];
  for (const [k, env] of envs.entries()) out[k]?.push(bytesOf(await env.reset({ seed: seeds[k] as number })));
  for (let t = 0; t < 3; t++) {
    const sent = sendSteps(envs, (i) => action(seeds[i] as number, t));
    for (const [k, p] of sent.entries()) out[k]?.push(bytesOf((await p)!.result));
  }
  return out;
}

describe('vectorised hosting: one stepBatch per tick', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('coalesces a tick into one message on a server with the batch ops; results are those of per-handle steps', async () => {
    const pool = await BridgeServerPool.spawn(1, replayServer, { vectorize: true, deadlines: { stepMs: 10_000 } });
    cleanups.push(() => pool.dispose());
    expect(pool.hello(0).ops).toEqual(expect.arrayContaining(['makeBatch', 'stepBatch']));
    expect(pool.batches(0)).toBe(true);
    const made = await RemoteEnvironment.makeBatch(pool.client(0), ENV, {}, 2, pool.deadlines);
    expect(made.map((m) => m.host)).toEqual(['processes', 'processes']);
    const envs = made.map((remote) => pool.environment(0, ENV, {}, remote.spec, { remote, generation: 0 }));
    const batched = await playTogether(envs);
    expect(pool.batchStats()).toEqual({ messages: 3, steps: 6 }); // one message per tick, both slots in it

    // the same episodes one handle per message (no vectorize) give byte-identical results
    const plain = await BridgeServerPool.spawn(1, replayServer, { deadlines: { stepMs: 10_000 } });
    cleanups.push(() => plain.dispose());
    expect(plain.batches(0)).toBe(false);
    const spec = made[0]!.spec;
    const single = await playTogether([0, 1].map(() => plain.environment(0, ENV, {}, spec)));
    expect(plain.batchStats()).toEqual({ messages: 0, steps: 0 });
    expect(batched).toEqual(single);
    expect(batched[0]).not.toEqual(batched[1]); // two seeds, two episodes: the comparison can fail

    // one slot's bad action fails that slot alone, worded as a per-handle step's error; the other steps on
    await envs[0]!.reset({ seed: 0 });
    await envs[1]!.reset({ seed: 1 });
    const sent = sendSteps(envs, (i) => action(i === 0 ? 1 : 1, 0)); // slot 0 gets seed 1's action
    const bad = await sent[0]!.then(
      () => null,
      (e: unknown) => e,
    );
    expect(bad).toBeInstanceOf(BridgeCallError);
    expect((bad as BridgeCallError).wireCode).toBe('E_BAD_ACTION');
    expect((bad as BridgeCallError).message).toMatch(/^step: E_BAD_ACTION: .*differs from the recorded action/);
    expect((await sent[1]!).result.step).toBe(1);
    expect(pool.suspectError(0)).toBeNull(); // an error the server answered: not a server failure
    expect(pool.stats().failedCalls).toEqual({ E_BRIDGE_REMOTE: 1 });
  }, 90_000);

  it('a restarted server fails the slots of the batch in flight and re-makes them as a batch of one', async () => {
    const pool = await BridgeServerPool.spawn(1, replayServer, { vectorize: true, deadlines: { stepMs: 10_000 } });
    cleanups.push(() => pool.dispose());
    const made = await RemoteEnvironment.makeBatch(pool.client(0), ENV, {}, 2, pool.deadlines);
    const envs = made.map((remote) => pool.environment(0, ENV, {}, remote.spec, { remote, generation: 0 }));
    for (const [k, env] of envs.entries()) await env.reset({ seed: k });
    process.kill(pool.pids()[0] as number, 'SIGKILL');
    const sent = sendSteps(envs, (i) => action(i, 0));
    const codes = await Promise.all(
      sent.map((p) =>
        p!.then(
          () => 'ok',
          (e: { code?: string }) => e.code,
        ),
      ),
    );
    expect(codes).toEqual(['E_BRIDGE_REMOTE', 'E_BRIDGE_REMOTE']);
    // the next reset restarts the server and makes the slot again (makeBatch of one): it plays on
    const r = await envs[1]!.reset({ seed: 1 });
    expect(r.step).toBe(0);
    expect(pool.generation(0)).toBe(1);
    const next = sendSteps([envs[1]!], () => action(1, 0));
    expect((await next[0]!).result.step).toBe(1);
  }, 90_000);

  it('falls back to one message per handle on a server that does not list the batch ops (the lite server)', async () => {
    const pool = await BridgeServerPool.spawn(1, (e) => liteServerCommand(e), { vectorize: true });
    cleanups.push(() => pool.dispose());
    expect(pool.hello(0).ops).not.toContain('stepBatch');
    expect(pool.batches(0)).toBe(false);
    const kwargs = { blackoutFromStep: 6, strict: true };
    const spec = (await RemoteEnvironment.make(pool.client(0), 'ShellGameTouch-lite', kwargs)).spec;
    const envs = [0, 1].map(() => pool.environment(0, 'ShellGameTouch-lite', kwargs, spec));
    for (const [k, env] of envs.entries()) await env.reset({ seed: 10 + k });
    const zero = ndarray(
      spec.action.dtype as 'float32',
      spec.action.shape,
      new Float32Array(spec.action.shape[0] ?? 1),
    );
    const sent = sendSteps(envs, () => zero);
    expect((await Promise.all(sent.map((p) => p!))).map((s) => s.result.step)).toEqual([1, 1]);
    expect(pool.batchStats()).toEqual({ messages: 0, steps: 0 });
  }, 60_000);
});
