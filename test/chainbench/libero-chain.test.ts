/**
 * `imep chainbench replay … --executor bridge --env LIBERO-ChainDrawers` against the Python sim-bridge
 * serving the libero-chain executor on the fake LIBERO package (sim-bridge/tests/fakes/libero_pkg: LIBERO's
 * module paths and call signatures, fake physics) and fixture demo files
 * (sim-bridge/tests/fakes/libero_chain_fixture.py). Every task-success value is checked against the
 * fixture's table: demo (sceneSeed mod 3) of the chosen drawer's task executes or not.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imep } from './helpers.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { ServerSupervisor, bridgePython, packageRoot, pythonServerCommand } from '../../src/bridges/supervisor.js';
import { BridgeChainExecutor, LIBERO_CHAIN_ENV } from '../../src/chainbench/bridge-executor.js';
import type { Chain } from '../../src/chainbench/manifest-schema.js';

const TOP = 'KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet';
const BOTTOM = 'KITCHEN_SCENE1_open_the_bottom_drawer_of_the_cabinet';
/** libero_chain_fixture.py EXPECTED: `${drawer}/${demo}` → executed (drawer 0 top, 1 bottom). */
const EXECUTES: Readonly<Record<string, boolean>> = {
  '0/0': true,
  '0/1': false,
  '0/2': true,
  '1/0': true,
  '1/1': true,
  '1/2': false,
};

const dir = mkdtempSync(join(tmpdir(), 'imep-libero-chain-'));
const bridgeDir = join(packageRoot(), 'sim-bridge');
let ipc: PrivateIpcEndpoint;
let sup: ServerSupervisor;
let demos: Record<string, { file: string; sha256: string }>;

beforeAll(async () => {
  const fx = JSON.parse(
    execFileSync(bridgePython(), [
      join(bridgeDir, 'tests/fakes/libero_chain_fixture.py'),
      join(dir, 'libero-root'),
    ]).toString(),
  ) as {
    root: string;
    /** The folder holding the fixture's LIBERO config.yaml (LIBERO asks for one at import when it is missing). */
    configPath: string;
    demos: Record<string, { file: string; sha256: string }>;
  };
  demos = fx.demos;
  const pins = join(dir, 'pins.json');
  writeFileSync(pins, JSON.stringify({ [TOP]: demos[TOP]!.sha256, [BOTTOM]: demos[BOTTOM]!.sha256 }));
  ipc = await privateIpcEndpoint();
  const cmd = pythonServerCommand(ipc.endpoint, {
    adapters: ['libero-chain'],
    extraArgs: ['--libero-demo-pins', pins],
  });
  sup = new ServerSupervisor(
    {
      ...cmd,
      env: {
        ...cmd.env,
        PYTHONPATH: `${join(bridgeDir, 'tests/fakes/libero_pkg')}:${cmd.env?.['PYTHONPATH'] ?? ''}`,
        IMEP_FAKE_LIBERO_ROOT: fx.root,
        LIBERO_CONFIG_PATH: fx.configPath,
      },
    },
    { endpoint: ipc.endpoint, readyTimeoutMs: 30_000 },
  );
  await sup.start();
}, 60_000);

afterAll(async () => {
  await sup?.stop();
  await ipc?.dispose();
  execFileSync('chmod', ['-R', 'u+w', dir]);
  rmSync(dir, { recursive: true, force: true });
});

interface ManifestJson {
  chains: { id: string; K: number; sceneSeed: number; finalFact: { drawer: number } }[];
}

describe('ChainBench replay through LIBERO (libero-chain executor on the fake LIBERO)', () => {
  const manifest = join(dir, 'manifest.json');
  const decisions = join(dir, 'decisions');

  it('executes every distinct decision once in LIBERO; task success is the demo replay’s check_success on the right drawer', async () => {
    expect((await imep('generate', '--chains', '24', '--K', '2', '--seed', '5', '--out', manifest)).code).toBe(0);
    expect((await imep('decide', manifest, '--out', decisions, '--seed', '3', '--replicates', '200')).code).toBe(0);
    const r = await imep(
      'replay',
      manifest,
      '--decisions',
      decisions,
      '--replicates',
      '200',
      '--json',
      '--executor',
      'bridge',
      '--endpoint',
      ipc.endpoint,
      '--env',
      LIBERO_CHAIN_ENV,
    );
    expect(r.message).toBe('');
    const rj = JSON.parse(r.stdout) as {
      executor: { kind: string; env: string; server: { name: string; adapters: string[] } };
      proof: { executions: number };
      summary: {
        verification: { extraExecutions: number; distinctDecisionPairs: number };
        rows: { condition: string; taskSuccess: number }[];
      };
      executions: { chainId: string; choice: number; slot: string; executed: boolean; success: boolean }[];
    };
    expect(rj.executor).toMatchObject({
      kind: 'bridge',
      env: LIBERO_CHAIN_ENV,
      server: { name: 'imep-sim-bridge', adapters: ['libero-chain'] },
    });
    expect(rj.summary.verification.extraExecutions).toBe(0);
    expect(rj.proof.executions).toBe(rj.executions.length);
    expect(rj.executions.length).toBe(rj.summary.verification.distinctDecisionPairs + 24); // + one replay-floor execution per chain
    const chains = new Map((JSON.parse(readFileSync(manifest, 'utf8')) as ManifestJson).chains.map((c) => [c.id, c]));
    let executed = 0;
    for (const e of rj.executions) {
      const c = chains.get(e.chainId)!;
      const runs = EXECUTES[`${e.choice}/${c.sceneSeed % 3}`]!;
      expect(e.executed).toBe(runs);
      expect(e.success).toBe(runs && e.choice === c.finalFact.drawer);
      if (runs) executed++;
    }
    // the fixture has executing and failing demos for both drawers: both outcomes occur
    expect(executed).toBeGreaterThan(0);
    expect(executed).toBeLessThan(rj.executions.length);
    // SR* (oracle): the fraction of chains whose hidden drawer's demo executes
    const oracle = rj.summary.rows.find((row) => row.condition === 'oracle')!;
    const expected =
      [...chains.values()].filter((c) => EXECUTES[`${c.finalFact.drawer}/${c.sceneSeed % 3}`]).length / 24;
    expect(oracle.taskSuccess).toBeCloseTo(expected, 12);
  }, 60_000);

  it('reports the registered motor source (tasks, demo files, SHA-256) and refuses a manifest with another K', async () => {
    const bridge = await BridgeChainExecutor.connect({
      endpoint: ipc.endpoint,
      env: LIBERO_CHAIN_ENV,
      executionSuccess: 0.8,
      deadlineMs: 10_000,
    });
    try {
      const chain = (JSON.parse(readFileSync(manifest, 'utf8')) as ManifestJson).chains[0]!;
      const out = await bridge.executeChoice(chain as unknown as Chain, 1, { slot: 'primary', executorSeed: 9 });
      expect(out.executed).toBe(EXECUTES[`1/${chain.sceneSeed % 3}`]);
      const reg = JSON.parse(bridge.motorRegistries().get(2)!) as {
        motorSource: string;
        drawers: { task: string; demoFile: string; demoSha256: string }[];
      };
      expect(reg.motorSource).toBe('libero-demo-replay');
      expect(reg.drawers.map((d) => [d.task, d.demoFile, d.demoSha256])).toEqual([
        [TOP, demos[TOP]!.file, demos[TOP]!.sha256],
        [BOTTOM, demos[BOTTOM]!.file, demos[BOTTOM]!.sha256],
      ]);
      const e = await bridge
        .executeChoice({ ...chain, K: 3 } as unknown as Chain, 0, { slot: 'primary', executorSeed: 9 })
        .catch((x: unknown) => x);
      expect(String((e as Error).message)).toMatch(
        /registers K = 2 drawers \(top, bottom\); replay a manifest generated with --K 2/,
      );
    } finally {
      await bridge.close();
    }
  }, 30_000);
});
