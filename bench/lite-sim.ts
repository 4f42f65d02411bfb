/**
 * Lite-simulator throughput: steps/s of ShellGameTouch-lite at 64×64 under scripted controllers
 * (episodes run to their end, resets included), printed with the ratio to a baseline measured in the
 * same run: allocating and filling a plain 64×64×3 Uint8Array. Prints; asserts nothing.
 *
 *   npx tsx bench/lite-sim.ts
 */
import { makeLiteEnv, makeLiteEnvSync } from '../src/sims/lite/registry.js';
import {
  ShellGamePixelController,
  WaypointController,
  cupPosition,
  runLiteEpisode,
  type LiteController,
} from '../src/sims/lite/scripted.js';
import type { StepResult } from '../src/runtime/environment.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 1.5);

function timeLoop(body: () => number): { perSec: number; units: number; seconds: number } {
  for (let i = 0; i < 50; i++) body(); // warm-up
  const t0 = process.hrtime.bigint();
  let units = 0;
  let elapsed = 0;
  while (elapsed < SECONDS) {
    units += body();
    elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  return { perSec: units / elapsed, units, seconds: elapsed };
}

let sink = 0;
const baseline = timeLoop(() => {
  const a = new Uint8Array(64 * 64 * 3);
  a.fill(sink & 0xff);
  sink += a[12287] ?? 0;
  return 1;
});

function syncSteps(controller: LiteController, options: Record<string, unknown>): number {
  const env = makeLiteEnvSync('ShellGameTouch-lite');
  let seed = 0;
  return timeLoop(() => runLiteEpisode(env, controller, { seed: seed++, options }).last.step).perSec;
}

const pixelMemory = syncSteps(new ShellGamePixelController(true), {});
const pixelBlind = syncSteps(new ShellGamePixelController(false), { blackoutFromStep: 6 });
const waypoint = syncSteps(new WaypointController([cupPosition(0), cupPosition(1), cupPosition(2)]), {});

async function asyncSteps(): Promise<number> {
  const env = makeLiteEnv('ShellGameTouch-lite');
  const controller = new ShellGamePixelController(true);
  let seed = 0;
  const t0 = process.hrtime.bigint();
  let steps = 0;
  let elapsed = 0;
  while (elapsed < SECONDS) {
    controller.beginEpisode();
    let r: StepResult = await env.reset({ seed: seed++ });
    while (!r.done) {
      const a = controller.act(r.obs, r.step);
      r = await env.step({ dtype: 'float32', shape: [2], data: a });
      steps++;
    }
    elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  return steps / elapsed;
}
const asyncRate = await asyncSteps();

const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
const row = (name: string, rate: number): string =>
  `${name.padEnd(58)} ${fmt(rate).padStart(12)} /s   ratio ${(rate / baseline.perSec).toFixed(3)}`;
console.log(`lite-sim bench (node ${process.version}, ${SECONDS}s per row; ratio = rate / baseline)`);
console.log(row('baseline: new Uint8Array(64*64*3).fill()', baseline.perSec));
console.log(row('ShellGame-lite 64² sync, pixel controller with memory', pixelMemory));
console.log(row('ShellGame-lite 64² sync, memoryless pixel ctl, blackout 6', pixelBlind));
console.log(row('ShellGame-lite 64² sync, waypoint sweep (touch in turn)', waypoint));
console.log(row('ShellGame-lite 64² async SimEnvironment, pixel w/ memory', asyncRate));
console.log(
  `campaign target: > 20,000 steps/s (2,800 episodes × 90 steps ≈ ${fmt((2800 * 90) / pixelMemory)} s at the sync pixel rate)`,
);
if (sink === -1) console.log(sink);
