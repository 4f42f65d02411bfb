/**
 * The external-memory policy runtime: a checkpoint's two graphs (encode, act) plus one episode-local bank per
 * batch slot, living in IMEP outside the graphs, so every read passes through the bank's read hook.
 *
 * Per step, for the active slots S (in request order; B = |S|) — see src/policies/README.md, "Per-step sequence":
 *   1. encode(observation fields of S, stacked) → queryKey[B,d], writeCandidate[B,d], carry tensors
 *   2. for each slot s in order: items = bank_s.query(queryKey[s])   — top-k by cosine over the writes of steps
 *      0..t−1 of this episode; the bank passes them through its read hook (the intervention point) and returns
 *      what the hook returns. memory[s, j] = items[j].leaves.feature (j < |items|), memoryMask[s, j] = 1;
 *      the remaining k − |items| rows are zeros with mask 0.
 *   3. act(observation fields, carry, memory[B,k,d], memoryMask[B,k]) → action, decisionLogits
 *   4. for each slot s: bank_s.write(t_s, writeCandidate[s]); t_s += 1   (read-before-write)
 * The hook can only change what the graph reads: keys, write candidates and the bank contents are untouched.
 *
 * The bank is the slot's SlotMemory (memory/): an EpisodeBank for an `episode` checkpoint (above), or for a
 * `structured-pcmb` checkpoint a StructuredBank with scopes and gated writes (memory/structured-slot-memory.ts).
 * This file uses only the SlotMemory interface; observation packing (and the input rows it lends) is
 * observation-packer.ts.
 */
import { EpisodeBank, StructuredBank, identityReadHook } from '../banks/index.js';
import type { ReadHook, RetrievedItem } from '../banks/index.js';
import { ImepError } from '../core/index.js';
import type {
  BatchPolicy,
  EpisodeInfo,
  LendsInputRows,
  MemoryReadable,
  Observation,
  PolicyOutput,
  PolicyReadouts,
  ReadReadout,
  SlotObservation,
} from '../runtime/index.js';
import type { HostTensor } from './backend.js';
import { elementCountOf } from './backend.js';
import type { LoadedCheckpoint } from './checkpoint.js';
import type { GraphName, InputContract, OutputContract } from './manifest.js';
import { slotMemoryFor, type EncodedRows, type Persistence, type SlotMemory } from './memory/index.js';
import { checkedOutput } from './graph-output.js';
import { MemoryInput, type FloatFeed } from './memory-input.js';
import { ObservationPacker } from './observation-packer.js';

export interface MemoryPolicyOptions {
  /** Most episodes stepped together (default 1). */
  readonly batchSize?: number;
  /** ReadContext.decisionStep of the read at elapsed step t (default: every step is a decision step). */
  readonly decisionStep?: (step: number) => boolean;
  /** Structured banks only: whether a scope's records survive resetSlot (default 'within-episode'). */
  readonly persistence?: Persistence;
}

export interface PolicyTimings {
  /** Graph-run wall time, nanoseconds, summed over calls. */
  readonly encodeNs: number;
  readonly actNs: number;
  /** inferBatch calls and slot-steps answered. */
  readonly calls: number;
  readonly slotSteps: number;
}

interface Slot {
  readonly memory: SlotMemory;
  info: EpisodeInfo | null;
  step: number;
}

/** A copy of row i (n values) of a row-major batch (a loop: `slice` without its cost on short rows). */
function rowOf(data: Float32Array, i: number, n: number): Float32Array {
  const out = new Float32Array(n);
  const off = i * n;
  for (let j = 0; j < n; j++) out[j] = data[off + j] as number;
  return out;
}

export class ExternalMemoryPolicy implements BatchPolicy, LendsInputRows, MemoryReadable {
  readonly maxBatch: number;
  private readonly slots: Slot[] = [];
  private hook: ReadHook = identityReadHook;
  private readonly decisionStep: (step: number) => boolean;
  private readonly k: number;
  private readonly d: number;
  private readonly encodeOut: {
    queryKey: OutputContract;
    writeCandidate: OutputContract;
    writeGate: OutputContract | undefined;
  };
  private readonly actOut: { action: OutputContract; decisionLogits: OutputContract | undefined };
  /** An action row's shape (the contract's after the batch axis) and element count; a logits row's element count. */
  private readonly actionRow: { readonly shape: readonly number[]; readonly per: number };
  private readonly logitsPer: number;
  private readonly packer: ObservationPacker;
  private readonly memoryInput: MemoryInput;
  private busy = false;
  private readonly whereEncode: string[] = [];
  private readonly whereAct: string[] = [];
  /** Duplicate-slot check without a Set: seenStamp[slot] === callStamp once the slot was seen in this call. */
  private readonly seenStamp: number[] = [];
  private callStamp = 0;
  /** Milliseconds awaiting the encode and act graphs (performance.now: doubles, no BigInt per call). */
  private encodeMs = 0;
  private actMs = 0;
  private calls = 0;
  private slotSteps = 0;

  constructor(
    readonly checkpoint: LoadedCheckpoint,
    options: MemoryPolicyOptions = {},
  ) {
    const batch = options.batchSize ?? 1;
    if (!Number.isInteger(batch) || batch < 1)
      throw new ImepError('E_USAGE', `batch size must be a positive integer, got ${batch}`, {
        field: 'runtime.batchSize',
      });
    this.maxBatch = batch;
    this.decisionStep = options.decisionStep ?? (() => true);
    const m = checkpoint.manifest;
    const outs = m.graphs.encode.outputs;
    const role = (list: readonly OutputContract[], r: string): OutputContract | undefined =>
      list.find((o) => o.role === r);
    this.encodeOut = {
      queryKey: role(outs, 'queryKey') as OutputContract,
      writeCandidate: role(outs, 'writeCandidate') as OutputContract,
      writeGate: role(outs, 'writeGate'),
    };
    this.actOut = {
      action: role(m.graphs.act.outputs, 'action') as OutputContract,
      decisionLogits: role(m.graphs.act.outputs, 'decisionLogits'),
    };
    const actionRest = Object.freeze(this.actOut.action.shape.slice(1) as number[]);
    this.actionRow = { shape: actionRest, per: elementCountOf(actionRest) };
    this.logitsPer =
      this.actOut.decisionLogits === undefined
        ? 0
        : elementCountOf(this.actOut.decisionLogits.shape.slice(1) as number[]);
    this.k = m.bank.k;
    this.d = this.encodeOut.writeCandidate.shape[1] as number;
    this.packer = new ObservationPacker(m, checkpoint.manifestFile);
    this.memoryInput = new MemoryInput(this.k, this.d, m.bank.leaf);
    const keyDim = this.encodeOut.queryKey.shape[1] as number;
    const persistence = options.persistence ?? 'within-episode';
    for (let s = 0; s < batch; s++)
      this.slots.push({ memory: slotMemoryFor(m.bank, persistence, keyDim, this.d), info: null, step: 0 });
  }

  /** Sets the read hook of every slot's bank (the intervention point). */
  setReadHook(hook: ReadHook): void {
    this.hook = hook;
    for (const s of this.slots) s.memory.setReadHook(hook);
  }

  get readHook(): ReadHook {
    return this.hook;
  }

  /** The episode bank of a slot (for inspection); refused for a structured-bank checkpoint. */
  bank(slot: number): EpisodeBank {
    const b = this.slotAt(slot).memory.bank;
    if (!(b instanceof EpisodeBank))
      throw new ImepError(
        'E_USAGE',
        `checkpoint ${this.checkpoint.manifest.name} runs a structured bank; use structuredBank(slot)`,
        { field: 'bank' },
      );
    return b;
  }

  /** The structured bank of a slot (the installation target of U/N/S/T); refused for an episode-bank checkpoint. */
  structuredBank(slot: number): StructuredBank {
    const b = this.slotAt(slot).memory.bank;
    if (!(b instanceof StructuredBank))
      throw new ImepError(
        'E_USAGE',
        `checkpoint ${this.checkpoint.manifest.name} runs an episode bank; use bank(slot)`,
        { field: 'bank' },
      );
    return b;
  }

  /** The scope the slot's next reads and writes belong to (structured banks), or null for an episode bank. */
  scopeOf(slot: number): string | null {
    return this.slotAt(slot).memory.scope();
  }

  /** Structured banks: empties the slot's bank and makes `scope` current (episode banks: empties the bank). */
  beginScope(slot: number, scope: string): void {
    this.slotAt(slot).memory.beginScope(scope);
  }

  /** Structured banks: forgets the scope (records and clock); episode banks: empties the bank. */
  endScope(slot: number, scope: string): void {
    this.slotAt(slot).memory.endScope(scope);
  }

  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    const s = this.slotAt(slot);
    s.memory.reset(info.episode);
    s.info = info;
    s.step = 0;
  }

  timings(): PolicyTimings {
    return {
      encodeNs: Math.round(this.encodeMs * 1e6),
      actNs: Math.round(this.actMs * 1e6),
      calls: this.calls,
      slotSteps: this.slotSteps,
    };
  }

  async inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    if (this.busy)
      throw new ImepError('E_USAGE', 'inferBatch called while the previous call is still running', {
        field: 'inferBatch',
        hint: 'await each call (lockstep)',
      });
    this.busy = true;
    try {
      return await this.step(requests);
    } finally {
      this.busy = false;
    }
  }

  /**
   * LendsInputRows.nextInputRow: row `row` of the buffer the next call of `batch` observations packs the uint8
   * observation field `field` into (the first graph input fed from that field). Null for a batch of one (fed without
   * packing) or a field that no uint8 observation input reads.
   */
  nextInputRow(field: string, batch: number, row: number): Uint8Array | null {
    if (batch < 2 || batch > this.maxBatch || !Number.isInteger(row) || row < 0 || row >= batch) return null;
    return this.packer.nextInputRow(field, batch, row, this.calls & 1);
  }

  async release(): Promise<void> {
    await this.checkpoint.release();
  }

  /** One call: encode, each slot's read, act, each slot's write, the answers (the module comment's steps 1–4). */
  private async step(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    const B = requests.length;
    if (B === 0) return [];
    const slots = this.slotsOf(requests);
    const obs = requests.map((r) => r.obs);
    // the graph runs are awaited here, the steps around them are plain calls (no promise of their own)
    const encFeeds = this.encodeFeeds(obs);
    let t0 = performance.now();
    const enc = await this.checkpoint.graphs.encode.run(encFeeds);
    this.encodeMs += performance.now() - t0;
    const rows = this.encodedRows(enc, B);
    const { memoryFeed, maskFeed, reads } = this.readBanks(slots, rows, B);
    const actFeeds = this.actFeeds(obs, enc, memoryFeed, maskFeed, B);
    t0 = performance.now();
    const act = await this.checkpoint.graphs.act.run(actFeeds);
    this.actMs += performance.now() - t0;
    const outputs = this.writeAndAnswer(slots, rows, act, reads);
    this.calls += 1;
    this.slotSteps += B;
    return outputs;
  }

  /** The requests' slots, checked: within the batch size, each once, each reset. */
  private slotsOf(requests: readonly SlotObservation[]): Slot[] {
    const B = requests.length;
    if (B > this.maxBatch)
      throw new ImepError('E_USAGE', `${B} observations in one batch, batch size is ${this.maxBatch}`, {
        field: 'runtime.batchSize',
      });
    const stamp = ++this.callStamp;
    const slots: Slot[] = new Array<Slot>(B);
    for (let i = 0; i < B; i++) {
      const r = requests[i] as SlotObservation;
      const s = this.slotAt(r.slot);
      if (this.seenStamp[r.slot] === stamp)
        throw new ImepError('E_USAGE', `slot ${r.slot} appears twice in one batch`, { field: 'slot' });
      this.seenStamp[r.slot] = stamp;
      if (s.info === null)
        throw new ImepError('E_USAGE', `slot ${r.slot} was not reset`, {
          field: 'slot',
          hint: 'call resetSlot(slot, episodeInfo) first',
        });
      slots[i] = s;
    }
    return slots;
  }

  /** 1. encode's feeds: its observation inputs packed. */
  private encodeFeeds(obs: readonly Observation[]): Record<string, HostTensor> {
    const encFeeds: Record<string, HostTensor> = {};
    const encInputs = this.checkpoint.manifest.graphs.encode.inputs;
    const parity = this.calls & 1;
    for (let i = 0; i < encInputs.length; i++) {
      const c = encInputs[i] as InputContract;
      encFeeds[c.name] = this.packer.observationTensor(c, obs, this.where('encode', i), parity);
    }
    return encFeeds;
  }

  /** encode's outputs, checked: the batch's query keys, write candidates (and gates). */
  private encodedRows(enc: Record<string, HostTensor>, B: number): EncodedRows {
    const qk = this.output(enc, this.encodeOut.queryKey, 'encode', B);
    const wc = this.output(enc, this.encodeOut.writeCandidate, 'encode', B);
    const gate =
      this.encodeOut.writeGate === undefined ? undefined : this.output(enc, this.encodeOut.writeGate, 'encode', B);
    return {
      queryKeys: qk.data as Float32Array,
      candidates: wc.data as Float32Array,
      gates: gate === undefined ? undefined : (gate.data as Float32Array),
    };
  }

  /** 2. each slot's bank read through its hook, in request order, into the memory input and its mask. */
  private readBanks(
    slots: readonly Slot[],
    rows: EncodedRows,
    B: number,
  ): { memoryFeed: FloatFeed; maskFeed: FloatFeed; reads: ReadReadout[] } {
    const { memoryFeed, maskFeed } = this.memoryInput.cleared(B);
    const reads: ReadReadout[] = [];
    for (let i = 0; i < B; i++) {
      const slot = slots[i] as Slot;
      const { items, ctx } = slot.memory.read(rows, i, this.decisionStep(slot.step));
      this.memoryInput.fill(memoryFeed, maskFeed, items, i, ctx.episode);
      const identities = new Array<RetrievedItem['identity']>(items.length);
      for (let j = 0; j < items.length; j++) identities[j] = (items[j] as RetrievedItem).identity;
      reads.push({ ctx, identities });
    }
    return { memoryFeed, maskFeed, reads };
  }

  /** 3. act's feeds: observation inputs, encode's carried outputs, the memory input and its mask. */
  private actFeeds(
    obs: readonly Observation[],
    enc: Record<string, HostTensor>,
    memoryFeed: FloatFeed,
    maskFeed: FloatFeed,
    B: number,
  ): Record<string, HostTensor> {
    const actFeeds: Record<string, HostTensor> = {};
    const actInputs = this.checkpoint.manifest.graphs.act.inputs;
    const parity = this.calls & 1;
    for (let i = 0; i < actInputs.length; i++) {
      const c = actInputs[i] as InputContract;
      switch (c.role) {
        case 'observation':
          actFeeds[c.name] = this.packer.observationTensor(c, obs, this.where('act', i), parity);
          break;
        case 'carry':
          actFeeds[c.name] = this.output(enc, c, 'encode', B);
          break;
        case 'memory':
          actFeeds[c.name] = memoryFeed;
          break;
        case 'memoryMask':
          actFeeds[c.name] = maskFeed;
          break;
      }
    }
    return actFeeds;
  }

  /** 4. act's outputs checked; each slot's write (read-before-write), its step advanced, and its answer. */
  private writeAndAnswer(
    slots: readonly Slot[],
    rows: EncodedRows,
    act: Record<string, HostTensor>,
    reads: readonly ReadReadout[],
  ): PolicyOutput[] {
    const B = slots.length;
    const action = this.output(act, this.actOut.action, 'act', B);
    const logits =
      this.actOut.decisionLogits === undefined ? undefined : this.output(act, this.actOut.decisionLogits, 'act', B);
    // The contract fixes every dimension after the batch (output() checked them), so the row shapes are the contract's.
    const actionShape = this.actionRow.shape;
    const per = this.actionRow.per;
    const c = this.logitsPer;
    const outputs: PolicyOutput[] = [];
    for (let i = 0; i < B; i++) {
      const slot = slots[i] as Slot;
      slot.memory.write(rows, i, slot.step);
      slot.step += 1;
      // A batch of one: the output array is this run's own (the backend hands over fresh arrays), so it is the row.
      const a = B === 1 ? (action.data as Float32Array) : rowOf(action.data as Float32Array, i, per);
      const readouts: PolicyReadouts =
        logits === undefined
          ? { reads: [reads[i] as ReadReadout] }
          : {
              decisionLogits: B === 1 ? (logits.data as Float32Array) : rowOf(logits.data as Float32Array, i, c),
              reads: [reads[i] as ReadReadout],
            };
      outputs.push({ action: { dtype: 'float32', shape: actionShape, data: a }, readouts });
    }
    return outputs;
  }

  /** `graphs.<graph>.inputs[i]`, built once (error locations and buffer names). */
  private where(graph: 'encode' | 'act', i: number): string {
    const list = graph === 'encode' ? this.whereEncode : this.whereAct;
    let w = list[i];
    if (w === undefined) list[i] = w = `graphs.${graph}.inputs[${i}]`;
    return w;
  }

  private slotAt(slot: number): Slot {
    const s = this.slots[slot];
    if (s === undefined || !Number.isInteger(slot))
      throw new ImepError('E_USAGE', `slot ${slot} outside [0, ${this.maxBatch})`, { field: 'slot' });
    return s;
  }

  /** Checks a graph output against its contract and the batch size. */
  private output(
    out: Record<string, HostTensor>,
    c: { name: string; shape: readonly (number | string)[] },
    graph: GraphName,
    B: number,
  ): HostTensor {
    return checkedOutput(out, c, graph, B, this.checkpoint.manifestFile);
  }
}

/** Loads nothing itself: builds the runtime over a loaded checkpoint. */
export function externalMemoryPolicy(
  checkpoint: LoadedCheckpoint,
  options: MemoryPolicyOptions = {},
): ExternalMemoryPolicy {
  return new ExternalMemoryPolicy(checkpoint, options);
}
