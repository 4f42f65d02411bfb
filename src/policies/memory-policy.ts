/**
 * The external-memory policy runtime: a checkpoint's two graphs (encode, act) plus one episode-local bank per
 * batch slot, living in IMEP outside the graphs, so every read passes through the bank's read hook.
 *
 * Per step, for the active slots S (in request order; B = |S|) — see README.md:
 *   1. encode(observation fields of S, stacked) → queryKey[B,d], writeCandidate[B,d], carry tensors
 *   2. for each slot s in order: items = bank_s.query(queryKey[s])   — top-k by cosine over the writes of steps
 *      0..t−1 of this episode; the bank passes them through its read hook (the intervention point) and returns
 *      what the hook returns. memory[s, j] = items[j].leaves.feature (j < |items|), memoryMask[s, j] = 1;
 *      the remaining k − |items| rows are zeros with mask 0.
 *   3. act(observation fields, carry, memory[B,k,d], memoryMask[B,k]) → action, decisionLogits
 *   4. for each slot s: bank_s.write(t_s, writeCandidate[s]); t_s += 1   (read-before-write)
 * The hook can only change what the graph reads: keys, write candidates and the bank contents are untouched.
 *
 * A checkpoint whose bank is `structured-pcmb` (manifest.ts) gets one StructuredBank per slot instead: step 2 queries
 * the slot's current scope with the step's queryKey as all three keys (cognitive, perceptual, state signature; the
 * selector's gate and top-k decide), feeding each item's `bank.leaf` payload field; step 4 writes a record (keys =
 * queryKey, payload `leaf` = writeCandidate, every other payload field a one-element zero) only when writeGate > 0.
 * Scopes: `beginScope(slot, scope)` empties the slot's bank and makes `scope` current until `endScope`; with
 * persistence 'across-attempts' the scope's records survive `resetSlot` (attempt 1's records reach attempt 2), with
 * 'within-episode' (the default) every `resetSlot` empties the scope. Without beginScope, each episode is its own scope.
 */
import {
  EpisodeBank,
  type EpisodeQueryOptions,
  PAYLOAD_FIELDS,
  type Payload,
  type PayloadField,
  StructuredBank,
  identityReadHook,
} from '../banks/index.js';
import type { ReadHook, RetrievedItem } from '../banks/index.js';
import { ImepError, sameShape, toFloat64, type FloatTensor } from '../core/index.js';
import type {
  NdArray,
  ObsValue,
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

export interface MemoryPolicyOptions {
  /** Most episodes stepped together (default 1). */
  readonly batchSize?: number;
  /** ReadContext.decisionStep of the read at elapsed step t (default: every step is a decision step). */
  readonly decisionStep?: (step: number) => boolean;
  /** Structured banks only: whether a scope's records survive resetSlot (default 'within-episode'). */
  readonly persistence?: 'within-episode' | 'across-attempts';
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
  /** The episode bank (episode checkpoints), or null. */
  readonly bank: EpisodeBank | null;
  /** The structured bank (structured-pcmb checkpoints), or null. */
  readonly structured: StructuredBank | null;
  /** Structured only: the scope set by beginScope, or null (then each episode is its own scope). */
  scope: string | null;
  info: EpisodeInfo | null;
  step: number;
}

const ZERO: Readonly<Float32Array> = new Float32Array(1);

/** Episode-bank read options: fillMemory copies each leaf into the memory input at once and writes none. */
const EPISODE_READ_DECISION: EpisodeQueryOptions = Object.freeze({ decisionStep: true, leafViews: true });
const EPISODE_READ_OTHER: EpisodeQueryOptions = Object.freeze({ decisionStep: false, leafViews: true });

/** Fills `out` with row i (out.length values) of a row-major batch and returns it: `slice` without its cost on short rows. */
function copyRow(out: Float32Array, data: Float32Array, i: number): Float32Array {
  const n = out.length;
  const off = i * n;
  for (let j = 0; j < n; j++) out[j] = data[off + j] as number;
  return out;
}

/** A copy of row i (n values) of a row-major batch. */
function rowOf(data: Float32Array, i: number, n: number): Float32Array {
  return copyRow(new Float32Array(n), data, i);
}

/** Fills the float32 tensor `t` with row i of a row-major batch and returns it. */
function copyRowInto(t: FloatTensor, data: Float32Array, i: number): FloatTensor {
  copyRow(t.data as Float32Array, data, i);
  return t;
}

/** Observation values of at most this many elements are packed even in a batch of one (observationTensor). */
const DIRECT_FEED_MIN = 64;

function isNdArray(v: ObsValue | NdArray | undefined): v is NdArray {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    'dtype' in v &&
    'shape' in v &&
    'data' in v &&
    ArrayBuffer.isView((v as NdArray).data)
  );
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
  private readonly persistence: 'within-episode' | 'across-attempts';
  private readonly keyDim: number;
  /** Shapes of the per-slot key and write-candidate views handed to episode banks (which copy what they keep). */
  private readonly keyShape: readonly number[];
  private readonly valueShape: readonly number[];
  /**
   * Episode banks only: the one key and the one write candidate handed to a bank, refilled for each slot (a copy of
   * its row). EpisodeBank.query reads the key and keeps nothing; EpisodeBank.write copies the value it stores.
   */
  private readonly keyScratch: FloatTensor;
  private readonly valueScratch: FloatTensor;
  private readonly actOut: { action: OutputContract; decisionLogits: OutputContract | undefined };
  /** An action row's shape (the contract's after the batch axis) and element count; a logits row's element count. */
  private readonly actionRow: { readonly shape: readonly number[]; readonly per: number };
  private readonly logitsPer: number;
  /**
   * Reused packing buffers of the observation inputs (a graph run never keeps them past its return): two per input
   * and batch size (index 2·B + parity), used by alternate calls (parity = calls mod 2), so a row handed out by
   * nextInputRow for the next call is never the row the current call's observations sit in.
   */
  private readonly buffers = new Map<InputContract, (Float32Array | Uint8Array | Int32Array | undefined)[]>();
  /** nextInputRow: the first uint8 observation input fed from each field asked for (null: none). */
  private readonly uint8Inputs = new Map<string, InputContract | null>();
  /** nextInputRow's views, by input, then 2·B + parity, then row (made once). */
  private readonly rowViews = new Map<InputContract, (Uint8Array[] | undefined)[]>();
  /** The memory input and its mask, by batch size. */
  private readonly memoryFeeds: ((HostTensor & { data: Float32Array }) | undefined)[] = [];
  private readonly maskFeeds: ((HostTensor & { data: Float32Array }) | undefined)[] = [];
  private readonly sampleShapes = new Map<InputContract, { readonly rest: readonly number[]; readonly per: number }>();
  private readonly batchShapes = new Map<InputContract, (readonly number[] | undefined)[]>();
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
    this.persistence = options.persistence ?? 'within-episode';
    this.keyDim = this.encodeOut.queryKey.shape[1] as number;
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
    this.keyShape = Object.freeze([this.keyDim]);
    this.valueShape = Object.freeze([this.d]);
    this.keyScratch = { dtype: 'float32', shape: this.keyShape, data: new Float32Array(this.keyDim) };
    this.valueScratch = { dtype: 'float32', shape: this.valueShape, data: new Float32Array(this.d) };
    const spec = m.bank;
    for (let s = 0; s < batch; s++) {
      if (spec.kind === 'episode') {
        this.slots.push({
          bank: new EpisodeBank({
            bank: spec.name,
            capacity: spec.capacity,
            k: spec.k,
            consolidation: spec.consolidation,
          }),
          structured: null,
          scope: null,
          info: null,
          step: 0,
        });
      } else {
        const structured = new StructuredBank({
          capacity: spec.capacity,
          k: spec.k,
          gate: spec.gate,
          weights: spec.weights,
          mergeThreshold: spec.mergeThreshold,
        });
        this.slots.push({ bank: null, structured, scope: null, info: null, step: 0 });
      }
    }
  }

  /** Sets the read hook of every slot's bank (the intervention point). */
  setReadHook(hook: ReadHook): void {
    this.hook = hook;
    for (const s of this.slots) (s.bank ?? (s.structured as StructuredBank)).setReadHook(hook);
  }

  get readHook(): ReadHook {
    return this.hook;
  }

  /** The episode bank of a slot (for inspection); refused for a structured-bank checkpoint. */
  bank(slot: number): EpisodeBank {
    const b = this.slotAt(slot).bank;
    if (b === null)
      throw new ImepError(
        'E_USAGE',
        `checkpoint ${this.checkpoint.manifest.name} runs a structured bank; use structuredBank(slot)`,
        { field: 'bank' },
      );
    return b;
  }

  /** The structured bank of a slot (the installation target of U/N/S/T); refused for an episode-bank checkpoint. */
  structuredBank(slot: number): StructuredBank {
    const b = this.slotAt(slot).structured;
    if (b === null)
      throw new ImepError(
        'E_USAGE',
        `checkpoint ${this.checkpoint.manifest.name} runs an episode bank; use bank(slot)`,
        { field: 'bank' },
      );
    return b;
  }

  /** The scope the slot's next reads and writes belong to (structured banks), or null for an episode bank. */
  scopeOf(slot: number): string | null {
    const s = this.slotAt(slot);
    return s.structured === null ? null : (s.scope ?? s.info?.episode ?? null);
  }

  /** Structured banks: empties the slot's bank and makes `scope` current (episode banks: empties the bank). */
  beginScope(slot: number, scope: string): void {
    const s = this.slotAt(slot);
    if (s.structured !== null) {
      s.structured.clearAll();
      s.scope = scope;
    } else (s.bank as EpisodeBank).reset(`${scope}/begin`);
  }

  /** Structured banks: forgets the scope (records and clock); episode banks: empties the bank. */
  endScope(slot: number, scope: string): void {
    const s = this.slotAt(slot);
    if (s.structured !== null) {
      s.structured.clearScope(scope, { keepClock: false });
      if (s.scope === scope) s.scope = null;
    } else (s.bank as EpisodeBank).reset(`${scope}/end`);
  }

  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    const s = this.slotAt(slot);
    if (s.structured !== null) {
      if (s.scope === null) s.structured.clearAll();
      else if (this.persistence === 'within-episode') s.structured.clearScope(s.scope, { keepClock: false });
    } else (s.bank as EpisodeBank).reset(info.episode);
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

  private async step(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    const B = requests.length;
    if (B === 0) return [];
    if (B > this.maxBatch)
      throw new ImepError('E_USAGE', `${B} observations in one batch, batch size is ${this.maxBatch}`, {
        field: 'runtime.batchSize',
      });
    const stamp = ++this.callStamp;
    const slots: Slot[] = new Array<Slot>(B);
    const obs: Observation[] = new Array<Observation>(B);
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
      obs[i] = r.obs;
    }
    const m = this.checkpoint.manifest;

    // 1. encode
    const encFeeds: Record<string, HostTensor> = {};
    const encInputs = m.graphs.encode.inputs;
    for (let i = 0; i < encInputs.length; i++) {
      const c = encInputs[i] as InputContract;
      encFeeds[c.name] = this.observationTensor(c, obs, this.where('encode', i));
    }
    let t0 = performance.now();
    const enc = await this.checkpoint.graphs.encode.run(encFeeds);
    this.encodeMs += performance.now() - t0;
    const qk = this.output(enc, this.encodeOut.queryKey, 'encode', B);
    const wc = this.output(enc, this.encodeOut.writeCandidate, 'encode', B);
    const gate =
      this.encodeOut.writeGate === undefined ? undefined : this.output(enc, this.encodeOut.writeGate, 'encode', B);
    const kd = this.keyDim;

    // 2. read each slot's bank through its hook
    const k = this.k,
      d = this.d;
    let memoryFeed = this.memoryFeeds[B];
    if (memoryFeed === undefined)
      this.memoryFeeds[B] = memoryFeed = {
        dtype: 'float32',
        shape: Object.freeze([B, k, d]),
        data: new Float32Array(B * k * d),
      };
    let maskFeed = this.maskFeeds[B];
    if (maskFeed === undefined)
      this.maskFeeds[B] = maskFeed = { dtype: 'float32', shape: Object.freeze([B, k]), data: new Float32Array(B * k) };
    const memory = memoryFeed.data,
      mask = maskFeed.data;
    memory.fill(0);
    mask.fill(0);
    const reads: ReadReadout[] = [];
    for (let i = 0; i < B; i++) {
      const slot = slots[i] as Slot;
      // The episode bank's query reads the key and keeps nothing: it gets the reused scratch key; structured banks a copy.
      const key: FloatTensor =
        slot.structured !== null
          ? { dtype: 'float32', shape: [kd], data: (qk.data as Float32Array).slice(i * kd, (i + 1) * kd) }
          : copyRowInto(this.keyScratch, qk.data as Float32Array, i);
      const decisionStep = this.decisionStep(slot.step);
      const { items, ctx } =
        slot.structured !== null
          ? slot.structured.query(
              this.scopeOf(requests[i]?.slot as number) as string,
              { cognitiveKey: key, perceptualKey: key, stateSignature: key },
              { episode: (slot.info as EpisodeInfo).episode, decisionStep },
            )
          : (slot.bank as EpisodeBank).query(key, decisionStep ? EPISODE_READ_DECISION : EPISODE_READ_OTHER);
      this.fillMemory(items, memory, mask, i, ctx.episode);
      const identities = new Array<RetrievedItem['identity']>(items.length);
      for (let j = 0; j < items.length; j++) identities[j] = (items[j] as RetrievedItem).identity;
      reads.push({ ctx, identities });
    }

    // 3. act
    const actFeeds: Record<string, HostTensor> = {};
    const actInputs = m.graphs.act.inputs;
    for (let i = 0; i < actInputs.length; i++) {
      const c = actInputs[i] as InputContract;
      const where = this.where('act', i);
      switch (c.role) {
        case 'observation':
          actFeeds[c.name] = this.observationTensor(c, obs, where);
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
    t0 = performance.now();
    const act = await this.checkpoint.graphs.act.run(actFeeds);
    this.actMs += performance.now() - t0;
    const action = this.output(act, this.actOut.action, 'act', B);
    const logits =
      this.actOut.decisionLogits === undefined ? undefined : this.output(act, this.actOut.decisionLogits, 'act', B);

    // 4. write, advance, answer
    // The contract fixes every dimension after the batch (output() checked them), so the row shapes are the contract's.
    const actionShape = this.actionRow.shape;
    const per = this.actionRow.per;
    const c = this.logitsPer;
    const outputs: PolicyOutput[] = [];
    for (let i = 0; i < B; i++) {
      const slot = slots[i] as Slot;
      // The episode bank copies what it stores, so it gets the reused scratch value; structured payloads get a copy.
      const value: FloatTensor =
        slot.structured !== null
          ? { dtype: 'float32', shape: [d], data: (wc.data as Float32Array).slice(i * d, (i + 1) * d) }
          : copyRowInto(this.valueScratch, wc.data as Float32Array, i);
      if (slot.structured !== null) {
        if ((((gate as HostTensor).data as Float32Array)[i] as number) > 0) {
          const key: FloatTensor = {
            dtype: 'float32',
            shape: [kd],
            data: (qk.data as Float32Array).slice(i * kd, (i + 1) * kd),
          };
          slot.structured.write(this.scopeOf(requests[i]?.slot as number) as string, {
            keys: { cognitiveKey: key, perceptualKey: key, stateSignature: key },
            payload: this.payloadOf(value),
            sourceEpisode: (slot.info as EpisodeInfo).episode,
          });
        }
      } else (slot.bank as EpisodeBank).write(slot.step, value);
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
    this.calls += 1;
    this.slotSteps += B;
    return outputs;
  }

  async release(): Promise<void> {
    await this.checkpoint.release();
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
    const t = out[c.name];
    const file = this.checkpoint.manifestFile;
    if (t === undefined)
      throw new ImepError('E_CHECKPOINT_MISMATCH', `the ${graph} graph returned no ${c.name}`, {
        file,
        field: `graphs.${graph}.outputs`,
      });
    let ok = t.shape.length === c.shape.length && t.shape[0] === B;
    for (let j = 1; ok && j < c.shape.length; j++) ok = c.shape[j] === t.shape[j];
    if (!ok || !(t.data instanceof Float32Array)) {
      throw new ImepError(
        'E_CHECKPOINT_MISMATCH',
        `the ${graph} graph returned ${c.name} as ${t.dtype}[${t.shape.join(', ')}] for a batch of ${B}, contract says float32[${c.shape.join(', ')}]`,
        { file, field: `graphs.${graph}.outputs` },
      );
    }
    return t;
  }

  /** Per-sample shape and element count of an observation input (the contract's shape without the batch axis). */
  private sampleShape(c: InputContract): { readonly rest: readonly number[]; readonly per: number } {
    let r = this.sampleShapes.get(c);
    if (r === undefined) {
      const rest = Object.freeze(c.shape.slice(1) as number[]);
      r = { rest, per: elementCountOf(rest) };
      this.sampleShapes.set(c, r);
    }
    return r;
  }

  /**
   * Stacks one observation field over the batch in the input's declared dtype. A batch of one whose value already
   * is an array of that dtype and shape is fed as it is (a view, no copy): the graph only reads its inputs.
   */
  private observationTensor(c: InputContract, obs: readonly Observation[], where: string): HostTensor {
    const field = c.field as string;
    const { rest, per } = this.sampleShape(c);
    const B = obs.length;
    if (c.dtype === 'string') {
      const data = obs.map((o) => {
        const v = o[field];
        if (typeof v !== 'string') throw this.badObservation(field, where, `expected a string, got ${typeof v}`);
        return v;
      });
      return { dtype: 'string', shape: [B], data };
    }
    if (c.dtype !== 'float32' && c.dtype !== 'uint8' && c.dtype !== 'int32') {
      throw this.badObservation(
        field,
        where,
        `observation inputs of dtype ${c.dtype} are not supported (float32, uint8, int32, string)`,
      );
    }
    const shape = this.batchShape(c, B);
    // A batch of one is fed its value as it is when that is an array of the input's dtype and shape — unless it is
    // small: such a value (e.g. a fresh 2-element pose each step) is copied into the input's packing buffer, whose
    // ort.Tensor the backend keeps, which costs less than a new ort.Tensor around a new array on every run.
    if (B === 1 && per > DIRECT_FEED_MIN) {
      const direct = this.sameDtypeValues(c.dtype, (obs[0] as Observation)[field], rest, per);
      if (direct !== null) return { dtype: c.dtype, shape, data: direct };
    }
    const out = this.inputBuffer(c, B, per);
    for (let i = 0; i < B; i++) {
      const v = (obs[i] as Observation)[field];
      let data: ArrayLike<number | bigint>;
      let srcDtype: string;
      if (isNdArray(v)) {
        if (!sameShape(v.shape, rest))
          throw this.badObservation(
            field,
            where,
            `shape [${v.shape.join(', ')}], the graph input needs [${rest.join(', ')}]`,
          );
        data = v.data as ArrayLike<number | bigint>;
        srcDtype = v.dtype;
      } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
        data = v as unknown as ArrayLike<number | bigint>;
        srcDtype = v.constructor.name;
        if (data.length !== per)
          throw this.badObservation(
            field,
            where,
            `${data.length} values, the graph input needs ${per} ([${rest.join(', ')}])`,
          );
      } else if (typeof v === 'number' && per === 1) {
        data = [v];
        srcDtype = 'number';
      } else {
        throw this.badObservation(
          field,
          where,
          v === undefined ? 'missing from the observation' : `not an array (${typeof v})`,
        );
      }
      if (c.dtype === 'uint8' && !(data instanceof Uint8Array))
        throw this.badObservation(field, where, `is ${srcDtype}, the graph input needs uint8`);
      if (data.length !== per)
        throw this.badObservation(field, where, `${data.length} values, the graph input needs ${per}`);
      if (typeof data[0] === 'bigint')
        throw this.badObservation(field, where, '64-bit integer observations are not supported');
      // Already in place (drawn into the view nextInputRow handed out): nothing to copy.
      if (data instanceof Uint8Array && data.buffer === out.buffer && data.byteOffset === out.byteOffset + i * per)
        continue;
      out.set(data as ArrayLike<number>, i * per);
    }
    return { dtype: c.dtype, shape, data: out };
  }

  /** The value's own typed array when it is an array of exactly the input's dtype and sample shape, else null. */
  private sameDtypeValues(
    dtype: 'float32' | 'uint8' | 'int32',
    v: ObsValue | NdArray | undefined,
    rest: readonly number[],
    per: number,
  ): Float32Array | Uint8Array | Int32Array | null {
    let data: unknown;
    if (isNdArray(v)) {
      if (v.dtype !== dtype || !sameShape(v.shape, rest)) return null;
      data = v.data;
    } else data = v;
    const ok =
      dtype === 'uint8'
        ? data instanceof Uint8Array
        : dtype === 'float32'
          ? data instanceof Float32Array
          : data instanceof Int32Array;
    return ok && (data as ArrayLike<number>).length === per ? (data as Float32Array | Uint8Array | Int32Array) : null;
  }

  /** [B, ...sample shape] of an input, built once per input and batch size. */
  private batchShape(c: InputContract, B: number): readonly number[] {
    let byB = this.batchShapes.get(c);
    if (byB === undefined) this.batchShapes.set(c, (byB = []));
    let shape = byB[B];
    if (shape === undefined) byB[B] = shape = Object.freeze([B, ...this.sampleShape(c).rest]);
    return shape;
  }

  /** The packing buffer of an observation input for a batch of B for call parity `parity` (default: this call's). */
  private inputBuffer(
    c: InputContract,
    B: number,
    per: number,
    parity = this.calls & 1,
  ): Float32Array | Uint8Array | Int32Array {
    let byB = this.buffers.get(c);
    if (byB === undefined) this.buffers.set(c, (byB = []));
    const at = 2 * B + parity;
    let b = byB[at];
    if (b === undefined) {
      const length = B * per;
      byB[at] = b =
        c.dtype === 'float32'
          ? new Float32Array(length)
          : c.dtype === 'uint8'
            ? new Uint8Array(length)
            : new Int32Array(length);
    }
    return b;
  }

  /**
   * LendsInputRows.nextInputRow: row `row` of the buffer the next call of `batch` observations packs the uint8 observation
   * field `field` into (the first graph input fed from that field). Null for a batch of one (fed without packing)
   * or a field that no uint8 observation input reads.
   */
  nextInputRow(field: string, batch: number, row: number): Uint8Array | null {
    if (batch < 2 || batch > this.maxBatch || !Number.isInteger(row) || row < 0 || row >= batch) return null;
    let c = this.uint8Inputs.get(field);
    if (c === undefined) {
      const m = this.checkpoint.manifest;
      c = null;
      for (const g of [m.graphs.encode.inputs, m.graphs.act.inputs]) {
        for (const x of g)
          if (c === null && x.role === 'observation' && x.field === field && x.dtype === 'uint8') c = x;
      }
      this.uint8Inputs.set(field, c);
    }
    if (c === null) return null;
    const parity = this.calls & 1;
    let byB = this.rowViews.get(c);
    if (byB === undefined) this.rowViews.set(c, (byB = []));
    const at = 2 * batch + parity;
    let rows = byB[at];
    if (rows === undefined) {
      const { per } = this.sampleShape(c);
      const buf = this.inputBuffer(c, batch, per, parity) as Uint8Array;
      byB[at] = rows = Array.from({ length: batch }, (_, r) => buf.subarray(r * per, (r + 1) * per));
    }
    return rows[row] as Uint8Array;
  }

  private badObservation(field: string, where: string, message: string): ImepError {
    return new ImepError('E_CHECKPOINT_MISMATCH', `observation field ${JSON.stringify(field)}: ${message}`, {
      file: this.checkpoint.manifestFile,
      field: `${where}.field`,
      hint: 'the environment does not give what this checkpoint was built for',
    });
  }

  /** A structured record's payload: the leaf field carries the write candidate, the others a one-element zero. */
  private payloadOf(value: FloatTensor): Payload {
    const leaf = this.checkpoint.manifest.bank.leaf as PayloadField;
    const out = {} as Record<PayloadField, FloatTensor>;
    for (const f of PAYLOAD_FIELDS) out[f] = f === leaf ? value : { dtype: 'float32', shape: [1], data: ZERO };
    return out;
  }

  private fillMemory(
    items: readonly RetrievedItem[],
    memory: Float32Array,
    mask: Float32Array,
    row: number,
    episode: string,
  ): void {
    const k = this.k,
      d = this.d;
    const leafName = this.checkpoint.manifest.bank.leaf;
    if (items.length > k) {
      throw new ImepError(
        'E_INTERVENTION_INVALID',
        `read of episode ${episode}: the read hook returned ${items.length} items, the memory input holds k=${k}`,
        { field: 'readHook' },
      );
    }
    for (let j = 0; j < items.length; j++) {
      const leaf = (items[j] as RetrievedItem).leaves[leafName];
      if (leaf === undefined || leaf.data.length !== d) {
        throw new ImepError(
          'E_INTERVENTION_INVALID',
          `read of episode ${episode}: item ${j} has ${leaf === undefined ? `no ${leafName} leaf` : `a ${leafName} of ${leaf.data.length} values`}, the memory input needs ${d}`,
          { field: 'readHook' },
        );
      }
      const off = (row * k + j) * d;
      if (leaf.dtype === 'float32') memory.set(leaf.data, off);
      else memory.set(toFloat64(leaf), off);
      mask[row * k + j] = 1;
    }
  }
}

/** Loads nothing itself: builds the runtime over a loaded checkpoint. */
export function externalMemoryPolicy(
  checkpoint: LoadedCheckpoint,
  options: MemoryPolicyOptions = {},
): ExternalMemoryPolicy {
  return new ExternalMemoryPolicy(checkpoint, options);
}
