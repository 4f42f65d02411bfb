/**
 * History memory for the `remote` runtime (a policy hosted in Python by imep_sim_bridge.policy_host that keeps no bank
 * of its own and reports `memory: { bank: history }`): a RunnerPolicy decorator that gives every call the window of the
 * episode's observations as `history/<field>` and `history/mask` (src/policies/servers/history-memory.ts), read once
 * per call through the runner's hook, exactly as for a policy server. Each `policy.infer` is one step, so a call's read
 * is a decision query when its step is one (elapsed step ≥ the environment's decisionFromStep). The readouts are the
 * history read followed by any the host made itself.
 */
import type { ServerMemory } from '../policies/index.js';
import type { NdArray, Observation, ObsValue } from '../runtime/index.js';
import type { RunnerPolicy } from './types.js';

export function withHistory(inner: RunnerPolicy, memory: ServerMemory, decisionFromStep: number): RunnerPolicy {
  const steps = new Array<number>(inner.maxBatch).fill(0);
  return {
    maxBatch: inner.maxBatch,
    async resetSlot(slot, info) {
      memory.resetSlot(slot, info.episode);
      steps[slot] = 0;
      await inner.resetSlot(slot, info);
    },
    async inferBatch(requests) {
      const given = await Promise.all(
        requests.map(async (r) => {
          const step = steps[r.slot] ?? 0;
          try {
            const extras = await memory.beginCall({
              slot: r.slot,
              step,
              decision: step >= decisionFromStep,
              obs: r.obs,
            });
            return {
              slot: r.slot,
              obs: { ...r.obs, ...(extras as Record<string, ObsValue | NdArray>) } as Observation,
            };
          } catch (e) {
            memory.endCall(r.slot);
            throw e;
          }
        }),
      );
      const reads = (slot: number) => memory.endCall(slot);
      let outs;
      try {
        outs = await inner.inferBatch(given);
      } catch (e) {
        for (const r of requests) reads(r.slot);
        throw e;
      }
      return outs.map((out, i) => {
        const slot = (requests[i] as { slot: number }).slot;
        steps[slot] = (steps[slot] ?? 0) + 1;
        return { ...out, readouts: { ...out.readouts, reads: [...reads(slot), ...(out.readouts.reads ?? [])] } };
      });
    },
    setReadHook(hook) {
      memory.setReadHook(hook);
      inner.setReadHook(hook);
    },
    slotMemory: (slot) => inner.slotMemory(slot),
  };
}
