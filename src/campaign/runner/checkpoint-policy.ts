/**
 * The default policy provider: a checkpoint folder (model.json + graphs, src/policies) run by the
 * external-memory runtime (ExternalMemoryPolicy: graphs in ONNX Runtime / TF.js, one episode-local bank
 * per batch slot OUTSIDE the graphs, so every read passes the runner's hook). One runtime per task over
 * one loaded checkpoint; the task's decision-step rule (task-facts.ts) labels its reads.
 *
 * The episode bank is emptied at every episode start by the runtime (resetSlot); beginScope/endScope
 * empty it as well, so memory is empty at both ends of every scope. It is not an installation target:
 * protocols on episode-local banks register only read-time conditions (src/protocol/cross-check.ts).
 */
import { ImepError } from '../../core/errors.js';
import { loadCheckpoint, readManifest, type CheckpointOptions, type LoadedCheckpoint } from '../../policies/checkpoint.js';
import { ExternalMemoryPolicy } from '../../policies/memory-policy.js';
import type { Protocol } from '../../protocol/schema.js';
import type { PolicyProvider, RunnerPolicy, SlotMemory, TaskContext } from './types.js';

function adapt(p: ExternalMemoryPolicy): RunnerPolicy {
  const memories: SlotMemory[] = [];
  for (let slot = 0; slot < p.maxBatch; slot++) {
    memories.push({
      target: null,
      beginScope: (scope) => p.bank(slot).reset(`${scope}/begin`),
      endScope: (scope) => p.bank(slot).reset(`${scope}/end`),
    });
  }
  return {
    maxBatch: p.maxBatch,
    resetSlot: (slot, info) => p.resetSlot(slot, info),
    inferBatch: (requests) => p.inferBatch(requests),
    setReadHook: (hook) => p.setReadHook(hook),
    slotMemory: (slot) => {
      const m = memories[slot];
      if (m === undefined) throw new ImepError('E_INTERNAL', `slot ${slot} outside [0, ${p.maxBatch})`);
      return m;
    },
  };
}

/**
 * Refuses a protocol whose memory the checkpoint's runtime cannot serve (before anything is written):
 * the lite runtime keeps episode-local banks only.
 */
export function assertCheckpointServes(protocol: Protocol, checkpointDir: string): void {
  const { manifest, manifestFile } = readManifest(checkpointDir);
  if (protocol.memory.bank !== 'episode-local' || manifest.bank.kind !== 'episode') {
    throw new ImepError('E_CHECKPOINT_MISMATCH', `the protocol's memory.bank is ${protocol.memory.bank}, but checkpoint ${manifest.name} runs a${manifest.bank.kind === 'episode' ? 'n episode-local' : ` ${manifest.bank.kind}`} bank`, {
      file: manifestFile,
      field: 'bank',
      hint: 'a structured-pcmb protocol needs a checkpoint with a structured-bank runtime (none ships yet)',
    });
  }
}

export async function checkpointPolicyProvider(checkpointDir: string, options: CheckpointOptions = {}): Promise<PolicyProvider> {
  const ckpt: LoadedCheckpoint = await loadCheckpoint(checkpointDir, options);
  return {
    description: `${ckpt.manifest.name} (${ckpt.report.backend}/${ckpt.report.ran}, episode bank k=${ckpt.manifest.bank.k})`,
    async policyFor(task: TaskContext, batchSize: number): Promise<RunnerPolicy> {
      const from = task.facts.decisionFromStep;
      return adapt(new ExternalMemoryPolicy(ckpt, { batchSize, decisionStep: (step) => step >= from }));
    },
    release: () => ckpt.release(),
  };
}
