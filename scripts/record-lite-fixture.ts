/**
 * Records ShellGameTouch-lite episodes into a replay file the Python sim-bridge's `replay` adapter plays
 * (PROTOCOL.md, "Replay files"): given seeds, each episode is a reset and a fixed action sequence.
 *
 *   npx tsx scripts/record-lite-fixture.ts [--out test/fixtures/bridge/shellgame-lite.msgpack] [--seeds 3,11]
 *
 * The conformance suite replays the same seeds and actions against the live lite server and the Python
 * replay server and expects the same decoded arrays.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { splitBySpec } from '../src/runtime/allowlist.js';
import { encodeValue } from '../src/bridges/envelope.js';
import { makeLiteEnv } from '../src/sims/lite/registry.js';
import { ndarray } from '../src/bridges/ndarray-codec.js';
import type { NdArray, StepResult } from '../src/runtime/environment.js';

export const FIXTURE_ENV = 'ShellGameTouch-lite';
export const FIXTURE_SEEDS: readonly number[] = [3, 11];
export const REPLAY_FORMAT = 'imep-replay/1';

/** The fixed action sequence (float32 [dx, dy]): up toward the cups past the cue phase, then sideways. */
export function fixtureActions(): NdArray[] {
  const moves: [number, number][] = [
    [0, 0.06],
    [0, 0.06],
    [0, 0.06],
    [0, 0.06],
    [0, 0.06],
    [0, 0.06],
    [-0.06, 0],
    [0.06, 0.03],
  ];
  return moves.map(([x, y]) => ndarray('float32', [2], Float32Array.of(x, y)));
}

export interface ReplayEpisode {
  readonly seed: number;
  readonly reset: StepResult;
  readonly steps: { action: NdArray; result: StepResult }[];
}

export async function recordEpisodes(
  seeds: readonly number[],
  actions: readonly NdArray[],
): Promise<{ spec: unknown; episodes: ReplayEpisode[] }> {
  const env = makeLiteEnv(FIXTURE_ENV, {});
  const episodes: ReplayEpisode[] = [];
  for (const seed of seeds) {
    const reset = splitBySpec(await env.reset({ seed }), env.spec);
    const steps: { action: NdArray; result: StepResult }[] = [];
    for (const action of actions) {
      const result = splitBySpec(await env.step(action), env.spec);
      steps.push({ action, result });
      if (result.done) break;
    }
    episodes.push({ seed, reset, steps });
  }
  await env.close();
  return { spec: env.spec, episodes };
}

async function main(argv: readonly string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const out = resolve(arg('--out') ?? 'test/fixtures/bridge/shellgame-lite.msgpack');
  const seeds = (arg('--seeds') ?? FIXTURE_SEEDS.join(',')).split(',').map(Number);
  if (seeds.some((s) => !Number.isInteger(s) || s < 0)) throw new Error('--seeds: expected comma-separated uints');
  const { spec, episodes } = await recordEpisodes(seeds, fixtureActions());
  const bytes = encodeValue({
    format: REPLAY_FORMAT,
    source: { env: FIXTURE_ENV, kwargs: {}, recorder: 'scripts/record-lite-fixture.ts' },
    spec,
    episodes,
  });
  await mkdir(dirname(out), { recursive: true });
  await writeFile(`${out}.tmp`, bytes);
  await rename(`${out}.tmp`, out);
  process.stdout.write(
    `${out}: ${episodes.length} episodes, ${episodes.reduce((n, e) => n + e.steps.length, 0)} steps, ${bytes.length} bytes\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('record-lite-fixture.ts')) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`record-lite-fixture: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
