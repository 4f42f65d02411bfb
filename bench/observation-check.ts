/**
 * The cost of checking every observation against the declared spec (src/bridges/observation-spec.ts, issue 32 item 5)
 * on the hot path: one lite server (`imep sim serve lite`, ShellGameTouch-lite at 128×128), one client, steps made two
 * ways in the same process, alternating step by step —
 *   checked    RemoteEnvironment.step (the call, then the spec check)
 *   unchecked  the same `step` call made with client.call (no check)
 * Prints the median and mean round trip and the client CPU per step of each, and their ratios (requirement: no
 * measurable slowdown).
 *
 *   npx tsx bench/observation-check.ts        [ROUNDS=20 STEPS=400]
 */
import { loadavg } from 'node:os';
import { BridgeClient } from '../src/bridges/client.js';
import { privateIpcEndpoint } from '../src/bridges/endpoint.js';
import { ndarray } from '../src/bridges/ndarray-codec.js';
import { RemoteEnvironment } from '../src/bridges/remote-environment.js';
import { liteServerCommand, ServerSupervisor } from '../src/bridges/supervisor.js';
const ipc = await privateIpcEndpoint();
const sup = new ServerSupervisor(liteServerCommand(ipc.endpoint, { runtime: 'tsx' }), {
  endpoint: ipc.endpoint,
  readyTimeoutMs: 60_000,
});
const client = new BridgeClient({ endpoint: ipc.endpoint, liveness: sup });
await sup.start();
await client.connect();
const env = await RemoteEnvironment.make(client, 'ShellGameTouch-lite', { resolution: 128 });
const action = ndarray('float32', [2], Float32Array.from([0.01, 0.01]));
const ROUNDS = Number(process.env['ROUNDS'] ?? 20);
const STEPS = Number(process.env['STEPS'] ?? 400);
const walls: Record<'checked' | 'unchecked', number[]> = { checked: [], unchecked: [] };
const cpu = { checked: 0, unchecked: 0 };
for (let round = 0; round < ROUNDS; round++) {
  await env.reset({ seed: round });
  for (let i = 0; i < STEPS; i++) {
    // the two arms alternate step by step (first one, then the other), so load on a shared machine hits both alike
    for (const arm of (i + round) % 2 === 0
      ? (['checked', 'unchecked'] as const)
      : (['unchecked', 'checked'] as const)) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const r = arm === 'checked' ? await env.step(action) : await client.call('step', { handle: env.handle, action });
      walls[arm].push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu[arm] += c.user + c.system;
      if (r.done) await env.reset({ seed: round * STEPS + i });
    }
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const arm of ['checked', 'unchecked'] as const) {
  const w = walls[arm];
  console.log(
    `${arm.padEnd(9)}: ${w.length} steps, round trip median ${(median(w) * 1000).toFixed(0)} µs, mean ${(mean(w) * 1000).toFixed(0)} µs; client CPU ${(cpu[arm] / w.length).toFixed(1)} µs per step`,
  );
}
console.log(
  `ratio checked / unchecked: median round trip ${(median(walls.checked) / median(walls.unchecked)).toFixed(3)}, mean ${(mean(walls.checked) / mean(walls.unchecked)).toFixed(3)}, client CPU ${(cpu.checked / cpu.unchecked).toFixed(3)} (load average ${loadavg()[0]?.toFixed(2)})`,
);
await env.close();
await client.close();
await sup.dispose();
await ipc.dispose();
