/**
 * Vectorised hosting on real MIKASA-Robo (#21; sim-bridge/PROTOCOL.md "Batch ops"): the stepping itself, start-up
 * excluded. One server, B slots of RememberColor3-VLA-v0 (PhysX CPU, state observations, the kwargs of
 * protocols/mikasa-remembercolor.yaml), two arms in this process, alternating pass by pass:
 *   per slot     one env per slot made by `make` in the server, one `step` message per slot (stepped one after
 *                another in the server: what `--batch B` does without `vectorize`)
 *   vectorised   the B envs made by one `makeBatch` (each the adapter's own single env in a worker process of its
 *                own), one `stepBatch` per tick (the workers step at the same time)
 * Each pass resets every slot with its own seed and steps a whole episode (25 ticks) with seeded random actions,
 * sent as the episode loop sends them (sendSteps). Prints steps/s of each arm (best pass), their ratio, the make
 * times, and checks that both arms' results are byte-identical slot by slot. On a machine with few cores, shared,
 * the gain is bounded by the idle cores (the 1-min load is printed). Needs IMEP_PYTHON from
 * `bash scripts/setup-sims.sh mikasa`; prints one line and exits 0 without it.
 *
 * MODE=rgb renders both cameras every step (Mesa lavapipe on the CPU): a heavier step.
 *
 *   IMEP_PYTHON=… npx tsx bench/vectorized-steps.ts        [SLOTS=2,4 PASSES=2 MODE=state|rgb]
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { ndarray } from '../src/bridges/ndarray-codec.js';
import { RemoteEnvironment } from '../src/bridges/remote-environment.js';
import { BridgeServerPool } from '../src/bridges/server-pool.js';
import { pythonServerCommand } from '../src/bridges/supervisor.js';
import { sendSteps } from '../src/runtime/send-steps.js';
import type { NdArray, SimEnvironment, StepResult } from '../src/runtime/environment.js';

const PY = process.env['IMEP_PYTHON'];
const SLOTS = (process.env['SLOTS'] ?? '2,4').split(',').map(Number);
const PASSES = Number(process.env['PASSES'] ?? 2);
const ENV = 'mikasa/RememberColor3-VLA-v0';
const MODE = process.env['MODE'] ?? 'state';
if (MODE !== 'state' && MODE !== 'rgb') throw new Error(`MODE must be state or rgb, got ${MODE}`);
const KWARGS = { obs_mode: MODE, sim_backend: 'cpu', control_mode: 'pd_ee_delta_pos' };
const TICKS = 25;
const DEADLINES = { makeMs: 600_000, resetMs: 120_000, stepMs: 120_000 };

/** Seeded actions in [-1, 1] (a small LCG: the same in both arms). */
function action(slot: number, pass: number, t: number, size: number): NdArray {
  let x = (slot * 7919 + pass * 104729 + t * 1299709 + 1) >>> 0;
  const data = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    data[i] = (x / 2 ** 32) * 2 - 1;
  }
  return ndarray('float32', [size], data);
}

/** A digest of a result's bytes (observations and evaluator fields, arrays as dtype, shape and bytes). */
function digest(r: StepResult): string {
  const h = createHash('sha256');
  h.update(
    JSON.stringify(r, (_k, v: unknown) => {
      if (v !== null && typeof v === 'object' && 'dtype' in v && 'data' in v) {
        const d = (v as NdArray).data as Uint8Array;
        return [
          (v as NdArray).dtype,
          (v as NdArray).shape,
          Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('hex'),
        ];
      }
      return v;
    }),
  );
  return h.digest('hex');
}

/** One pass: every slot reset with its seed, then a whole episode; the ticks' seconds and every result's digest. */
async function pass(envs: readonly SimEnvironment[], p: number): Promise<{ seconds: number; digests: string[] }> {
  const digests: string[] = [];
  for (const [k, env] of envs.entries()) digests.push(digest(await env.reset({ seed: 700_000 + p * 100 + k })));
  const size = envs[0]?.spec.action.shape[0] ?? 1;
  const t0 = performance.now();
  for (let t = 0; t < TICKS; t++) {
    const sent = sendSteps(envs, (i) => action(i, p, t, size));
    for (const s of sent) digests.push(digest((await (s as NonNullable<typeof s>)).result));
  }
  return { seconds: (performance.now() - t0) / 1000, digests };
}

async function main(): Promise<void> {
  if (!PY) {
    console.log('vectorized-steps: skipped — IMEP_PYTHON is not set (bash scripts/setup-sims.sh mikasa prints it)');
    return;
  }
  const command = (endpoint: string) => pythonServerCommand(endpoint, { adapters: ['mikasa'], python: PY });
  console.log(
    `vectorized-steps: ${ENV} (PhysX CPU, ${MODE} observations), one server, ${TICKS} ticks per pass, best of ${PASSES} passes per arm (alternating)`,
  );
  let same = true;
  for (const slots of SLOTS) {
    const plain = await BridgeServerPool.spawn(1, command, { deadlines: DEADLINES, readyTimeoutMs: 120_000 });
    const vec = await BridgeServerPool.spawn(1, command, {
      deadlines: DEADLINES,
      readyTimeoutMs: 120_000,
      vectorize: true,
    });
    try {
      let t0 = performance.now();
      const singles: RemoteEnvironment[] = [];
      for (let k = 0; k < slots; k++)
        singles.push(await RemoteEnvironment.make(plain.client(0), ENV, KWARGS, DEADLINES));
      const makePlain = (performance.now() - t0) / 1000;
      t0 = performance.now();
      const batch = await RemoteEnvironment.makeBatch(vec.client(0), ENV, KWARGS, slots, DEADLINES);
      const makeVec = (performance.now() - t0) / 1000;
      const arms = [
        {
          name: 'per slot',
          envs: singles.map((r) => plain.environment(0, ENV, KWARGS, r.spec, { remote: r, generation: 0 })),
          best: 0,
        },
        {
          name: 'vectorised',
          envs: batch.map((r) => vec.environment(0, ENV, KWARGS, r.spec, { remote: r, generation: 0 })),
          best: 0,
        },
      ];
      const load = loadavg()[0] ?? Number.NaN;
      for (let p = 0; p < PASSES; p++) {
        const runs = [];
        for (const arm of arms) {
          const r = await pass(arm.envs, p);
          arm.best = Math.max(arm.best, (slots * TICKS) / r.seconds);
          runs.push(r.digests.join());
        }
        if (runs[0] !== runs[1]) same = false;
      }
      const [a, b] = arms as [(typeof arms)[number], (typeof arms)[number]];
      console.log(
        `B=${slots}: per slot ${a.best.toFixed(1)} steps/s (${slots} makes ${makePlain.toFixed(1)} s); vectorised ${b.best.toFixed(1)} steps/s (one makeBatch ${makeVec.toFixed(1)} s, host ${batch[0]?.host}); vectorised ÷ per slot = ${(b.best / a.best).toFixed(3)}; stepBatch messages ${vec.batchStats().messages} for ${vec.batchStats().steps} steps; 1-min load ${load.toFixed(2)}`,
      );
    } finally {
      await plain.dispose();
      await vec.dispose();
    }
  }
  console.log(`results byte-identical slot by slot in both arms: ${same ? 'yes' : 'NO'}`);
  if (!same) process.exitCode = 1;
}

await main();
