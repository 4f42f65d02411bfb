/**
 * Campaigns on bridged simulators, end to end (src/campaign/runner/bridge-envs.ts):
 *
 * 1. A small ShellGame protocol (A and C, 4 seeds) runs in-process with the shipped lite checkpoint; a
 *    recording env provider captures every reset and (action, result) — what the policy did and saw.
 *    That recording is written as a replay file (format imep-replay/1) for the Python sim-bridge.
 * 2. `imep campaign run FILE --through seal` (the built CLI) on the same design with
 *    `simulator: { kind: sim-bridge, adapter: replay, replayDir }`: IMEP starts and supervises
 *    `python3 -m imep_sim_bridge serve --adapters replay`, the same checkpoint acts on the replayed
 *    observations, and the replay adapter refuses any action that differs from the recorded one by a
 *    single byte — so every row ok means the policy saw byte-identical observations through the bridge.
 *    Its rows equal the in-process rows in every field except the decision-query counts (an unknown env
 *    id has no lite decision-step rule: src/campaign/runner/task-facts.ts).
 * 3. The same protocol with `simulator: { kind: lite, transport: bridge }`: rows byte-identical.
 * 4. `simulator.endpoint` where nothing listens: exit 4, one line naming the endpoint and what to do.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { splitBySpec } from '../../src/bridges/allowlist.js';
import { encodeValue } from '../../src/bridges/envelope.js';
import { makeLiteEnv } from '../../src/bridges/lite/registry.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import type { NdArray, SimEnvironment, StepResult } from '../../src/bridges/sim-environment.js';
import { runCampaign, type EnvProvider } from '../../src/campaign/runner/index.js';
import { readUnitState } from '../../src/campaign/unit-state.js';
import { folderDigest } from '../../src/campaign/runner/simulator-inputs.js';
import { verifyUnit } from '../../src/campaign/verify.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/runner/cli-support.js';

const SEEDS = { start: 620100, n: 4 };

function protocolYaml(simulator: string, env: string): string {
  return `version: 1
id: bridge-e2e
title: ShellGame A and C over the simulator bridge
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

const LITE_ENV = '{ id: ShellGameTouch-lite, task: shellgame, kwargs: { blackoutFromStep: 6, strict: true } }';

interface Recorded {
  readonly seed: number;
  readonly reset: StepResult;
  readonly steps: { action: NdArray; result: StepResult }[];
}

/** In-process lite environments that record the first episode of every seed (as the server would send it). */
function recordingEnvs(episodes: Map<number, Recorded>): EnvProvider {
  return (task) => {
    const env = makeLiteEnv(task.envId, task.kwargs);
    let current: Recorded | null = null;
    const wrapped: SimEnvironment = {
      spec: env.spec,
      async reset(req) {
        const r = await env.reset(req);
        current = episodes.has(req.seed) ? null : { seed: req.seed, reset: splitBySpec(r, env.spec), steps: [] };
        if (current) episodes.set(req.seed, current);
        return r;
      },
      async step(action) {
        const r = await env.step(action);
        const copy = ndarray(action.dtype as 'float32', action.shape, (action.data as Float32Array).slice());
        current?.steps.push({ action: copy, result: splitBySpec(r, env.spec) });
        return r;
      },
      close: () => env.close(),
    };
    return wrapped;
  };
}

type Row = Record<string, unknown> & { status: string; reads: Record<string, unknown> };

const rowsOf = (unit: string): string[] => readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');

describe('campaigns on bridged simulators', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-e2e-bridge-'));
  const quiet = { progress: null, say: () => undefined, operator: { id: 'bridge-e2e', source: 'explicit' as const } };
  let referenceRows: string[] = [];
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('in-process lite → replay recording → `imep campaign run --through seal` on the Python sim-bridge replay adapter', async () => {
    const liteFile = join(dir, 'lite.yaml');
    writeFileSync(liteFile, protocolYaml('{ kind: lite }', LITE_ENV));
    const episodes = new Map<number, Recorded>();
    const refUnit = await runCampaign(liteFile, { ...quiet, campaignsDir: join(dir, 'ref'), envs: recordingEnvs(episodes) });
    referenceRows = rowsOf(refUnit);
    expect(referenceRows).toHaveLength(2 * SEEDS.n);
    expect([...episodes.keys()].sort()).toEqual(Array.from({ length: SEEDS.n }, (_, i) => SEEDS.start + i));

    const replayDir = join(dir, 'replay');
    mkdirSync(replayDir);
    const spec = { ...makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }).spec, id: 'replay/shellgame-memvla' };
    writeFileSync(join(replayDir, 'shellgame-memvla.msgpack'), encodeValue({ format: 'imep-replay/1', spec, episodes: [...episodes.values()] }));

    writeFileSync(join(dir, 'replay.yaml'), protocolYaml(`{ kind: sim-bridge, adapter: replay, replayDir: ${replayDir} }`, '{ id: replay/shellgame-memvla, task: shellgame }'));
    const r = await imep(['campaign', 'run', 'replay.yaml', '--through', 'seal', '--campaigns-dir', 'bridged'], dir);
    expect(r.code, r.stderr).toBe(0); // stderr carries the progress lines
    expect(r.stdout).toMatch(/^simulator: sim-bridge adapter replay: 1 server started by IMEP \(\S+ -m imep_sim_bridge serve --endpoint ipc:\/\/… --adapters replay --replay-dir .*\)$/m);
    expect(r.stdout).toMatch(/^simulator: 0 restarts, failed calls: none$/m);
    expect(r.stdout).toMatch(/^sealed /m);
    const unit = unitIn(join(dir, 'bridged')) as string;
    expect((await readUnitState(unit)).state).toBe('sealed');
    expect((await verifyUnit(unit)).ok).toBe(true);

    const rows = rowsOf(unit).map((l) => JSON.parse(l) as Row);
    const ref = referenceRows.map((l) => JSON.parse(l) as Row);
    expect(rows.map((x) => x.status)).toEqual(ref.map(() => 'ok'));
    const strip = (x: Row): Row => {
      const { decisionQueries: _d, coveredDecisionQueries: _c, ...reads } = x.reads;
      return { ...x, reads };
    };
    expect(rows.map(strip)).toEqual(ref.map(strip));
    // the decision-query counts differ only by the decision-step rule (every step vs from step 5)
    for (const [i, x] of rows.entries()) expect(x.reads['decisionQueries'] as number).toBeGreaterThanOrEqual((ref[i] as Row).reads['decisionQueries'] as number);
    expect(ref.filter((x) => x['success'] === true).length).toBeGreaterThan(0);

    // the replay files are frozen with the unit: their digest is in precommit.json …
    const pre = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as { simulatorHashes?: Record<string, string> };
    expect(pre.simulatorHashes).toEqual({ 'simulator.replayDir': await folderDigest(replayDir) });
    // … and a unit precommitted on them refuses to run once a replay file changed (nothing run, exit 2)
    const pc = await imep(['campaign', 'precommit', 'replay.yaml', '--campaigns-dir', 'frozen'], dir);
    expect(pc.code, pc.stderr).toBe(0);
    const frozenUnit = unitIn(join(dir, 'frozen')) as string;
    const replayFile = join(replayDir, 'shellgame-memvla.msgpack');
    const original = readFileSync(replayFile);
    writeFileSync(replayFile, Buffer.concat([original, Buffer.from([0])]));
    try {
      const refused = await imep(['campaign', 'run', 'replay.yaml', '--campaigns-dir', 'frozen'], dir);
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split('\n').at(-1)).toMatch(/replay\.yaml.*simulator\.replayDir.*hashes to [0-9a-f]{12}… but the precommit froze [0-9a-f]{12}…/);
      expect((await readUnitState(frozenUnit)).state).toBe('precommitted');
    } finally {
      writeFileSync(replayFile, original);
    }
  }, 180_000);

  it('lite over the bridge (`transport: bridge`): rows byte-identical to in-process lite', async () => {
    expect(referenceRows.length).toBeGreaterThan(0);
    const file = join(dir, 'lite-bridge.yaml');
    writeFileSync(file, protocolYaml('{ kind: lite, transport: bridge }', LITE_ENV));
    const lines: string[] = [];
    const unit = await runCampaign(file, { ...quiet, say: (l) => lines.push(l), campaignsDir: join(dir, 'lite-bridge') });
    expect(lines).toContain('simulator: lite simulators over the bridge: 1 `imep sim serve lite` server started by IMEP');
    expect(lines).toContain('simulator: 0 restarts, failed calls: none');
    expect(rowsOf(unit)).toEqual(referenceRows);
  }, 120_000);

  it('an endpoint where nothing listens: exit 4 naming the endpoint and what to do; the unit stays precommitted', async () => {
    const endpoint = `ipc://${join(dir, 'nobody.sock')}`;
    writeFileSync(join(dir, 'down.yaml'), protocolYaml(`{ kind: sim-bridge, adapter: replay, endpoint: "${endpoint}" }`, '{ id: replay/shellgame-memvla, task: shellgame }'));
    const r = await imep(['campaign', 'run', 'down.yaml', '--campaigns-dir', 'down'], dir);
    expect(r.code).toBe(4);
    const line = r.stderr.trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('down.yaml: simulator.endpoint: ');
    expect(line).toContain(`no simulator server is listening at ${endpoint}`);
    expect(line).toContain('start the simulator server at that endpoint');
    const unit = unitIn(join(dir, 'down')) as string;
    expect((await readUnitState(unit)).state).toBe('precommitted');
  }, 60_000);
});
