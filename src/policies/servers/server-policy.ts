/**
 * ServerPolicy: a policy served by a server IMEP did not write (openpi's WebsocketPolicyServer, a vla-eval model
 * server), behind the same BatchPolicy + MemoryReadable contract as the in-process runtimes: one ServerSession per
 * batch slot (a server may keep per-connection state), one ServerMemory for all slots (history memory owned by IMEP,
 * or a server-side bank reached through the hook).
 *
 * Episodes. `resetSlot` resets the slot's memory and starts the session's episode with the instruction and the
 * environment id only — never the seed, task, attempt or the plan's episode id. A slot's previous episode is ended
 * first (EPISODE_END) with `success: false`: the outcome is evaluator-only and never reaches a server.
 *
 * Calls and chunks (open loop, as openpi_client's ActionChunkBroker): at a call step the observation is built from
 * the protocol's mapping (server key ← method-visible field, `history/<field>` from the memory, `$instruction`;
 * ndarrays sent as they are, typed arrays as ndarrays, numbers as numbers) plus what memory.beginCall adds, the
 * session answers, and `reply[action.key]` — shape [A] or [H, A], H ≥ execute — gives the actions of this step and
 * of the next execute − 1 steps, which make no call. The action is converted to float32 (round to nearest, as numpy's
 * astype) and its dimension A must be the environment's. Readouts: the call's reads (memory.endCall) on a call step,
 * none on the steps its chunk covers.
 *
 * Decision attribution: a call's read is a decision query iff a step its chunk covers, [step, step + execute), is a
 * decision step of the environment (elapsed step ≥ decisionFromStep): the call decides every step it covers.
 *
 * Every failure is an ImepError naming the endpoint (the episode loop records it as an execution failure): the
 * session's own (E_BRIDGE_PROTOCOL / _TIMEOUT / _REMOTE) pass as they are, anything else is E_BRIDGE_REMOTE.
 */
import type { ReadHook } from '../../banks/index.js';
import { ImepError, isImepError } from '../../core/index.js';
import type {
  BatchPolicy,
  EpisodeInfo,
  MemoryReadable,
  NdArray,
  ObsValue,
  Observation,
  PolicyOutput,
  SlotObservation,
} from '../../runtime/index.js';
import { isNdArray } from '../../runtime/index.js';
import type { ServerMemory } from './server-memory.js';
import type { ServerSession, WireMap, WireValue } from './session.js';

/** The `$` name of the task's instruction in an observation mapping. */
export const INSTRUCTION_SOURCE = '$instruction';

export interface ServerPolicyOptions {
  /** The endpoint as the protocol writes it (named in every error). */
  readonly endpoint: string;
  /** One session per slot (maxBatch = their number). */
  readonly sessions: readonly ServerSession[];
  readonly memory: ServerMemory;
  /** server key ← method-visible field, `history/<field>` or `$instruction`. */
  readonly observation: Readonly<Record<string, string>>;
  readonly action: { readonly key: string; readonly execute: number };
  /** The environment's id (vla-eval's EPISODE_START) and declared instruction. */
  readonly envId: string;
  readonly instruction?: string;
  /** The environment's action dimension A, when its spec is known (else the first reply's is kept). */
  readonly actionDim?: number;
  /** Elapsed steps from which steps are decision steps (TaskFacts.decisionFromStep). */
  readonly decisionFromStep: number;
}

interface SlotState {
  step: number;
  /** Rows of the current chunk still to execute, in order. */
  queue: Float32Array[];
  /** Actions in the server's last reply (the chunk length H; 1 for an [A] reply), for the convention preflight. */
  chunk?: number;
}

/**
 * The episode each session has open (the policies a provider makes for its tasks share its sessions, one after the
 * other): the next episode start on the session ends it first, whichever policy started it.
 */
const openEpisodes = new WeakMap<ServerSession, SlotState>();

/** A plain observation value as a wire value (typed arrays as ndarrays). */
export function wireValueOf(v: ObsValue | NdArray): WireValue {
  if (isNdArray(v)) return v;
  if (ArrayBuffer.isView(v)) {
    const dtype = v.constructor.name.replace(/Array$/, '').toLowerCase();
    return { dtype, shape: [(v as unknown as ArrayLike<number>).length], data: v } as NdArray;
  }
  if (Array.isArray(v)) return v.map((x: ObsValue) => wireValueOf(x));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, WireValue> = {};
    for (const [k, x] of Object.entries(v as Record<string, ObsValue>)) out[k] = wireValueOf(x);
    return out;
  }
  return v as WireValue;
}

/** The rows of an action value ([A] → one row, [H, A] → H rows), as float32; null when it is no numeric array. */
function actionRows(v: WireValue | undefined): { shape: number[]; rows: Float32Array[] } | null {
  if (v === undefined || v === null) return null;
  let shape: number[];
  let flat: ArrayLike<number | bigint>;
  if (isNdArray(v as NdArray)) {
    const a = v as NdArray;
    if (typeof a.dtype === 'string' && /^(bool|str|object|complex)/.test(a.dtype)) return null;
    shape = [...a.shape];
    flat = a.data as unknown as ArrayLike<number | bigint>;
  } else if (Array.isArray(v) && v.every((x) => typeof x === 'number')) {
    shape = [v.length];
    flat = v as number[];
  } else if (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((r) => Array.isArray(r) && r.every((x) => typeof x === 'number') && r.length === (v[0] as unknown[]).length)
  ) {
    shape = [v.length, (v[0] as unknown[]).length];
    flat = (v as number[][]).flat();
  } else return null;
  if (shape.length === 0 || shape.length > 2) return { shape, rows: [] };
  const h = shape.length === 1 ? 1 : (shape[0] as number);
  const a = shape[shape.length - 1] as number;
  const rows: Float32Array[] = [];
  for (let r = 0; r < h; r++) {
    const row = new Float32Array(a);
    for (let i = 0; i < a; i++) row[i] = Number(flat[r * a + i]);
    rows.push(row);
  }
  return { shape, rows };
}

export class ServerPolicy implements BatchPolicy, MemoryReadable {
  readonly maxBatch: number;
  readonly endpoint: string;
  readonly #o: ServerPolicyOptions;
  readonly #slots: (SlotState | undefined)[];
  #actionDim: number | undefined;

  constructor(options: ServerPolicyOptions) {
    if (!Number.isInteger(options.action.execute) || options.action.execute < 1)
      throw new ImepError('E_USAGE', `server policy at ${options.endpoint}: action.execute must be an integer ≥ 1`, {
        field: 'policy.action.execute',
      });
    this.#o = options;
    this.endpoint = options.endpoint;
    this.maxBatch = options.sessions.length;
    this.#slots = new Array<SlotState | undefined>(this.maxBatch).fill(undefined);
    this.#actionDim = options.actionDim;
  }

  setReadHook(hook: ReadHook): void {
    this.#o.memory.setReadHook(hook);
  }

  #session(slot: number): ServerSession {
    const s = this.#o.sessions[slot];
    if (!Number.isInteger(slot) || s === undefined)
      throw new ImepError('E_USAGE', `server policy: slot ${slot} outside [0, ${this.maxBatch})`, { field: 'slot' });
    return s;
  }

  async resetSlot(slot: number, info: EpisodeInfo): Promise<void> {
    const session = this.#session(slot);
    const prev = openEpisodes.get(session);
    openEpisodes.delete(session);
    this.#slots[slot] = undefined;
    await this.#wire(async () => {
      if (prev !== undefined) await session.endEpisode({ success: false, steps: prev.step });
      this.#o.memory.resetSlot(slot, info.episode);
      await session.startEpisode({
        envId: this.#o.envId,
        ...(this.#o.instruction === undefined ? {} : { instruction: this.#o.instruction }),
      });
    });
    const state: SlotState = { step: 0, queue: [] };
    openEpisodes.set(session, state);
    this.#slots[slot] = state;
  }

  inferBatch(requests: readonly SlotObservation[]): Promise<readonly PolicyOutput[]> {
    const seen = new Set<number>();
    for (const r of requests) {
      this.#session(r.slot);
      if (seen.has(r.slot))
        throw new ImepError('E_USAGE', `server policy: slot ${r.slot} appears twice in one inferBatch`, {
          field: 'slot',
        });
      seen.add(r.slot);
      if (this.#slots[r.slot] === undefined)
        throw new ImepError('E_USAGE', `server policy: slot ${r.slot} was not reset`, { field: 'slot' });
    }
    return Promise.all(requests.map((r) => this.#step(r.slot, r.obs)));
  }

  /** Ends every slot's episode (success never told) and closes the sessions and the memory. */
  async close(): Promise<void> {
    await Promise.all(this.#o.sessions.map((s) => s.close().catch(() => undefined)));
    await this.#o.memory.close();
  }

  /** Actions in the server's last reply to slot `slot` (ReportsChunkLength, src/runtime/conventions.ts). */
  lastChunkLength(slot: number): number | undefined {
    return this.#slots[slot]?.chunk;
  }

  async #step(slot: number, obs: Observation): Promise<PolicyOutput> {
    const st = this.#slots[slot] as SlotState;
    const queued = st.queue.shift();
    if (queued !== undefined) {
      st.step += 1;
      return { action: { dtype: 'float32', shape: [queued.length], data: queued }, readouts: { reads: [] } };
    }
    const { execute, key } = this.#o.action;
    const step = st.step;
    const decision = step + execute - 1 >= this.#o.decisionFromStep;
    const memory = this.#o.memory;
    let reply: WireMap;
    let reads;
    try {
      const extras = await memory.beginCall({ slot, step, decision, obs });
      const wire = this.#observation(obs, extras);
      reply = await this.#wire(() => this.#session(slot).infer(wire));
    } finally {
      reads = memory.endCall(slot);
    }
    const where = `the server at ${this.endpoint}`;
    if (!Object.prototype.hasOwnProperty.call(reply, key))
      throw new ImepError(
        'E_BRIDGE_PROTOCOL',
        `${where} replied without the action key ${JSON.stringify(key)} (keys: ${Object.keys(reply).join(', ') || 'none'})`,
        { field: 'policy.action.key', hint: 'name the reply key that holds the action in policy.action.key' },
      );
    const got = actionRows(reply[key]);
    const shapeText = (s: readonly number[]): string => `[${s.join(', ')}]`;
    if (got === null || got.rows.length === 0 || got.shape.some((d) => d === 0))
      throw new ImepError(
        'E_BRIDGE_PROTOCOL',
        `${where} replied ${JSON.stringify(key)} ${got === null ? 'that is not a numeric array' : `of shape ${shapeText(got.shape)}`}; an action is [A] or a chunk [H, A]`,
        { field: 'policy.action.key' },
      );
    if (got.rows.length < execute)
      throw new ImepError(
        'E_BRIDGE_PROTOCOL',
        `${where} replied ${JSON.stringify(key)} of shape ${shapeText(got.shape)}: ${got.rows.length} action(s), but policy.action.execute is ${execute}`,
        { field: 'policy.action.execute', hint: `register action.execute ≤ ${got.rows.length}` },
      );
    const dim = (got.rows[0] as Float32Array).length;
    if (this.#actionDim !== undefined && dim !== this.#actionDim)
      throw new ImepError(
        'E_BRIDGE_PROTOCOL',
        `${where} replied ${JSON.stringify(key)} of shape ${shapeText(got.shape)} (action dimension ${dim}), but the environment ${this.#o.envId}'s action is [${this.#actionDim}]`,
        { field: 'policy.action.key' },
      );
    this.#actionDim = dim;
    const [now, ...rest] = got.rows.slice(0, execute) as [Float32Array, ...Float32Array[]];
    st.queue = rest;
    st.chunk = got.rows.length;
    st.step += 1;
    return { action: { dtype: 'float32', shape: [dim], data: now }, readouts: { reads } };
  }

  /** The observation sent at a call: the mapping's entries, then what the memory adds. */
  #observation(obs: Observation, extras: WireMap): WireMap {
    const out: Record<string, WireValue> = {};
    for (const [serverKey, source] of Object.entries(this.#o.observation)) {
      if (source === INSTRUCTION_SOURCE) {
        const text = this.#o.instruction ?? (typeof obs['instruction'] === 'string' ? obs['instruction'] : undefined);
        if (text === undefined)
          throw new ImepError(
            'E_PROTOCOL_INVALID',
            `policy.observation.${serverKey}: $instruction, but the environment ${this.#o.envId} declares no instruction`,
            { field: `policy.observation.${serverKey}` },
          );
        out[serverKey] = text;
      } else if (source.startsWith('history/')) {
        const v = extras[source];
        if (v === undefined)
          throw new ImepError(
            'E_PROTOCOL_INVALID',
            `policy.observation.${serverKey}: ${source}, which the memory (${this.#o.memory.name}) does not give`,
            { field: `policy.observation.${serverKey}` },
          );
        out[serverKey] = v;
      } else {
        const v = obs[source];
        if (v === undefined)
          throw new ImepError(
            'E_PROTOCOL_INVALID',
            `policy.observation.${serverKey}: the environment ${this.#o.envId} sent no method-visible field ${JSON.stringify(source)}`,
            { field: `policy.observation.${serverKey}` },
          );
        out[serverKey] = wireValueOf(v);
      }
    }
    // the memory's own entries (history/mask, imep/bank_hook) travel with every call
    for (const [k, v] of Object.entries(extras)) if (!(k in out)) out[k] = v;
    return out;
  }

  /** Runs a session call; a failure that is not an ImepError is E_BRIDGE_REMOTE naming the endpoint. */
  async #wire<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (isImepError(e)) throw e;
      throw new ImepError(
        'E_BRIDGE_REMOTE',
        `the server at ${this.endpoint} failed: ${e instanceof Error ? e.message : String(e)}`,
        { field: 'policy.endpoint', cause: e },
      );
    }
  }
}
