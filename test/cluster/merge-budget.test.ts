/**
 * Issue #31 item 4, cluster: each shard keeps the execution-failure budget on its own units, so shards that each stay
 * within their share can together spend the whole run's budget. The merge judges the merged rows against the
 * registered budget before it writes anything, and refuses (E_FAILURE_BUDGET, exit 6) instead of sealing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { isImepError } from '../../src/core/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { precommitCampaign, runCampaign } from '../../src/campaign/campaign.js';
import { shardDir, shardFilter, type EnvProvider } from '../../src/campaign/index.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { mergeCluster } from '../../src/cluster/merge.js';
import { planCluster } from '../../src/cluster/submit.js';
import { buildPlan, parseProtocol } from '../../src/protocol/index.js';
import { blackoutYaml, sandbox, scriptedOptions, writeProtocol } from '../campaign/helpers.js';
import { FlakyEnv } from '../campaign/flaky-env.js';

describe('cluster: merge and the execution-failure budget', () => {
  it('refuses a merge whose rows exceed the registered budget, though every shard kept its own share', async () => {
    const box = sandbox('imep-merge-budget-');
    const text = blackoutYaml({ n: 8, sha: box.checkpointSha }).replace(
      'executionFailures: { policy: record }',
      'executionFailures: { policy: record, budget: { firstFailed: 2, maxFraction: 0.1 } }',
    );
    const file = writeProtocol(box, 'p.yaml', text);
    const plan = buildPlan(parseProtocol(text, 'p.yaml').protocol);
    // in each shard, its 3rd unit (plan order) fails in every condition: one failed unit per wave × condition per
    // shard, within the shard's allowance max(2, 0.1 × its units); two per wave × condition merged, within max(2, 0.8)
    // too — so a 3rd failed unit per wave × condition, the 4th unit of shard 0, spends the run's budget
    const failing = new Set<number>();
    for (const index of [0, 1]) {
      const include = shardFilter(plan.episodes, { index, count: 2 });
      const seeds = [
        ...new Set(
          plan.episodes
            .filter((e) => e.wave === 1 && e.condition === 'A')
            .filter((e) => include({ task: e.task, seed: e.seed, scopeId: e.scopeId, episodes: [] }))
            .map((e) => e.seed),
        ),
      ];
      expect(seeds.length).toBeGreaterThanOrEqual(4);
      failing.add(seeds[2] as number);
      if (index === 0) failing.add(seeds[3] as number);
    }
    const envs: EnvProvider = (t) =>
      new FlakyEnv(makeLiteEnv(t.envId, t.kwargs), (seed, attempt, step) => failing.has(seed) && step === 3);
    const unit = await precommitCampaign(file, scriptedOptions(box, 'shell'));
    await planCluster(unit, 2);
    for (const index of [0, 1])
      await runCampaign(file, { ...scriptedOptions(box, 'shell', { envs }), shard: { index, count: 2 } });
    const failedIn = (index: number): number =>
      readFileSync(join(shardDir(unit, { index, count: 2 }), 'rows.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
        .filter((l) => (JSON.parse(l) as { status: string }).status === 'failed').length;
    expect([failedIn(0), failedIn(1)]).toEqual([7 * 2 * 2, 7 * 2]); // every shard ran to its end

    let err: unknown;
    await mergeCluster(unit, { say: () => undefined }).catch((e: unknown) => (err = e));
    expect(isImepError(err) && err.code).toBe('E_FAILURE_BUDGET');
    expect(exitCodeFor(err)).toBe(6);
    expect(isImepError(err) ? err.oneLine() : '').toMatch(
      /cannot go on before the seal: 3 of the 8 planned units of wave 1 × A failed, more than the 2 the budget allows/,
    );
    expect(isImepError(err) ? err.oneLine() : '').toMatch(/nothing was merged/);
    expect((await readUnitState(unit)).state).toBe('precommitted');
  }, 180_000);
});
