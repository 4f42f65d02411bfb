/**
 * Vectorised hosting end to end (protocol `simulator.vectorize`, sim-bridge/PROTOCOL.md "Batch ops"): a ShellGame
 * campaign recorded in process with the shipped lite checkpoint is replayed through the Python sim-bridge (replay
 * adapter, which refuses any action that differs from the recorded one by a byte). With `vectorize: true` and
 * `--batch 4` each server makes its slots with one makeBatch (each slot's environment in its own worker process) and
 * the steps of a tick travel as one stepBatch; rows.jsonl is byte-identical to the same replay run with `--batch 1`
 * and one message per step — on one server and on two.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { splitBySpec } from '../../src/runtime/allowlist.js';
import { encodeValue } from '../../src/bridges/envelope.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import type { NdArray, SimEnvironment, StepResult } from '../../src/runtime/environment.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { type EnvProvider } from '../../src/campaign/index.js';
import { liteCheckpointSha } from '../campaign/cli-support.js';

const SEEDS = { start: 620300, n: 6 };

function protocolYaml(simulator: string, env: string): string {
  return `version: 1
id: vector-e2e
title: ShellGame A and C, vectorised hosting
simulator: ${simulator}
envs:
  - ${env}
checkpoint: { path: checkpoints/lite-memvla, file: model.json, sha256: ${liteCheckpointSha()} }
memory: { bank: episode-local, banks: [perceptual, cognitive], capacity: 16, k: 4, consolidation: token-merge }
seeds: { bands: [{ start: ${SEEDS.start}, end: ${SEEDS.start + SEEDS.n - 1} }] }
n: ${SEEDS.n}
attempts: { count: 1, registered: 1 }
conditions:
  - { id: A, kind: A }
  - { id: C, kind: C }
waves:
  - { id: 1, conditions: [A, C], anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
  - { id: rho_C, kind: rho, reference: A, intervention: C }
executionFailures: { policy: record }
allowlists:
  methodVisible: [rgb, toolPosition, instruction]
  evaluatorOnly: [success, reward, terminated, truncated, seed, task, attempt, ballCup, firstVisit, decisionCorrect, lastTouch, blackout]
`;
}

const LITE_KWARGS = { blackoutFromStep: 6, strict: true };

interface Recorded {
  readonly seed: number;
  readonly reset: StepResult;
  readonly steps: { action: NdArray; result: StepResult }[];
}

/** In-process lite environments that record the first episode of every seed, as the server would send it. */
function recordingEnvs(episodes: Map<number, Recorded>): EnvProvider {
  return (task) => {
    const env = makeLiteEnv(task.envId, task.kwargs);
    let current: Recorded | null = null;
    return {
      spec: env.spec,
      async reset(req) {
        const r = await env.reset(req);
        current = episodes.has(req.seed) ? null : { seed: req.seed, reset: splitBySpec(r, env.spec), steps: [] };
        if (current) episodes.set(req.seed, current);
        return r;
      },
      async step(action) {
        const r = await env.step(action);
        const copy = ndarray('float32', action.shape, (action.data as Float32Array).slice());
        current?.steps.push({ action: copy, result: splitBySpec(r, env.spec) });
        return r;
      },
      close: () => env.close(),
    } satisfies SimEnvironment;
  };
}

const rowsOf = (unit: string): string => readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8');

describe('vectorised hosting (simulator.vectorize)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-e2e-vector-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const quiet = { progress: null, operator: { id: 'vector-e2e', source: 'explicit' as const } };

  it('--batch 4 with makeBatch / stepBatch writes the rows of --batch 1 with one message per step', async () => {
    const liteFile = join(dir, 'lite.yaml');
    writeFileSync(
      liteFile,
      protocolYaml(
        '{ kind: lite }',
        `{ id: ShellGameTouch-lite, task: shellgame, kwargs: ${JSON.stringify(LITE_KWARGS)} }`,
      ),
    );
    const episodes = new Map<number, Recorded>();
    const reference = rowsOf(
      await runCampaign(liteFile, {
        ...quiet,
        say: () => undefined,
        campaignsDir: join(dir, 'ref'),
        envs: recordingEnvs(episodes),
      }),
    );
    const replayDir = join(dir, 'replay');
    mkdirSync(replayDir);
    const spec = { ...makeLiteEnv('ShellGameTouch-lite', LITE_KWARGS).spec, id: 'replay/shellgame' };
    writeFileSync(
      join(replayDir, 'shellgame.msgpack'),
      encodeValue({ format: 'imep-replay/1', spec, episodes: [...episodes.values()] }),
    );
    const replayEnv = '{ id: replay/shellgame, task: shellgame }';
    const run = async (name: string, vectorize: boolean, batchSize: number, servers = 1) => {
      const file = join(dir, `${name}.yaml`);
      const extra = vectorize ? ', vectorize: true' : '';
      writeFileSync(
        file,
        protocolYaml(`{ kind: sim-bridge, adapter: replay, replayDir: ${replayDir}${extra} }`, replayEnv),
      );
      const lines: string[] = [];
      const unit = await runCampaign(file, {
        ...quiet,
        say: (l) => lines.push(l),
        campaignsDir: join(dir, name),
        batchSize,
        ...(servers === 1 ? {} : { simulators: { servers } }),
      });
      return { rows: rowsOf(unit), lines };
    };

    const one = await run('batch1', false, 1);
    expect(one.rows).toBe(reference);
    expect(one.lines.join('\n')).not.toMatch(/stepBatch/);

    const four = await run('vector4', true, 4);
    expect(four.lines.find((l) => l.startsWith('simulator: sim-bridge'))).toMatch(
      /; vectorised: one makeBatch per task and one stepBatch per tick on each server; isolation: /,
    );
    const summary = four.lines.find((l) => l.startsWith('simulator: 0 restarts')) as string;
    const [, steps, messages] = /; (\d+) steps in (\d+) stepBatch messages$/.exec(summary) ?? [];
    expect(Number(messages)).toBeGreaterThan(0);
    expect(Number(steps)).toBeGreaterThan(2 * Number(messages)); // the ticks carried several slots each
    expect(four.rows).toBe(one.rows);

    const twoServers = await run('vector4x2', true, 4, 2);
    expect(twoServers.rows).toBe(one.rows);
  }, 240_000);
});
