/**
 * Writes a demonstration dataset for the lite checkpoints from the TS lite simulators.
 *
 *   npx tsx scripts/checkpoints/make-demos.ts --task shell --out /tmp/imep-demos/shell \
 *     [--episodes 1200] [--seed-from 100000] [--noise 0.02] [--noise-seed 7]
 *
 * Each episode: reset(seed), then the task's memory expert (demo-tasks.ts) acts from method-visible fields; the action
 * EXECUTED is the expert's plus Gaussian noise (σ = --noise per component, from Prng(noise-seed).fork(seed)), the
 * action RECORDED as the label is the expert's clean action at the state actually reached (DART-style: the
 * learner sees states slightly off the expert's path, labelled with the correction). The memoryless expert is
 * asked for its action at every state reached, as a second label set.
 *
 * Layout of --out (all little-endian, S = total steps, F = distinct non-black frames):
 *   meta.json       format, version, task, env, kwargs, seeds, noise, counts, resolution, sha256 of each file
 *   frames.u8.gz    gzip of F × H × W × 3 uint8 (the observation rgb; all-zero frames are not stored)
 *   episode.i32     S  episode index (0-based, in seed order)
 *   step.i32        S  elapsed step of the observation
 *   frame.i32       S  index into frames, or −1 for an all-zero (blacked-out) frame
 *   pose.f32        S×2 toolPosition
 *   action.f32      S×2 the memory expert's clean action (label of episodes whose reads work)
 *   choice.i32      S  the object the memory expert heads for (decision label; −1: none yet)
 *   action_nomem.f32 S×2 the memoryless expert's action at the same state (label of blocked / blind episodes)
 *   choice_nomem.i32 S  the object the memoryless expert heads for (−1: none yet)
 *   answer.i32      S  the episode's correct choice (evaluator-only: ballCup / targetColorIndex; reported only)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { sha256Hex } from '../../src/core/hash.js';
import { Prng } from '../../src/core/prng.js';
import { makeLiteEnvSync } from '../../src/sims/lite/registry.js';
import { frameOf, toolOf } from '../../src/sims/lite/scripted.js';
import { answerOf, taskSpec } from './demo-tasks.js';

const { values } = parseArgs({
  options: {
    task: { type: 'string', default: 'shell' },
    out: { type: 'string' },
    episodes: { type: 'string', default: '1200' },
    'seed-from': { type: 'string', default: '100000' },
    noise: { type: 'string', default: '0.02' },
    'noise-seed': { type: 'string', default: '7' },
  },
});
if (values.out === undefined) throw new Error('make-demos: --out DIR is required');
const spec = taskSpec(values.task ?? 'shell');
const episodes = Number(values.episodes);
const seedFrom = Number(values['seed-from']);
const sigma = Number(values.noise);
const noiseSeed = Number(values['noise-seed']);

const env = makeLiteEnvSync(spec.env, spec.kwargs);
const expert = spec.expert(true);
const blind = spec.expert(false);
const frames: Uint8Array[] = [];
const ep: number[] = [], st: number[] = [], fr: number[] = [], pose: number[] = [], act: number[] = [], ans: number[] = [];
const choice: number[] = [], actNomem: number[] = [], choiceNomem: number[] = [];
let successes = 0;
let resolution = 0;

for (let e = 0; e < episodes; e++) {
  const seed = seedFrom + e;
  const noise = new Prng(noiseSeed).fork(seed);
  expert.beginEpisode();
  blind.beginEpisode();
  let r = env.resetSync({ seed });
  const answer = answerOf(spec, r);
  while (!r.done) {
    const f = frameOf(r.obs);
    resolution = f.width;
    let black = true;
    for (let i = 0; i < f.data.length; i++) if (f.data[i] !== 0) { black = false; break; }
    if (black) fr.push(-1);
    else {
      fr.push(frames.length);
      frames.push(f.data.slice());
    }
    const tool = toolOf(r.obs);
    const label = expert.act(r.obs, r.step);
    const labelNomem = blind.act(r.obs, r.step);
    choice.push(expert.choice);
    actNomem.push(labelNomem[0] ?? 0, labelNomem[1] ?? 0);
    choiceNomem.push(blind.choice);
    ep.push(e); st.push(r.step); pose.push(tool[0], tool[1]); act.push(label[0] ?? 0, label[1] ?? 0); ans.push(answer);
    const exec = Float32Array.of((label[0] ?? 0) + sigma * noise.nextNormal(), (label[1] ?? 0) + sigma * noise.nextNormal());
    r = env.stepSync(exec);
  }
  if (r.evaluator['success'] === true) successes++;
}

mkdirSync(values.out, { recursive: true });
const files: Record<string, Uint8Array> = {
  'frames.u8.gz': gzipSync(Buffer.concat(frames), { level: 6 }),
  'episode.i32': new Uint8Array(Int32Array.from(ep).buffer),
  'step.i32': new Uint8Array(Int32Array.from(st).buffer),
  'frame.i32': new Uint8Array(Int32Array.from(fr).buffer),
  'pose.f32': new Uint8Array(Float32Array.from(pose).buffer),
  'action.f32': new Uint8Array(Float32Array.from(act).buffer),
  'answer.i32': new Uint8Array(Int32Array.from(ans).buffer),
  'choice.i32': new Uint8Array(Int32Array.from(choice).buffer),
  'action_nomem.f32': new Uint8Array(Float32Array.from(actNomem).buffer),
  'choice_nomem.i32': new Uint8Array(Int32Array.from(choiceNomem).buffer),
};
const sha256: Record<string, string> = {};
for (const [name, bytes] of Object.entries(files)) {
  writeFileSync(join(values.out, name), bytes);
  sha256[name] = sha256Hex(bytes);
}
const meta = {
  format: 'imep-lite-demos',
  version: 1,
  task: spec.task,
  env: spec.env,
  kwargs: spec.kwargs,
  choices: spec.choices,
  cueSteps: spec.cueSteps,
  seeds: { from: seedFrom, count: episodes },
  noise: { sigma, prng: 'xoshiro128** v1', seed: noiseSeed, stream: 'Prng(noiseSeed).fork(episodeSeed).nextNormal()' },
  resolution,
  episodes,
  steps: st.length,
  frames: frames.length,
  expertSuccess: successes / episodes,
  sha256,
};
writeFileSync(join(values.out, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
console.log(`make-demos: ${spec.env} ${episodes} episodes, ${st.length} steps, ${frames.length} frames, expert success ${successes}/${episodes} → ${values.out}`);
