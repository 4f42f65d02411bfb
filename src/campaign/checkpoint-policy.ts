/**
 * The default policy provider: a checkpoint folder (model.json + graphs, src/policies) run by the
 * external-memory runtime (ExternalMemoryPolicy: graphs in ONNX Runtime / TF.js, one bank per batch slot
 * OUTSIDE the graphs, so every read passes the runner's hook). One runtime per task over one loaded
 * checkpoint; the task's decision-step rule (task-facts.ts) labels its reads.
 *
 * Episode-bank checkpoints: the bank is emptied at every episode start by the runtime (resetSlot);
 * beginScope/endScope empty it as well, so memory is empty at both ends of every scope. It is not an
 * installation target: protocols on episode-local banks register only read-time conditions
 * (src/protocol/cross-check.ts).
 *
 * Structured-bank checkpoints (bank.kind structured-pcmb): each slot's StructuredBank is the slot's
 * installation target (U install, N clear, S/T donor swaps act on its records); beginScope empties it and
 * makes the plan's scope current, endScope forgets the scope, and the protocol's memory.persistence says
 * whether the scope's records survive from attempt 1 into attempt 2 (across-attempts) or are emptied at
 * every attempt (within-episode).
 */
import { resolve } from 'node:path';
import { ImepError } from '../core/index.js';
import { loadCheckpoint, readManifest, verifyFiles } from '../policies/checkpoint.js';
import {
  type CheckpointManifest,
  type CheckpointOptions,
  type LoadedCheckpoint,
  ExternalMemoryPolicy,
  shapeText,
  verifyEnvContract,
} from '../policies/index.js';
import type { MemoryConfig, Protocol } from '../protocol/index.js';
import { taskEntries } from './plan-segments.js';
import type { PolicyProvider, RunnerPolicy, SlotMemory, SpecSource, TaskContext } from './types.js';

function adapt(p: ExternalMemoryPolicy, structured: boolean): RunnerPolicy {
  const memories: SlotMemory[] = [];
  for (let slot = 0; slot < p.maxBatch; slot++) {
    memories.push({
      target: structured ? p.structuredBank(slot) : null,
      beginScope: (scope) => p.beginScope(slot, scope),
      endScope: (scope) => p.endScope(slot, scope),
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
 * The protocol's memory.k against the records the act graph reads: its memory input [batch, k, d] and mask
 * [batch, k] (parseManifest has checked both against bank.k), refused naming the memory tensor and its shape.
 */
function assertMemoryK(manifest: CheckpointManifest, manifestFile: string, k: number): void {
  const inputs = manifest.graphs.act.inputs;
  const i = inputs.findIndex((t) => t.role === 'memory');
  const mem = inputs[i];
  if (mem === undefined || mem.shape[1] === k) return;
  const mask = inputs.find((t) => t.role === 'memoryMask');
  throw new ImepError(
    'E_CHECKPOINT_MISMATCH',
    `act input ${JSON.stringify(mem.name)} has shape ${shapeText(mem.shape)}${mask === undefined ? '' : ` (and ${JSON.stringify(mask.name)} ${shapeText(mask.shape)})`} but the protocol's memory.k is ${k} (expected ${shapeText([mem.shape[0] as string, k, ...mem.shape.slice(2)])})`,
    {
      file: manifestFile,
      field: `graphs.act.inputs[${i}].shape`,
      hint: `register memory.k: ${manifest.bank.k} in the protocol (checkpoint ${manifest.name} reads ${manifest.bank.k} records), or bind a checkpoint built for k = ${k}`,
    },
  );
}

/**
 * Refuses a protocol whose memory the checkpoint's runtime cannot serve (before anything is written): an
 * episode-local protocol needs an episode-bank checkpoint whose bank is one of memory.banks, with the same
 * consolidation; a structured-pcmb protocol needs a structured-pcmb checkpoint with the same capacity, gate (and
 * merge threshold, when the protocol registers one). Either way memory.k must be the k of the act graph's memory
 * input. (An episode-local protocol's capacity is not compared: the schema fills it in when it is left out, and the
 * checkpoint's bank.capacity is what runs.)
 */
export function assertCheckpointServes(protocol: Protocol, checkpointDir: string): void {
  const { manifest, manifestFile } = readManifest(checkpointDir);
  const mem = protocol.memory;
  const bank = manifest.bank;
  const runs = bank.kind === 'episode' ? 'an episode-local' : 'a structured-pcmb';
  if (mem.bank === 'history') {
    throw new ImepError(
      'E_CHECKPOINT_MISMATCH',
      `the protocol's memory.bank is history, but checkpoint ${manifest.name} runs ${runs} bank of its own`,
      {
        file: manifestFile,
        field: 'bank',
        hint: 'history memory is given to a policy served over a wire (policy.runtime: openpi-websocket or vla-eval); register the checkpoint’s own bank',
      },
    );
  }
  if (mem.bank === 'episode-local' && bank.kind !== 'episode') {
    throw new ImepError(
      'E_CHECKPOINT_MISMATCH',
      `the protocol's memory.bank is episode-local, but checkpoint ${manifest.name} runs ${runs} bank`,
      {
        file: manifestFile,
        field: 'bank',
        hint: 'bind an episode-bank checkpoint (e.g. checkpoints/lite-memvla), or register memory.bank: structured-pcmb',
      },
    );
  }
  if (mem.bank === 'episode-local' && bank.kind === 'episode') {
    if (!mem.banks.includes(bank.name as (typeof mem.banks)[number])) {
      throw new ImepError(
        'E_CHECKPOINT_MISMATCH',
        `checkpoint ${manifest.name} reads bank ${JSON.stringify(bank.name)}, but the protocol's memory.banks is [${mem.banks.join(', ')}]`,
        { file: manifestFile, field: 'bank.name', hint: `register memory.banks: [${bank.name}] in the protocol` },
      );
    }
    if (mem.consolidation !== bank.consolidation) {
      throw new ImepError(
        'E_CHECKPOINT_MISMATCH',
        `the protocol's memory.consolidation is ${mem.consolidation}, but checkpoint ${manifest.name} was built for bank.consolidation ${bank.consolidation}`,
        {
          file: manifestFile,
          field: 'bank.consolidation',
          hint: `register memory.consolidation: ${bank.consolidation} in the protocol`,
        },
      );
    }
  }
  if (mem.bank === 'structured-pcmb') {
    if (bank.kind !== 'structured-pcmb') {
      throw new ImepError(
        'E_CHECKPOINT_MISMATCH',
        `the protocol's memory.bank is structured-pcmb, but checkpoint ${manifest.name} runs ${runs} bank`,
        {
          file: manifestFile,
          field: 'bank',
          hint: 'bind a structured-bank checkpoint (e.g. checkpoints/lite-memvla-rc), or register memory.bank: episode-local',
        },
      );
    }
    const pairs: [string, number, number | undefined][] = [
      ['capacity', bank.capacity, mem.capacity],
      ['gate', bank.gate, mem.gate],
      ['mergeThreshold', bank.mergeThreshold, mem.mergeThreshold],
    ];
    for (const [field, has, wants] of pairs) {
      if (wants !== undefined && has !== wants) {
        throw new ImepError(
          'E_CHECKPOINT_MISMATCH',
          `the protocol's memory.${field} is ${wants}, but checkpoint ${manifest.name} was built for bank.${field} ${has}`,
          {
            file: manifestFile,
            field: `bank.${field}`,
            hint: `register memory.${field}: ${has} in the protocol, or bind a checkpoint built for ${wants}`,
          },
        );
      }
    }
  }
  assertMemoryK(manifest, manifestFile, mem.k);
}

/**
 * Refuses a checkpoint folder whose files are not those model.json lists (a SHA-256 or size that differs, a listed
 * file missing), from the files alone: the protocol binds model.json's hash, model.json binds every other file's.
 */
export function verifyCheckpointFiles(checkpointDir: string): void {
  const dir = resolve(checkpointDir);
  const { manifest, manifestFile } = readManifest(dir);
  verifyFiles(dir, manifest, manifestFile);
}

/**
 * Refuses a checkpoint whose observation inputs or action output the protocol's environments cannot feed or take
 * (src/policies/env-contract.ts), for every environment whose spec `specs` knows (the lite kind's, or what a bridged
 * server declared when the environment was made); an environment not known yet is not checked here.
 */
export function assertCheckpointFitsEnvironments(protocol: Protocol, checkpointDir: string, specs: SpecSource): void {
  const { manifest, manifestFile } = readManifest(checkpointDir);
  for (const entry of taskEntries(protocol).values()) {
    const spec = specs(entry);
    if (spec === undefined) continue;
    verifyEnvContract(manifest, manifestFile, {
      spec,
      allowlist: protocol.allowlists.methodVisible,
      label: entry.envId,
    });
  }
}

export interface CheckpointProviderOptions extends CheckpointOptions {
  /** The protocol's memory configuration (required for a structured-bank checkpoint: its persistence). */
  readonly memory?: MemoryConfig;
}

export async function checkpointPolicyProvider(
  checkpointDir: string,
  options: CheckpointProviderOptions = {},
): Promise<PolicyProvider> {
  const { memory, ...runtime } = options;
  const ckpt: LoadedCheckpoint = await loadCheckpoint(checkpointDir, runtime);
  const bank = ckpt.manifest.bank;
  const structured = bank.kind === 'structured-pcmb';
  if (structured && memory?.bank !== 'structured-pcmb') {
    await ckpt.release();
    throw new ImepError(
      'E_USAGE',
      `checkpoint ${ckpt.manifest.name} runs a structured-pcmb bank; its runtime needs the protocol's memory configuration (persistence)`,
      {
        file: ckpt.manifestFile,
        field: 'memory',
        hint: 'pass { memory: protocol.memory } to checkpointPolicyProvider',
      },
    );
  }
  const persistence = memory?.bank === 'structured-pcmb' ? memory.persistence : undefined;
  return {
    description: `${ckpt.manifest.name} (${ckpt.report.backend}/${ckpt.report.ran}, ${structured ? `structured bank k=${bank.k}, ${persistence}` : `episode bank k=${bank.k}`})`,
    async policyFor(task: TaskContext, batchSize: number): Promise<RunnerPolicy> {
      const from = task.facts.decisionFromStep;
      return adapt(
        new ExternalMemoryPolicy(ckpt, {
          batchSize,
          decisionStep: (step) => step >= from,
          ...(persistence === undefined ? {} : { persistence }),
        }),
        structured,
      );
    },
    release: () => ckpt.release(),
  };
}
