/**
 * History memory for the `remote` runtime (src/campaign/history-policy.ts): a hosted policy with no bank of its own is
 * given `history/<field>` and `history/mask` in every observation, read once per call through the runner's hook (a
 * decision query from the environment's decisionFromStep on), its readouts first; the host's own reads follow.
 */
import { describe, expect, it } from 'vitest';
import type { ReadContext } from '../../src/banks/index.js';
import { blockHook } from '../../src/interventions/index.js';
import { withHistory } from '../../src/campaign/history-policy.js';
import type { RunnerPolicy } from '../../src/campaign/index.js';
import { HistoryMemory } from '../../src/policies/index.js';
import type { NdArray, Observation, SlotObservation } from '../../src/runtime/index.js';

function recordingInner(): RunnerPolicy & { seen: SlotObservation[] } {
  const seen: SlotObservation[] = [];
  const memory = { target: null, beginScope: () => undefined, endScope: () => undefined };
  return {
    seen,
    maxBatch: 2,
    resetSlot: async () => undefined,
    inferBatch: async (requests) => {
      seen.push(...requests);
      return requests.map(() => ({
        action: { dtype: 'float32', shape: [2], data: new Float32Array(2) },
        readouts: {},
      }));
    },
    setReadHook: () => undefined,
    slotMemory: () => memory,
  };
}

const obsAt = (t: number): Observation => ({ toolPosition: Float32Array.of(t, 0), instruction: 'x' });
const data = (v: unknown): number[] => [...((v as NdArray).data as Float32Array)];

describe('withHistory (remote runtime, memory.bank: history)', () => {
  it('adds the window to each observation and reports its read, a decision query from decisionFromStep on', async () => {
    const inner = recordingInner();
    const contexts: ReadContext[] = [];
    const policy = withHistory(
      inner,
      new HistoryMemory({ window: 3, stride: 1, keys: ['toolPosition'], pad: 'zeros' }, 2),
      2,
    );
    policy.setReadHook((items, ctx) => (contexts.push(ctx), items));
    await policy.resetSlot(1, { episode: 'ep' });
    const outs = [];
    for (let t = 0; t < 3; t++) outs.push((await policy.inferBatch([{ slot: 1, obs: obsAt(t) }]))[0]!);
    const last = inner.seen[2]!.obs;
    expect(Object.keys(last).sort()).toEqual(['history/mask', 'history/toolPosition', 'instruction', 'toolPosition']);
    expect(data(last['history/toolPosition'])).toEqual([0, 0, 1, 0, 2, 0]);
    expect(data(inner.seen[0]!.obs['history/mask'])).toEqual([0, 0, 1]);
    expect(contexts.map((c) => [c.queryIndex, c.decisionStep, c.candidateCount])).toEqual([
      [1, false, 0],
      [2, false, 1],
      [3, true, 2],
    ]);
    expect(outs.map((o) => o.readouts.reads?.length)).toEqual([1, 1, 1]);
    // N (block): the host sees what it sees at step 0
    const blocked = recordingInner();
    const n = withHistory(
      blocked,
      new HistoryMemory({ window: 3, stride: 1, keys: ['toolPosition'], pad: 'zeros' }, 2),
      2,
    );
    n.setReadHook(blockHook);
    await n.resetSlot(0, { episode: 'ep' });
    for (let t = 0; t < 3; t++) await n.inferBatch([{ slot: 0, obs: obsAt(t) }]);
    expect(data(blocked.seen[2]!.obs['history/toolPosition'])).toEqual([0, 0, 0, 0, 2, 0]);
    expect(data(blocked.seen[2]!.obs['history/mask'])).toEqual([0, 0, 1]);
  });
});
