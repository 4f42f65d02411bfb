import { beforeAll, describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { executorSucceeds } from '../../src/sims/lite/chain-drawers.js';
import { ImepError } from '../../src/core/errors.js';
import {
  LiteChainExecutor,
  decideAll,
  decisionTableText,
  parseDecisionTable,
  replayDecisions,
  summarizeReplay,
  SimEnvironmentChainExecutor,
  type ReplayResult,
  type Chain,
  type ChainExecutor,
  type ExecutionOutcome,
  type ExecutionRun,
} from '../../src/chainbench/index.js';
import { fixture } from './helpers.js';

class CountingExecutor implements ChainExecutor {
  readonly calls: string[] = [];
  constructor(private readonly inner: ChainExecutor) {}
  executeChoice(chain: Chain, choice: number, run: ExecutionRun): ExecutionOutcome | Promise<ExecutionOutcome> {
    this.calls.push(`${chain.id}#${choice}@${run.slot}:${run.executorSeed}`);
    return this.inner.executeChoice(chain, choice, run);
  }
}

describe.each([2, 3])('replay with constructive pairing, 200 chains, K=%i', (K) => {
  const { manifest, records, hash } = fixture(200, K);
  const { table } = decideAll(manifest, records, hash, { seed: 3, ladder: false });
  const executor = new CountingExecutor(LiteChainExecutor.forManifest(manifest));
  let replay!: ReplayResult;
  beforeAll(async () => {
    replay = await replayDecisions({ manifest, conditions: table.conditions, executor });
  });
  const byId = new Map(manifest.chains.map((c) => [c.id, c]));

  it('executes each distinct (chain, decision) exactly once: executions = distinct pairs (+ one R per chain), zero extra', () => {
    const pairs = new Set<string>();
    for (const c of table.conditions) for (const d of c.decisions) pairs.add(`${d.chainId}#${d.choice}`);
    expect(replay.verification.distinctDecisionPairs).toBe(pairs.size);
    expect(replay.verification.executions).toBe(pairs.size + 200);
    expect(replay.verification.extraExecutions).toBe(0);
    expect(executor.calls.length).toBe(pairs.size + 200);
    expect(new Set(executor.calls).size).toBe(executor.calls.length);
    // every chain executes at most K primary choices
    for (const chain of manifest.chains) {
      expect(
        executor.calls.filter((k) => k.startsWith(`${chain.id}#`) && k.includes('@primary')).length,
      ).toBeLessThanOrEqual(K);
    }
  });

  it('conditions with identical decisions have identical task success, by construction — proved from the rows', () => {
    // (1) within a chain, every row with the same choice carries the same execution and the same outcome
    const outcome = new Map<string, boolean>();
    for (const r of replay.rows.filter((r) => r.condition !== 'R')) {
      const key = `${r.chainId}#${r.choice}`;
      expect(r.executionKey).toBe(key);
      if (outcome.has(key)) expect(r.success).toBe(outcome.get(key));
      else outcome.set(key, r.success);
    }
    // (2) hence any two conditions with identical decision vectors have identical success vectors and rates
    const rowsOf = (name: string) => replay.rows.filter((r) => r.condition === name);
    const full = rowsOf('full-memory');
    const oracle = rowsOf('oracle');
    expect(full.map((r) => r.choice)).toEqual(oracle.map((r) => r.choice));
    expect(full.map((r) => r.success)).toEqual(oracle.map((r) => r.success));
    const s = summarizeReplay(replay, manifest, { replicates: 500 });
    const row = (name: string) => s.rows.find((r) => r.condition === name)!;
    expect(row('full-memory').taskSuccess).toBe(row('oracle').taskSuccess);
    expect(s.ceiling).toBe(row('oracle').taskSuccess);
    // (3) for every pair of conditions, chains where decisions agree agree on success
    const names = table.conditions.map((c) => c.name);
    for (const a of names) {
      for (const b of names) {
        const rb = new Map(rowsOf(b).map((r) => [r.chainId, r]));
        for (const ra of rowsOf(a)) {
          const x = rb.get(ra.chainId);
          if (x !== undefined && x.choice === ra.choice) expect(x.success).toBe(ra.success);
        }
      }
    }
  });

  it('records decision accuracy and task success separately; success = correct ∧ executed (lite executor)', () => {
    for (const r of replay.rows) {
      const chain = byId.get(r.chainId)!;
      expect(r.correct).toBe(r.choice === chain.finalFact.drawer);
      expect(r.success).toBe(r.correct && r.executed);
      const seed = r.condition === 'R' ? chain.executorSeeds.replay : chain.executorSeeds.primary;
      expect(r.executed).toBe(executorSucceeds(seed, r.choice, manifest.env.executionSuccess));
    }
    const s = summarizeReplay(replay, manifest, { replicates: 500 });
    for (const row of s.rows) {
      expect(Object.keys(row)).toEqual(
        expect.arrayContaining(['accuracy', 'taskSuccess', 'accuracyCi', 'taskSuccessCi']),
      );
      expect(row.taskSuccess).toBeLessThanOrEqual(row.accuracy);
    }
  });

  it('summaries: Δ vs no-memory with a seeded chain bootstrap, and the replay floor R', () => {
    const s = summarizeReplay(replay, manifest, { replicates: 1000, bootstrapSeed: 5 });
    const full = s.contrasts.find((c) => c.reference === 'full-memory')!;
    const SR = (n: string) => s.rows.find((r) => r.condition === n)!.taskSuccess;
    expect(full.estimate).toBeCloseTo(SR('full-memory') - SR('no-memory'), 12);
    expect(full.bootstrap.lower).toBeLessThanOrEqual(full.estimate);
    expect(full.bootstrap.upper).toBeGreaterThanOrEqual(full.estimate);
    expect(full.bootstrap.level).toBe('cluster');
    expect(summarizeReplay(replay, manifest, { replicates: 1000, bootstrapSeed: 5 }).contrasts).toEqual(s.contrasts);
    const stale = s.contrasts.find((c) => c.reference === 'stale-records')!;
    expect(stale.n).toBe(100);
    expect(s.replayFloor!.n).toBe(200);
    expect(s.replayFloor!.rho).toBeGreaterThan(0); // the replay seed is a different derivation
    expect(s.contrasts.map((c) => c.reference)).not.toContain('R');
  });
});

describe('replay input handling', () => {
  const { manifest, records, hash } = fixture(30, 2, 5);
  const { table } = decideAll(manifest, records, hash, { seed: 1 });

  it('the decisions file round-trips; replay takes decisions as data', async () => {
    const parsed = parseDecisionTable(decisionTableText(table), 'd.json');
    expect(parsed).toEqual(JSON.parse(JSON.stringify(table)));
    const exec = LiteChainExecutor.forManifest(manifest);
    const a = await replayDecisions({ manifest, conditions: parsed.conditions, executor: exec, replayFloor: false });
    const b = await replayDecisions({
      manifest,
      conditions: [{ name: 'only', decisions: manifest.chains.map((c) => ({ chainId: c.id, choice: 0 })) }],
      executor: exec,
      replayFloor: false,
    });
    expect(a.conditions).not.toContain('R');
    expect(b.verification).toMatchObject({ rows: 30, distinctDecisionPairs: 30, executions: 30, extraExecutions: 0 });
  });

  it('the async SimEnvironment executor (lite wrapper) gives the same rows as the in-process lite executor', async () => {
    const sim = new SimEnvironmentChainExecutor((K) =>
      makeLiteEnv('ChainDrawers-lite', { K, executionSuccess: manifest.env.executionSuccess }),
    );
    const a = await replayDecisions({ manifest, conditions: table.conditions, executor: sim });
    await sim.close();
    const b = await replayDecisions({
      manifest,
      conditions: table.conditions,
      executor: LiteChainExecutor.forManifest(manifest),
    });
    expect(a.rows).toEqual(b.rows);
    expect(a.executions).toEqual(b.executions);
  });

  it('refuses unknown chains, out-of-range choices, duplicate decisions and bad files', async () => {
    const exec = LiteChainExecutor.forManifest(manifest);
    const run = (decisions: { chainId: string; choice: number }[]) =>
      replayDecisions({ manifest, conditions: [{ name: 'x', decisions }], executor: exec });
    await expect(run([{ chainId: 'nope', choice: 0 }])).rejects.toThrow(/chain nope is not in the manifest/);
    await expect(run([{ chainId: manifest.chains[0]!.id, choice: 2 }])).rejects.toThrow(
      /choice 2 is not a drawer in 0\.\.1/,
    );
    await expect(
      run([
        { chainId: manifest.chains[0]!.id, choice: 0 },
        { chainId: manifest.chains[0]!.id, choice: 1 },
      ]),
    ).rejects.toThrow(/has two decisions/);
    expect(() => parseDecisionTable('{"format":"imep-chain-decisions"}', 'd.json')).toThrow(ImepError);
  });
});
