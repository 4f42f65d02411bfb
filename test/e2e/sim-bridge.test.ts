/**
 * Campaigns on bridged simulators, end to end (src/campaign/bridge-envs.ts):
 *
 * 1. A small ShellGame protocol (A and C, 4 seeds) runs in-process with the shipped lite checkpoint; a
 *    recording env provider captures every reset and (action, result) — what the policy did and saw.
 *    That recording is written as a replay file (format imep-replay/1) for the Python sim-bridge.
 * 2. `imep campaign run FILE --through seal` (the built CLI) on the same design with
 *    `simulator: { kind: sim-bridge, adapter: replay, replayDir }`: IMEP starts and supervises
 *    `python3 -m imep_sim_bridge serve --adapters replay`, the same checkpoint acts on the replayed
 *    observations, and the replay adapter refuses any action that differs from the recorded one by a
 *    single byte — so every row ok means the policy saw byte-identical observations through the bridge.
 *    Its rows equal the in-process rows byte for byte: the replay file's spec declares the lite task's fact and
 *    decision step (EnvSpec.fact / decisionFromStep), which reach the runner through the bridge.
 * 3. The same protocol with `simulator: { kind: lite, transport: bridge }`: rows byte-identical.
 * 4. S and T donor swaps at read time on the Python sim-bridge: the in-process A/S/T campaign recorded whole
 *    (every episode a branch of its seed), replayed through the bridge: donors are paired by the fact the
 *    replayed environment declares, and rows and the donor assignment are byte-identical to in-process.
 * 5. `simulator.endpoint` where nothing listens: exit 2, one line naming the endpoint and what to do, nothing written.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { splitBySpec } from '../../src/runtime/allowlist.js';
import { bubblewrapWorks } from '../../src/bridges/sandbox.js';
import { encodeValue } from '../../src/bridges/envelope.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import type { NdArray, SimEnvironment, StepResult } from '../../src/runtime/environment.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { type EnvProvider } from '../../src/campaign/index.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { folderDigest } from '../../src/campaign/simulator-inputs.js';
import { verifyUnit } from '../../src/evidence/verify/verify.js';
import { imep, liteCheckpointSha, unitIn } from '../campaign/cli-support.js';

const SEEDS = { start: 620100, n: 6 };

const A_AND_C = {
  conditions: '  - { id: A, kind: A }\n  - { id: C, kind: C }',
  wave: '[A, C]',
  estimands: '  - { id: rho_C, kind: rho, reference: A, intervention: C }',
};

function protocolYaml(simulator: string, env: string, ladder = A_AND_C): string {
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
${ladder.conditions}
waves:
  - { id: 1, conditions: ${ladder.wave}, anchor: A }
estimands:
  - { id: SR_A, kind: successRate, condition: A }
${ladder.estimands}
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

/**
 * In-process lite environments that record the first episode of every seed (as the server would send it), or with
 * `all` every episode (each a branch of its seed's episode).
 */
function recordingEnvs(episodes: Map<number, Recorded>, all: Recorded[] | null = null): EnvProvider {
  return (task) => {
    const env = makeLiteEnv(task.envId, task.kwargs);
    let current: Recorded | null = null;
    const wrapped: SimEnvironment = {
      spec: env.spec,
      async reset(req) {
        const r = await env.reset(req);
        current =
          episodes.has(req.seed) && all === null
            ? null
            : { seed: req.seed, reset: splitBySpec(r, env.spec), steps: [] };
        if (current && !episodes.has(req.seed)) episodes.set(req.seed, current);
        if (current && all !== null) all.push(current);
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
    const refUnit = await runCampaign(liteFile, {
      ...quiet,
      campaignsDir: join(dir, 'ref'),
      envs: recordingEnvs(episodes),
    });
    referenceRows = rowsOf(refUnit);
    expect(referenceRows).toHaveLength(2 * SEEDS.n);
    expect([...episodes.keys()].sort()).toEqual(Array.from({ length: SEEDS.n }, (_, i) => SEEDS.start + i));

    const replayDir = join(dir, 'replay');
    mkdirSync(replayDir);
    const spec = {
      ...makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }).spec,
      id: 'replay/shellgame-memvla',
    };
    writeFileSync(
      join(replayDir, 'shellgame-memvla.msgpack'),
      encodeValue({ format: 'imep-replay/1', spec, episodes: [...episodes.values()] }),
    );

    writeFileSync(
      join(dir, 'replay.yaml'),
      protocolYaml(
        `{ kind: sim-bridge, adapter: replay, replayDir: ${replayDir} }`,
        '{ id: replay/shellgame-memvla, task: shellgame }',
      ),
    );
    const r = await imep(['campaign', 'run', 'replay.yaml', '--through', 'seal', '--campaigns-dir', 'bridged'], dir);
    expect(r.code, r.stderr).toBe(0); // stderr carries the progress lines
    // the server IMEP started runs in its sandbox where bubblewrap works (src/bridges/simulator-sandbox.ts), and says so
    const isolation = bubblewrapWorks().ok
      ? 'isolation: bubblewrap \\(own namespaces, .*\\)'
      : 'isolation: none \\(.*\\)';
    expect(r.stdout).toMatch(
      new RegExp(
        `^simulator: sim-bridge adapter replay: 1 server started by IMEP \\(\\S+ -m imep_sim_bridge serve --endpoint ipc://… --adapters replay --replay-dir .*\\); ${isolation}$`,
        'm',
      ),
    );
    expect(r.stdout).toMatch(/^simulator: 0 restarts, failed calls: none$/m);
    expect(r.stdout).toMatch(/^sealed /m);
    const unit = unitIn(join(dir, 'bridged')) as string;
    const run = JSON.parse(readFileSync(join(unit, 'rows/run.json'), 'utf8')) as {
      sessions: { simulatorIsolation?: string }[];
    };
    expect(run.sessions[0]?.simulatorIsolation).toMatch(new RegExp(`^${isolation}$`));
    expect((await readUnitState(unit)).state).toBe('sealed');
    expect((await verifyUnit(unit)).ok).toBe(true);

    const rows = rowsOf(unit).map((l) => JSON.parse(l) as Row);
    const ref = referenceRows.map((l) => JSON.parse(l) as Row);
    expect(rows.map((x) => x.status)).toEqual(ref.map(() => 'ok'));
    // the decision step travels with the spec: decision-query counts included, rows are the in-process rows
    expect(rowsOf(unit)).toEqual(referenceRows);
    expect(
      ref.every(
        (x) =>
          (x.reads['decisionQueries'] as number) > 0 && (x.reads['decisionQueries'] as number) < (x['steps'] as number),
      ),
    ).toBe(true);
    expect(ref.filter((x) => x['success'] === true).length).toBeGreaterThan(0);

    // what the simulator reported about its stack (hello.environment) is in the run session's record …
    const started = JSON.parse(readFileSync(join(unit, 'rows', 'run.json'), 'utf8')) as {
      sessions: { action: string; simulatorEnvironment?: unknown }[];
    };
    expect(started.sessions.map((x) => [x.action, x.simulatorEnvironment])).toEqual([
      ['start', { adapter: 'replay', reported: { format: 'imep-replay/1', directory: replayDir, recordings: 1 } }],
    ]);
    // … and in the report's provenance once the unit is closed out
    const closed = await imep(
      [
        'campaign',
        'run',
        'replay.yaml',
        '--through',
        'closeout',
        '--same-operator-reason',
        'e2e test',
        '--campaigns-dir',
        'bridged',
      ],
      dir,
    );
    expect(closed.code, closed.stderr).toBe(0);
    const report = readFileSync(join(dir, 'bridged', 'reports', unit.split('/').pop() as string, 'report.md'), 'utf8');
    // (the record's keys in canonical order)
    expect(report).toContain(
      `| simulator stack, session 1 (start) | replay — directory: ${replayDir}; format: imep-replay/1; recordings: 1 |`,
    );

    // the replay files are frozen with the unit: their digest is in precommit.json …
    const pre = JSON.parse(readFileSync(join(unit, 'precommit.json'), 'utf8')) as {
      simulatorHashes?: Record<string, string>;
    };
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
      expect(refused.stderr.trim().split('\n').at(-1)).toMatch(
        /replay\.yaml.*simulator\.replayDir.*hashes to [0-9a-f]{12}… but the precommit froze [0-9a-f]{12}…/,
      );
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
    const unit = await runCampaign(file, {
      ...quiet,
      say: (l) => lines.push(l),
      campaignsDir: join(dir, 'lite-bridge'),
    });
    expect(lines).toContain(
      "simulator: lite simulators over the bridge: 1 `imep sim serve lite` server started by IMEP; isolation: none (IMEP's own lite simulator server: no third-party code runs in it)",
    );
    expect(lines).toContain('simulator: 0 restarts, failed calls: none');
    expect(rowsOf(unit)).toEqual(referenceRows);
  }, 120_000);

  it('S and T at read time on the Python sim-bridge: donors paired by the declared fact; rows and assignment as in process', async () => {
    const ladder = {
      conditions:
        '  - { id: A, kind: A }\n  - { id: S, kind: S, seed: 41, installation: read }\n  - { id: T, kind: T, seed: 42, installation: read }',
      wave: '[A, S, T]',
      estimands:
        '  - { id: rho_S, kind: rho, reference: A, intervention: S }\n  - { id: rho_T, kind: rho, reference: A, intervention: T }\n  - { id: theta, kind: theta, T: T, S: S, reference: A }',
    };
    const liteFile = join(dir, 'st-lite.yaml');
    writeFileSync(liteFile, protocolYaml('{ kind: lite }', LITE_ENV, ladder));
    const branches: Recorded[] = [];
    const refUnit = await runCampaign(liteFile, {
      ...quiet,
      campaignsDir: join(dir, 'st-ref'),
      envs: recordingEnvs(new Map(), branches),
    });
    const ref = rowsOf(refUnit).map((l) => JSON.parse(l) as Row);
    const donorsRef = readFileSync(join(refUnit, 'traces/donors.jsonl'), 'utf8');

    const replayDir = join(dir, 'st-replay');
    mkdirSync(replayDir);
    const spec = {
      ...makeLiteEnv('ShellGameTouch-lite', { blackoutFromStep: 6, strict: true }).spec,
      id: 'replay/shellgame-st',
    };
    expect(spec.fact).toEqual({ field: 'ballCup', domain: [0, 1, 2] });
    writeFileSync(
      join(replayDir, 'shellgame-st.msgpack'),
      encodeValue({ format: 'imep-replay/1', spec, episodes: branches }),
    );
    writeFileSync(
      join(dir, 'st-replay.yaml'),
      protocolYaml(
        `{ kind: sim-bridge, adapter: replay, replayDir: ${replayDir} }`,
        '{ id: replay/shellgame-st, task: shellgame }',
        ladder,
      ),
    );
    const r = await imep(
      ['campaign', 'run', 'st-replay.yaml', '--through', 'seal', '--campaigns-dir', 'st-bridged'],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const unit = unitIn(join(dir, 'st-bridged')) as string;
    expect((await verifyUnit(unit)).ok).toBe(true);
    expect(rowsOf(unit).map((l) => JSON.parse(l) as Row)).toEqual(ref);
    expect(readFileSync(join(unit, 'traces/donors.jsonl'), 'utf8')).toBe(donorsRef);
    // S pairs equal facts, T different ones; the swap reaches every decision query (coverage)
    const donors = donorsRef
      .trimEnd()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            condition: string;
            entries: { donor: string | null; recipientFact: string; donorFact: string | null }[];
          },
      );
    expect(donors.map((d) => d.condition)).toEqual(['S', 'T']);
    for (const d of donors) {
      const paired = d.entries.filter((e) => e.donor !== null);
      expect(paired.length).toBeGreaterThan(0);
      for (const e of paired) expect(e.recipientFact === e.donorFact).toBe(d.condition === 'S');
    }
    // a unit without an eligible donor is removed (fail closed); every unit that ran has its decisions covered
    for (const row of ref.filter((x) => x['condition'] !== 'A')) {
      if (row.status === 'removed') expect((row['failure'] as { code: string }).code).toBe('E_DONOR_SHORT');
      else expect(row.reads['covered']).toBe(true);
    }
    // the lite checkpoint follows its memory: the different-fact swap sends it to the wrong cup
    const aOf = new Map(ref.filter((x) => x['condition'] === 'A').map((x) => [x['seed'], x['success']]));
    const ran = (c: string): Row[] => ref.filter((x) => x['condition'] === c && x.status === 'ok');
    expect(ran('S').length).toBeGreaterThan(0);
    for (const x of ran('S')) expect(x['success']).toBe(aOf.get(x['seed']));
    expect(ran('T').filter((x) => x['success'] === true).length).toBeLessThan(
      ran('T').filter((x) => aOf.get(x['seed']) === true).length,
    );
  }, 240_000);

  it('an endpoint where nothing listens: exit 2 naming the endpoint and what to do; nothing written (checked before the precommit)', async () => {
    const endpoint = `ipc://${join(dir, 'nobody.sock')}`;
    writeFileSync(
      join(dir, 'down.yaml'),
      protocolYaml(
        `{ kind: sim-bridge, adapter: replay, endpoint: "${endpoint}" }`,
        '{ id: replay/shellgame-memvla, task: shellgame }',
      ),
    );
    const r = await imep(['campaign', 'run', 'down.yaml', '--campaigns-dir', 'down'], dir);
    expect(r.code).toBe(2);
    const line = r.stderr.trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('down.yaml: simulator.endpoint: ');
    expect(line).toContain(`no simulator server is listening at ${endpoint}`);
    expect(line).toContain('start the simulator server at that endpoint');
    expect(existsSync(join(dir, 'down'))).toBe(false);
  }, 60_000);
});
