/**
 * A segment's trace source listens to the slot's bank only while the segment runs: the slot banks outlive
 * the segments (conditions, waves, the donor pre-pass), and a listener left behind kept the segment's last
 * trace recorder alive and running on every later write, one more per segment.
 */
import { describe, expect, it } from 'vitest';
import type { StructuredBank } from '../../src/banks/structured-bank.js';
import { makeLiteEnv } from '../../src/sims/lite/registry.js';
import { RowSink, type PolicyProvider, type RunnerPolicy } from '../../src/campaign/index.js';
import { runPlan } from '../../src/campaign/run-plan.js';
import { buildPlan, loadProtocolSync } from '../../src/protocol/index.js';
import { rememberColorYaml, sandbox, writeProtocol } from './helpers.js';
import { ColorScriptedPolicy, scriptedProvider } from './scripted-policies.js';

/** Wraps each bank's onWrite to count the listeners registered and not yet removed; records the peak. */
function countListeners(bank: StructuredBank): { active: () => number; peak: () => number; added: () => number } {
  const original = bank.onWrite.bind(bank);
  let active = 0;
  let peak = 0;
  let added = 0;
  bank.onWrite = (listener) => {
    const remove = original(listener);
    active += 1;
    added += 1;
    peak = Math.max(peak, active);
    let removed = false;
    return () => {
      if (!removed) active -= 1;
      removed = true;
      remove();
    };
  };
  return { active: () => active, peak: () => peak, added: () => added };
}

describe('runner: segment trace sources', () => {
  it('take their listener off every slot bank when the segment ends (donor pre-pass and condition runs)', async () => {
    const box = sandbox();
    const file = writeProtocol(box, 'rc.yaml', rememberColorYaml({ n: 4, sha: box.checkpointSha }));
    const { protocol } = loadProtocolSync(file);
    const plan = buildPlan(protocol);
    const inner = scriptedProvider('color');
    const counters: ReturnType<typeof countListeners>[] = [];
    const provider: PolicyProvider = {
      description: inner.description,
      release: () => inner.release(),
      async policyFor(task, batch): Promise<RunnerPolicy> {
        const policy = (await inner.policyFor(task, batch)) as ColorScriptedPolicy;
        for (const bank of policy.banks) counters.push(countListeners(bank));
        return policy;
      },
    };
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
      batchSize: 2,
      sink,
    });
    await sink.drain();
    expect(rows).toHaveLength(plan.episodes.length);
    expect(counters.length).toBeGreaterThan(0);
    // several segments registered on each bank over the run, never more than one at a time, none left
    expect(Math.max(...counters.map((c) => c.added()))).toBeGreaterThan(1);
    expect(counters.map((c) => c.peak())).toEqual(counters.map((c) => Math.min(c.added(), 1)));
    expect(counters.map((c) => c.active())).toEqual(counters.map(() => 0));
  }, 60_000);
});
