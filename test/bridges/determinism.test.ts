/**
 * Determinism across processes: two lite server processes, the same seed and actions → byte-identical
 * observation streams (every reply's obs bytes, and the encoded obs maps).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeClient } from '../../src/bridges/client.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { encodeValue } from '../../src/bridges/envelope.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import { RemoteEnvironment } from '../../src/bridges/remote-environment.js';
import { ServerSupervisor, liteServerCommand } from '../../src/bridges/supervisor.js';

interface Proc {
  ipc: PrivateIpcEndpoint;
  sup: ServerSupervisor;
  client: BridgeClient;
}

const procs: Proc[] = [];

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    const ipc = await privateIpcEndpoint();
    const sup = new ServerSupervisor(liteServerCommand(ipc.endpoint, { runtime: 'tsx' }), {
      endpoint: ipc.endpoint,
      readyTimeoutMs: 30_000,
    });
    procs.push({ ipc, sup, client: new BridgeClient({ endpoint: ipc.endpoint, liveness: sup, heartbeatMs: 0 }) });
  }
  await Promise.all(procs.map((p) => p.sup.start()));
  await Promise.all(procs.map((p) => p.client.connect()));
});

afterAll(async () => {
  for (const p of procs) {
    await p.client.close();
    await p.sup.dispose();
    await p.ipc.dispose();
  }
});

async function stream(client: BridgeClient, envId: string, seed: number, steps: number): Promise<string[]> {
  const env = await RemoteEnvironment.make(client, envId, { resolution: 128 });
  const out: string[] = [];
  const digest = (obs: unknown) => createHash('sha256').update(encodeValue(obs)).digest('hex');
  out.push(digest((await env.reset({ seed })).obs));
  for (let i = 0; i < steps; i++) {
    const a = ndarray('float32', [2], Float32Array.of(Math.sin(i) * 0.06, 0.05));
    const r = await env.step(a);
    out.push(digest(r.obs));
    if (r.done) break;
  }
  await env.close();
  return out;
}

describe('determinism across two lite server processes', () => {
  it('gives byte-identical observation streams for the same seed, different ones for another seed', async () => {
    expect(procs[0]!.sup.pid).not.toBe(procs[1]!.sup.pid);
    const [a, b] = await Promise.all(procs.map((p) => stream(p.client, 'ShellGameTouch-lite', 17, 12)));
    expect(a!.length).toBe(13);
    expect(b).toEqual(a);
    const c = await stream(procs[1]!.client, 'ShellGameTouch-lite', 18, 12);
    expect(c[0]).not.toEqual(a![0]);
  });
});
