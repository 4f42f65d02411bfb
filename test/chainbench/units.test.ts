import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/hash.js';
import { ImepError } from '../../src/core/errors.js';
import { createUnit, readPrecommit, verifyUnit } from '../../src/evidence/index.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { LITE_ENV_IDS, makeLiteEnv } from '../../src/sims/lite/registry.js';
import { ServerSupervisor, bridgePython, packageRoot, pythonServerCommand } from '../../src/bridges/supervisor.js';
import { BridgeChainExecutor } from '../../src/chainbench/bridge-executor.js';
import {
  LiteChainExecutor,
  replayDecisions,
  summarizeDecisions,
  type DecisionUnitRead,
  type ReplayResult,
} from '../../src/chainbench/index.js';
import { readDecisionUnit, writeDecisionUnit } from '../../src/chainbench/decision-unit.js';
import { readReplayUnit, writeReplayUnit } from '../../src/chainbench/replay-unit.js';
import { fixture } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-chainbench-units-'));
function writable(path: string): void {
  chmodSync(path, 0o755);
}
afterAll(() => {
  execFileSync('chmod', ['-R', 'u+w', dir]);
  rmSync(dir, { recursive: true, force: true });
});

const K = 3;
const { manifest, records, hash } = fixture(60, K, 77);
const decUnit = join(dir, 'decisions');
let decisions!: DecisionUnitRead;
let writtenTable: unknown;

beforeAll(async () => {
  const w = await writeDecisionUnit({ dir: decUnit, manifest, manifestHash: hash, records, seed: 4, replicates: 400 });
  writtenTable = JSON.parse(JSON.stringify(w.table));
  decisions = await readDecisionUnit(decUnit);
});

/** The rows file of a unit, parsed line by line (independently of the reader under test). */
function rawRows(unit: string): Record<string, unknown>[] {
  return readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('decisions as a sealed evidence unit', () => {
  it('is sealed, verifies, is read-only, and precommits manifest + conditions + code identity', async () => {
    const v = await verifyUnit(decUnit);
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.scope).toBe('seal');
    expect(v.root).toBe(decisions.unit.seal.merkle.root);
    expect(v.signatures?.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(decisions.unit.seal.signature?.keyOwner).toBe(decisions.unit.seal.operator.id);
    expect(statSync(join(decUnit, 'rows/rows.jsonl')).mode & 0o222).toBe(0);
    const pre = await readPrecommit(decUnit);
    expect(pre.protocolHash).toBe(sha256Hex(readFileSync(join(decUnit, 'protocol.json'))));
    expect(pre.plannedRows).toBe(60);
    expect(pre.code.packageVersion).toMatch(/^\d+\.\d+\.\d+/);
    const proto = JSON.parse(readFileSync(join(decUnit, 'protocol.json'), 'utf8')) as {
      manifestHash: string;
      conditions: { name: string }[];
      seed: number;
    };
    expect(proto.manifestHash).toBe(hash);
    expect(proto.conditions.map((c) => c.name)).toEqual([
      'full-memory',
      'no-memory',
      'initial-fact',
      'shuffled-records',
      'stale-records',
      'oracle',
    ]);
    expect(proto.seed).toBe(4);
  });

  it('its rows rebuild exactly the decision table decideAll produced', () => {
    expect(JSON.parse(JSON.stringify(decisions.table))).toEqual(writtenTable);
    expect(decisions.rows).toHaveLength(60);
    expect(decisions.manifestHash).toBe(hash);
  });

  it('checked from the sealed rows: C reproduces 100%, U and S change nothing, T changes every decision; no-memory CI contains 1/K', () => {
    const rows = rawRows(decUnit) as {
      chainId: string;
      decisions: Record<string, { choice: number }>;
      ladder:
        | null
        | (Record<'C' | 'U' | 'S' | 'T', null | { choice: number; changed: boolean }> & { archivedChoice: number });
    }[];
    const inLadder = rows.filter((r) => r.ladder !== null);
    expect(inLadder.length).toBeGreaterThan(40);
    let s = 0,
      t = 0;
    for (const r of inLadder) {
      const L = r.ladder!;
      expect(L.archivedChoice).toBe(r.decisions['full-memory']!.choice);
      expect(L.C!.choice).toBe(L.archivedChoice);
      expect(L.C!.changed).toBe(false);
      expect(L.U!.changed).toBe(false);
      if (L.S !== null) {
        s++;
        expect(L.S.changed).toBe(false);
      }
      if (L.T !== null) {
        t++;
        expect(L.T.changed).toBe(true);
        expect(L.T.choice).not.toBe(L.archivedChoice);
      }
    }
    expect(s).toBeGreaterThan(0);
    expect(t).toBeGreaterThan(0);
    const summary = summarizeDecisions(decisions.manifest, decisions.table, { replicates: 400, bootstrapSeed: 4 });
    expect(summary.ladder!.reproduced).toBe(inLadder.length);
    expect(summary.noMemoryFloor!.floor).toBeCloseTo(1 / K, 12);
    expect(summary.noMemoryFloor!.contains).toBe(true);
  });
});

describe('replay of a sealed decisions unit, sealed as its own unit', () => {
  const repUnit = join(dir, 'replay-lite');
  let inProcess!: ReplayResult;
  beforeAll(async () => {
    const lite = LiteChainExecutor.forManifest(manifest);
    inProcess = (
      await writeReplayUnit({
        dir: repUnit,
        decisions,
        executor: lite,
        executorIdentity: lite.identity(),
        replicates: 300,
      })
    ).replay;
  });

  it('verifies, names the decisions unit by its seal root, and rebuilds the replay from its rows', async () => {
    expect((await verifyUnit(repUnit)).ok).toBe(true);
    const r = await readReplayUnit(repUnit);
    expect(r.protocol.decisions.sealRoot).toBe(decisions.unit.seal.merkle.root);
    expect(r.protocol.decisions.sealSha256).toBe(sha256Hex(readFileSync(join(decUnit, 'seal.json'))));
    expect(r.protocol.executor).toEqual({
      kind: 'lite',
      env: 'ChainDrawers-lite',
      executionSuccess: manifest.env.executionSuccess,
    });
    expect(r.replay.rows).toEqual(inProcess.rows);
    expect(r.replay.executions).toEqual(inProcess.executions);
    expect(r.replay.verification).toEqual(inProcess.verification);
  });

  it('proved from the sealed rows: executions = distinct (chain, decision) pairs + one R per chain; same decision ⇒ same task success', () => {
    const rows = rawRows(repUnit) as {
      chainId: string;
      executions: { key: string; choice: number; slot: string; success: boolean }[];
      outcomes: Record<string, { choice: number; executionKey: string }>;
    }[];
    expect(rows).toHaveLength(60);
    let executions = 0;
    const pairs = new Set<string>();
    const dec = new Map(
      decisions.table.conditions.map((c) => [c.name, new Map(c.decisions.map((d) => [d.chainId, d.choice]))]),
    );
    for (const row of rows) {
      executions += row.executions.length;
      const primary = row.executions.filter((e) => e.slot === 'primary');
      const choices = new Set<number>();
      for (const [name, o] of Object.entries(row.outcomes)) {
        if (name === 'R') continue;
        expect(o.choice).toBe(dec.get(name)!.get(row.chainId)); // the sealed decision, replayed
        choices.add(o.choice);
        pairs.add(`${row.chainId}#${o.choice}`);
      }
      expect(primary.map((e) => e.choice).sort()).toEqual([...choices].sort()); // one execution per distinct choice
      expect(row.executions.filter((e) => e.slot === 'replay')).toHaveLength(1);
      const success = new Map(row.executions.map((e) => [e.key, e.success]));
      const byChoice = new Map<number, boolean>();
      for (const [name, o] of Object.entries(row.outcomes)) {
        if (name === 'R') continue;
        const s = success.get(o.executionKey);
        expect(s).toBeDefined();
        if (byChoice.has(o.choice)) expect(s).toBe(byChoice.get(o.choice));
        byChoice.set(o.choice, s!);
      }
    }
    expect(executions).toBe(pairs.size + 60);
    expect(inProcess.verification).toMatchObject({ executions, distinctDecisionPairs: pairs.size, extraExecutions: 0 });
  });

  it('refuses a plain file, an unsealed unit, the wrong kind of unit, a tampered unit (naming the file) and a used folder', async () => {
    const plain = join(dir, 'decisions.json');
    writeFileSync(plain, '{}');
    await expect(readDecisionUnit(plain)).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringMatching(/is a file, not a sealed evidence unit folder/),
    });
    const unsealed = join(dir, 'unsealed');
    await createUnit(unsealed, { id: 'unsealed' });
    await expect(readDecisionUnit(unsealed)).rejects.toMatchObject({
      code: 'E_OUT_OF_ORDER',
      message: expect.stringMatching(/is created, not sealed/),
    });
    await expect(readDecisionUnit(repUnit)).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringMatching(/kind "imep.chainbench-replay", not imep.chainbench-decisions/),
    });
    const lite = LiteChainExecutor.forManifest(manifest);
    await expect(
      writeReplayUnit({ dir: repUnit, decisions, executor: lite, executorIdentity: lite.identity() }),
    ).rejects.toThrow(/not empty/);

    // tamper with a copy: flip one decision in rows.jsonl
    const copy = join(dir, 'decisions-copy');
    execFileSync('cp', ['-a', decUnit, copy]);
    const rowsFile = join(copy, 'rows/rows.jsonl');
    writable(join(copy, 'rows'));
    chmodSync(rowsFile, 0o644);
    const text = readFileSync(rowsFile, 'utf8');
    writeFileSync(rowsFile, text.replace('"choice":0', '"choice":1'));
    const e = await readDecisionUnit(copy).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ImepError);
    expect((e as ImepError).code).toBe('E_UNIT_TAMPERED');
    expect((e as ImepError).file).toBe(rowsFile);
    expect((e as ImepError).message).toMatch(/modified: same size, different SHA-256/);
  });
});

describe('the bridge executor', () => {
  let ipc: PrivateIpcEndpoint;
  let server: BridgeServer;
  beforeAll(async () => {
    ipc = await privateIpcEndpoint();
    server = await BridgeServer.bind({
      endpoint: ipc.endpoint,
      factory: makeLiteEnv,
      envIds: LITE_ENV_IDS,
      name: 'imep-lite',
      adapters: ['lite'],
    });
  });
  afterAll(async () => {
    await server.close();
    await ipc.dispose();
  });

  it('over the TS lite server gives the same sealed rows as the in-process lite executor, and records the server', async () => {
    const bridge = await BridgeChainExecutor.connect({
      endpoint: ipc.endpoint,
      executionSuccess: manifest.env.executionSuccess,
      deadlineMs: 10_000,
    });
    const out = join(dir, 'replay-bridge');
    try {
      await writeReplayUnit({
        dir: out,
        decisions,
        executor: bridge,
        executorIdentity: bridge.identity(),
        replicates: 300,
      });
    } finally {
      await bridge.close();
    }
    const r = await readReplayUnit(out);
    const lite = await replayDecisions({
      manifest,
      conditions: decisions.table.conditions,
      executor: LiteChainExecutor.forManifest(manifest),
    });
    expect(r.replay.rows).toEqual(lite.rows);
    expect(r.replay.executions).toEqual(lite.executions);
    expect(r.protocol.executor).toMatchObject({
      kind: 'bridge',
      endpoint: ipc.endpoint,
      env: 'ChainDrawers-lite',
      server: { name: 'imep-lite', adapters: ['lite'], protocol: 1 },
    });
  });

  it('refuses a Python sim-bridge (replay + LIBERO adapters) that hosts no choice executor, naming what it hosts', async () => {
    execFileSync(bridgePython(), ['-c', 'import zmq, msgpack, numpy'], { stdio: 'pipe' }); // fails loudly when the Python side cannot run
    const py = await privateIpcEndpoint();
    const sup = new ServerSupervisor(
      pythonServerCommand(py.endpoint, {
        adapters: ['replay', 'libero'],
        replayDir: join(packageRoot(), 'sim-bridge/tests/fixtures/replay'),
      }),
      { endpoint: py.endpoint, readyTimeoutMs: 30_000 },
    );
    try {
      await sup.start();
      const e = await BridgeChainExecutor.connect({
        endpoint: py.endpoint,
        executionSuccess: 0.8,
        deadlineMs: 10_000,
      }).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: 'E_SIM_UNAVAILABLE', field: '--endpoint' });
      expect((e as ImepError).message).toMatch(/hosts no ChainDrawers-lite; it hosts: .*libero\/libero_spatial\/0/);
      expect((e as ImepError).message).toMatch(/replay\/tiny/);
    } finally {
      await sup.stop();
      await py.dispose();
    }
  });
});
