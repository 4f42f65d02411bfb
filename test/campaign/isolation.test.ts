import { describe, expect, it } from 'vitest';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { RowSink, type PolicyProvider, type RunnerPolicy } from '../../src/campaign/index.js';
import { runPlan } from '../../src/campaign/run-plan.js';
import type { EpisodeInfo, SlotObservation } from '../../src/runtime/policy.js';
import { buildPlan, parseProtocol } from '../../src/protocol/index.js';
import { blackoutYaml, sandbox } from './helpers.js';
import { ShellScriptedPolicy } from './scripted-policies.js';

describe('information isolation', () => {
  it('the policy sees only method-visible fields and an opaque episode id — never seeds, tasks, attempts or outcomes', async () => {
    const box = sandbox();
    const { protocol } = parseProtocol(blackoutYaml({ n: 3, sha: box.checkpointSha }), 'p.yaml');
    const fields = new Set<string>();
    const infos: EpisodeInfo[] = [];
    const provider: PolicyProvider = {
      description: 'spy',
      async policyFor(task, batch): Promise<RunnerPolicy> {
        const inner = new ShellScriptedPolicy(batch, task.facts.decisionFromStep);
        return {
          maxBatch: inner.maxBatch,
          setReadHook: (h) => inner.setReadHook(h),
          slotMemory: (s) => inner.slotMemory(s),
          resetSlot: async (slot, info) => {
            infos.push(info);
            await inner.resetSlot(slot, info);
          },
          inferBatch: async (reqs: readonly SlotObservation[]) => {
            for (const r of reqs) for (const k of Object.keys(r.obs)) fields.add(k);
            return inner.inferBatch(reqs);
          },
        };
      },
      release: async () => undefined,
    };
    const plan = buildPlan(protocol);
    const rows: unknown[] = [];
    const sink = new RowSink(
      {
        appendRow: async (r) => void rows.push(r),
        appendTiming: async () => undefined,
        appendTrace: async () => undefined,
      },
      plan.episodes.map((e) => e.seq),
    );
    await runPlan({
      protocol,
      episodes: plan.episodes,
      policies: provider,
      envs: (t) => makeLiteEnv(t.envId, t.kwargs),
      batchSize: 4,
      sink,
    });
    await sink.drain();
    expect(rows.length).toBe(plan.episodes.length);
    expect([...fields].sort()).toEqual([...protocol.allowlists.methodVisible].sort());
    expect(infos.length).toBeGreaterThanOrEqual(plan.episodes.length);
    for (const info of infos) expect(Object.keys(info)).toEqual(['episode']);
    expect(new Set(infos.map((i) => i.episode))).toEqual(new Set(plan.episodes.map((e) => e.episodeId)));
  });
});
