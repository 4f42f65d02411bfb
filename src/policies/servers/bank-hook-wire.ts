/**
 * The messages of the server-side bank extension (sim-bridge/PROTOCOL.md, "Server-side banks"): what a policy
 * server's wrapper (sim-bridge/imep_sim_bridge/bank_hook.py) sends to IMEP's hook endpoint and what IMEP answers,
 * one msgpack map per WebSocket binary frame.
 *
 *   request   { type: "memory.read", id?: uint, token, bank, ctx: ReadContext, items: RetrievedItem[] }
 *   answer    { type: "memory.read.result", id, items: RetrievedItem[] }
 *   refusal   { type: "error", id, code: BankHookErrorCode, message }
 *
 * ctx and items are memory_read.py's shapes. Arrays (the items' leaves) are the msgpack-numpy map
 * `{ "__ndarray__": true, "data": bin, "dtype": "<f4", "shape": [..] }` with str keys (what vla-eval's
 * `numpy_codec.encode_ndarray` writes; openpi's `msgpack_numpy` writes the same map with bin keys, which is accepted
 * too, as are bin keys anywhere). Leaves are float arrays: `<f2`, `<f4`, `<f8` (a bfloat16 leaf goes out as `<f4`
 * holding the same values; numpy has no bfloat16).
 */
import { Packr, Unpackr } from 'msgpackr';
import { z } from 'zod';
import type { ReadContext, RetrievedItem } from '../../banks/index.js';
import { bfloat16ToNumber, type FloatTensor } from '../../core/index.js';

export const BANK_HOOK_READ = 'memory.read';
export const BANK_HOOK_RESULT = 'memory.read.result';
export const BANK_HOOK_ERROR = 'error';

/** Why a read was refused (the `code` of an error reply). */
export const BANK_HOOK_ERROR_CODES = [
  'E_BANK_HOOK_MESSAGE', // not a memory.read message of this extension (undecodable, a field missing or mistyped)
  'E_BANK_HOOK_TOKEN', // a token IMEP did not issue, or one of an episode that is over (stale)
  'E_BANK_HOOK_NO_CALL', // no call of the token's episode is in flight (a read before or after the server's infer)
  'E_BANK_HOOK_READ', // IMEP's read hook failed on the read
] as const;
export type BankHookErrorCode = (typeof BANK_HOOK_ERROR_CODES)[number];

export interface BankHookRead {
  readonly id: number | null;
  readonly token: string;
  readonly bank: string;
  readonly ctx: ReadContext;
  readonly items: readonly RetrievedItem[];
}

/** A refused message: what goes back as an error reply. */
export class BankHookRefusal extends Error {
  constructor(
    readonly code: BankHookErrorCode,
    message: string,
    readonly id: number | null = null,
  ) {
    super(message);
    this.name = 'BankHookRefusal';
  }
}

const uint = z.number().int().min(0);
const identitySchema = z.object({
  slot: uint,
  scope: z.string(),
  sourceEpisode: z.string(),
  timestep: uint,
  version: uint,
});
const contextSchema = z.object({
  bank: z.string(),
  scope: z.string(),
  episode: z.string(),
  queryIndex: uint,
  decisionStep: z.boolean(),
  candidateCount: uint,
});
const readSchema = z.object({
  type: z.literal(BANK_HOOK_READ),
  id: uint.nullish(),
  token: z.string().min(1),
  bank: z.string(),
  ctx: contextSchema,
  items: z.array(z.object({ identity: identitySchema, leaves: z.record(z.string(), z.unknown()) })),
});

const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: false });
const packr = new Packr({ useRecords: false });
const textDecoder = new TextDecoder('utf-8', { fatal: true });

/** msgpack maps (str or bin keys) as plain objects with string keys, recursively. */
function plain(v: unknown): unknown {
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) {
      const key = typeof k === 'string' ? k : k instanceof Uint8Array ? textDecoder.decode(k) : undefined;
      if (key === undefined) throw new BankHookRefusal('E_BANK_HOOK_MESSAGE', `a map key is a ${typeof k}`);
      o[key] = plain(x);
    }
    return o;
  }
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

const FLOATS = {
  '<f2': { dtype: 'float16', size: 2 },
  '<f4': { dtype: 'float32', size: 4 },
  '<f8': { dtype: 'float64', size: 8 },
} as const;

/** A msgpack-numpy map as a FloatTensor (a fresh, aligned copy of the bytes). */
function leafOf(v: unknown, where: string): FloatTensor {
  const m = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const marker = m?.['__ndarray__'];
  const data = marker === true ? m?.['data'] : marker;
  if (m === undefined || !(data instanceof Uint8Array)) {
    throw new BankHookRefusal('E_BANK_HOOK_MESSAGE', `${where} is not a msgpack-numpy array map`);
  }
  const dtypeStr = m['dtype'];
  const info = typeof dtypeStr === 'string' ? FLOATS[dtypeStr as keyof typeof FLOATS] : undefined;
  if (info === undefined) {
    throw new BankHookRefusal(
      'E_BANK_HOOK_MESSAGE',
      `${where} has dtype ${JSON.stringify(dtypeStr)}; leaves are float arrays ('<f2', '<f4', '<f8')`,
    );
  }
  const shape = m['shape'];
  if (!Array.isArray(shape) || !shape.every((d): d is number => Number.isInteger(d) && (d as number) >= 0)) {
    throw new BankHookRefusal('E_BANK_HOOK_MESSAGE', `${where} has no integer shape`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (count * info.size !== data.byteLength) {
    throw new BankHookRefusal(
      'E_BANK_HOOK_MESSAGE',
      `${where}: shape [${shape.join(', ')}] ${info.dtype} needs ${count * info.size} bytes, has ${data.byteLength}`,
    );
  }
  const bytes = new Uint8Array(data.byteLength);
  bytes.set(data);
  if (info.dtype === 'float32') return { dtype: 'float32', shape: [...shape], data: new Float32Array(bytes.buffer) };
  if (info.dtype === 'float64') return { dtype: 'float64', shape: [...shape], data: new Float64Array(bytes.buffer) };
  return { dtype: 'float16', shape: [...shape], data: new Uint16Array(bytes.buffer) };
}

/** The id of a message as far as it can be read (for the refusal's `id`). */
function idOf(m: unknown): number | null {
  const id = typeof m === 'object' && m !== null ? (m as Record<string, unknown>)['id'] : undefined;
  return typeof id === 'number' && Number.isInteger(id) && id >= 0 ? id : null;
}

/** Decodes one frame into a read; throws BankHookRefusal (E_BANK_HOOK_MESSAGE) naming the fault. */
export function decodeBankHookRead(frame: Uint8Array): BankHookRead {
  let raw: unknown;
  try {
    raw = plain(unpackr.unpack(frame));
  } catch (e) {
    if (e instanceof BankHookRefusal) throw e;
    throw new BankHookRefusal('E_BANK_HOOK_MESSAGE', 'the frame is not msgpack');
  }
  const id = idOf(raw);
  const parsed = readSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue === undefined ? '' : issue.path.join('.');
    throw new BankHookRefusal(
      'E_BANK_HOOK_MESSAGE',
      `not a memory.read message of the bank-hook extension${at === '' ? '' : ` (field ${at}: ${issue?.message})`}`,
      id,
    );
  }
  const m = parsed.data;
  try {
    const items = m.items.map((item, i) => ({
      identity: item.identity,
      leaves: Object.fromEntries(
        Object.entries(item.leaves).map(([name, leaf]) => [name, leafOf(leaf, `items[${i}].leaves.${name}`)]),
      ),
    }));
    return { id: m.id ?? null, token: m.token, bank: m.bank, ctx: m.ctx, items };
  } catch (e) {
    if (e instanceof BankHookRefusal) throw new BankHookRefusal(e.code, e.message, id);
    throw e;
  }
}

function numpyLeaf(t: FloatTensor): Record<string, unknown> {
  let dtype: string;
  let data: Uint8Array;
  if (t.dtype === 'bfloat16') {
    dtype = '<f4';
    const f = Float32Array.from(t.data, (bits) => bfloat16ToNumber(bits));
    data = new Uint8Array(f.buffer);
  } else {
    dtype = t.dtype === 'float16' ? '<f2' : t.dtype === 'float32' ? '<f4' : '<f8';
    data = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  }
  return { __ndarray__: true, data: Buffer.from(data), dtype, shape: [...t.shape] };
}

/** The answer to a read: the items the server must use. */
export function encodeBankHookResult(id: number | null, items: readonly RetrievedItem[]): Buffer {
  return packr.pack({
    type: BANK_HOOK_RESULT,
    id,
    items: items.map((item) => ({
      identity: { ...item.identity },
      leaves: Object.fromEntries(Object.entries(item.leaves).map(([name, t]) => [name, numpyLeaf(t)])),
    })),
  });
}

/** A refusal: the wrapper raises it, the server's infer fails, the episode fails (never unintervened). */
export function encodeBankHookError(id: number | null, code: BankHookErrorCode, message: string): Buffer {
  return packr.pack({ type: BANK_HOOK_ERROR, id, code, message });
}
