/**
 * History memory owned by IMEP (`memory: { bank: history, window, stride, keys, pad }`, docs/protocol.md "memory"):
 * the episode's own observations are the bank, and each call is given the window of them as `history/<field>`
 * [window, ...fieldShape] (oldest first, the current step last) and `history/mask` float32 [window] (1 = a record,
 * 0 = padding).
 *
 * Records. `beginCall` records the call step's observation keys (one record per call step, identity { slot: 0,
 * scope: episode, sourceEpisode: episode, timestep: the elapsed step, version: 0 }, one leaf per key: a float field in
 * its own dtype, any other number as float32). The window's positions are the steps s − (window − 1)·stride … s.
 *
 * One read per call, through the installed hook: its items are the window's PAST records (timestep < s), oldest
 * first; ReadContext { bank: 'history', scope = episode = the runner's episode id, queryIndex: s + 1 (the read at
 * elapsed step s, as the in-process runtime counts), decisionStep: the call's (ServerCall.decision), candidateCount:
 * the items offered }. The current step is the present, not memory: it is always given, whatever the hook returns.
 *
 * Assembly from what the hook RETURNS: each item fills the position of its timestep (an item that is not one of the
 * offered records — a donor's record at the same timestep — fills that timestep's position); a position nothing
 * fills is padding, mask 0: `pad: first` repeats the oldest filled position (the current step at worst), `zeros` is
 * all zeros. So a blocked read (N: the hook returns nothing) is exactly what the policy sees at step 0, in the same
 * shape. An item at a timestep the window has no past position for, or whose leaves differ in name, dtype or shape
 * from the step's own, is refused (E_INTERVENTION_INVALID): the policy is never given something other than what the
 * hook returned.
 */
import type { ReadContext, ReadHook, RecordIdentity, RetrievedItem } from '../../banks/index.js';
import { identityReadHook } from '../../banks/index.js';
import { cloneTensor, ImepError, type FloatTensor } from '../../core/index.js';
import type { NdArray, ObsValue, Observation, ReadReadout } from '../../runtime/index.js';
import { isNdArray } from '../../runtime/index.js';
import type { ServerCall, ServerMemory } from './server-memory.js';
import type { WireMap } from './session.js';

export interface HistoryConfig {
  readonly window: number;
  readonly stride: number;
  readonly keys: readonly string[];
  readonly pad: 'first' | 'zeros';
}

/** The bank name of every history read (ReadContext.bank). */
export const HISTORY_BANK = 'history';
/** The observation entry of the window's mask. */
export const HISTORY_MASK_KEY = 'history/mask';
export const historyKey = (field: string): string => `history/${field}`;

type Leaves = Readonly<Record<string, FloatTensor>>;

interface SlotState {
  readonly episode: string;
  readonly records: Map<number, Leaves>;
  reads: ReadReadout[];
}

/** A typed array's dtype name (numpy's). */
function typedDtype(data: ArrayBufferView): string {
  const name = data.constructor.name.replace(/Array$/, '').toLowerCase();
  return name === 'float32' || name === 'float64' ? name : name.replace('big', '');
}

/** An observation value as a float tensor (float32 / float64 kept, any other number as float32), or null. */
export function obsTensor(value: ObsValue | NdArray | undefined): FloatTensor | null {
  if (typeof value === 'number' || typeof value === 'boolean')
    return { dtype: 'float32', shape: [], data: Float32Array.of(Number(value)) };
  if (value === undefined || value === null || typeof value === 'string') return null;
  let dtype: string;
  let shape: readonly number[];
  let data: ArrayLike<number | bigint>;
  if (isNdArray(value)) {
    ({ dtype, shape } = value);
    data = value.data as ArrayLike<number | bigint>;
  } else if (ArrayBuffer.isView(value)) {
    dtype = typedDtype(value);
    shape = [(value as unknown as ArrayLike<number>).length];
    data = value as unknown as ArrayLike<number | bigint>;
  } else if (Array.isArray(value) && value.every((v) => typeof v === 'number')) {
    dtype = 'float64-list';
    shape = [value.length];
    data = value as readonly number[];
  } else return null;
  if (dtype === 'float32' && data instanceof Float32Array)
    return { dtype, shape: [...shape], data: new Float32Array(data) };
  if (dtype === 'float64' && data instanceof Float64Array)
    return { dtype, shape: [...shape], data: new Float64Array(data) };
  if (dtype === 'float16' || dtype === 'bfloat16') {
    if (data instanceof Uint16Array) return { dtype, shape: [...shape], data: new Uint16Array(data) };
    return null;
  }
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = Number(data[i]);
  return { dtype: 'float32', shape: [...shape], data: out };
}

function sameLayout(a: FloatTensor, b: FloatTensor): boolean {
  return a.dtype === b.dtype && a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i]);
}

function zerosLike(t: FloatTensor): FloatTensor {
  const n = t.data.length;
  const data =
    t.dtype === 'float32' ? new Float32Array(n) : t.dtype === 'float64' ? new Float64Array(n) : new Uint16Array(n);
  return { dtype: t.dtype, shape: [...t.shape], data } as FloatTensor;
}

/** [window, ...shape] from one tensor per position (all of one layout). */
function stack(parts: readonly FloatTensor[]): NdArray {
  const first = parts[0] as FloatTensor;
  const n = first.data.length;
  const total = n * parts.length;
  const data =
    first.dtype === 'float32'
      ? new Float32Array(total)
      : first.dtype === 'float64'
        ? new Float64Array(total)
        : new Uint16Array(total);
  parts.forEach((p, i) => (data as Float32Array).set(p.data as unknown as ArrayLike<number>, i * n));
  return { dtype: first.dtype, shape: [parts.length, ...first.shape], data };
}

export class HistoryMemory implements ServerMemory {
  readonly name: string;
  readonly config: HistoryConfig;
  readonly #slots: (SlotState | undefined)[];
  #hook: ReadHook = identityReadHook;

  constructor(config: HistoryConfig, maxBatch: number) {
    if (!Number.isInteger(config.window) || config.window < 1 || !Number.isInteger(config.stride) || config.stride < 1)
      throw new ImepError('E_USAGE', `history memory: window and stride must be integers ≥ 1`, { field: 'memory' });
    this.config = config;
    this.name = `history window ${config.window}, stride ${config.stride} over [${config.keys.join(', ')}] (pad ${config.pad})`;
    this.#slots = new Array<SlotState | undefined>(maxBatch).fill(undefined);
  }

  setReadHook(hook: ReadHook): void {
    this.#hook = hook;
  }

  resetSlot(slot: number, episode: string): void {
    this.#slots[slot] = { episode, records: new Map(), reads: [] };
  }

  /** The step's leaves, one per key (a key missing or not numeric is refused, naming it). */
  #leavesOf(obs: Observation, step: number): Leaves {
    const leaves: Record<string, FloatTensor> = {};
    for (const key of this.config.keys) {
      const t = obsTensor(obs[key]);
      if (t === null)
        throw new ImepError(
          'E_PROTOCOL_INVALID',
          `history memory: the observation at step ${step} has ${obs[key] === undefined ? 'no field' : 'no numeric field'} ${JSON.stringify(key)}`,
          { field: 'memory.keys', hint: 'list method-visible numeric fields the environment sends in memory.keys' },
        );
      leaves[key] = t;
    }
    return leaves;
  }

  async beginCall(call: ServerCall): Promise<WireMap> {
    const st = this.#slots[call.slot];
    if (st === undefined) throw new ImepError('E_INTERNAL', `history memory: slot ${call.slot} was not reset`);
    const { window, stride, keys, pad } = this.config;
    const current = this.#leavesOf(call.obs, call.step);
    st.records.set(call.step, current);
    const positions: number[] = [];
    for (let j = window - 1; j >= 0; j--) positions.push(call.step - j * stride);
    const items: RetrievedItem[] = [];
    for (const t of positions.slice(0, -1)) {
      const rec = t >= 0 ? st.records.get(t) : undefined;
      if (rec === undefined) continue;
      const leaves: Record<string, FloatTensor> = {};
      for (const k of keys) leaves[k] = cloneTensor(rec[k] as FloatTensor);
      const identity: RecordIdentity = {
        slot: 0,
        scope: st.episode,
        sourceEpisode: st.episode,
        timestep: t,
        version: 0,
      };
      items.push({ identity, leaves });
    }
    const ctx: ReadContext = {
      bank: HISTORY_BANK,
      scope: st.episode,
      episode: st.episode,
      queryIndex: call.step + 1,
      decisionStep: call.decision,
      candidateCount: items.length,
    };
    const out = this.#hook(items, ctx);
    st.reads.push({ ctx, identities: out.map((it) => it.identity) });
    // place what the hook returned by timestep; the current step always last
    const filled: (Leaves | undefined)[] = positions.map(() => undefined);
    filled[window - 1] = current;
    for (const it of out) {
      const at = positions.indexOf(it.identity.timestep);
      if (at < 0 || at === window - 1 || it.identity.timestep < 0)
        throw new ImepError(
          'E_INTERVENTION_INVALID',
          `history memory: the read hook returned a record at timestep ${it.identity.timestep}, which is no past position of the window at step ${call.step} (${positions.slice(0, -1).join(', ')})`,
          { field: 'memory' },
        );
      for (const k of keys) {
        const leaf = it.leaves[k];
        if (leaf === undefined || !sameLayout(leaf, current[k] as FloatTensor))
          throw new ImepError(
            'E_INTERVENTION_INVALID',
            `history memory: the read hook returned a record at timestep ${it.identity.timestep} whose leaf ${JSON.stringify(k)} ${leaf === undefined ? 'is missing' : `is ${leaf.dtype} [${leaf.shape.join(', ')}]`}`,
            { field: 'memory.keys' },
          );
      }
      filled[at] = it.leaves;
    }
    const oldest = filled.find((f) => f !== undefined) as Leaves;
    const extras: Record<string, NdArray> = {};
    for (const k of keys) {
      const parts = filled.map((f) => {
        if (f !== undefined) return f[k] as FloatTensor;
        return pad === 'first' ? (oldest[k] as FloatTensor) : zerosLike(current[k] as FloatTensor);
      });
      extras[historyKey(k)] = stack(parts);
    }
    extras[HISTORY_MASK_KEY] = {
      dtype: 'float32',
      shape: [window],
      data: Float32Array.from(filled, (f) => (f === undefined ? 0 : 1)),
    };
    return extras;
  }

  endCall(slot: number): readonly ReadReadout[] {
    const st = this.#slots[slot];
    if (st === undefined) return [];
    const reads = st.reads;
    st.reads = [];
    return reads;
  }

  async close(): Promise<void> {
    this.#slots.fill(undefined);
  }
}
