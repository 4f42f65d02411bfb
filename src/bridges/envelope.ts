/**
 * The message envelope of bridge protocol v1: `{ v, id, op, body }`. `decodeMessage` never throws:
 * garbage yields a result with the wire error code (E_BAD_MESSAGE, E_VERSION, E_UNKNOWN_OP) and the
 * id when it could be read. When a message has several faults, the first in this order is reported:
 * undecodable / not one frame / not a map → `v` → envelope keys and types → `op` → body fields.
 */
import { Unpackr } from 'msgpackr';
import { z } from 'zod';
import './ndarray-codec.js';
import { floatEnvelopeFields } from './msgpack-peek.js';
import { encodeFrame, type FrameAllocator } from './msgpack-writer.js';
import {
  PROTOCOL_VERSION,
  describeIssue,
  fastStepRequestBody,
  fastStepResult,
  isPlainMap,
  isRequestOp,
  isUint,
  replyBodySchemas,
  requestBodySchemas,
  type ReplyBodies,
  type ReplyInputs,
  type RequestBodies,
  type RequestInputs,
  type RequestOp,
  type WireErrorCode,
} from './op-schemas.js';
import { WireValueError, fromWire, toWire, type WireValue } from './wire-value.js';

export type RequestMessage = {
  [K in RequestOp]: { kind: 'request'; id: number; op: K; body: RequestBodies[K] };
}[RequestOp];
export interface ReplyMessage {
  kind: 'reply';
  id: number;
  /** Validated against the answered op's schema by the caller (see `parseReplyBody`). */
  body: Record<string, unknown>;
}
export interface ErrorMessage {
  kind: 'error';
  id: number | null;
  /** A wire error code; peers may send codes this version does not list. */
  code: string;
  message: string;
}
export type InboundMessage = RequestMessage | ReplyMessage | ErrorMessage;

export type DecodeResult =
  | { ok: true; message: InboundMessage }
  | {
      ok: false;
      code: WireErrorCode;
      message: string;
      id: number | null;
      /** The envelope's op when it could be read ("reply"/"error": the id is the receiver's own). */
      op: string | null;
    };

export type OutboundMessage =
  | { [K in RequestOp]: { kind: 'request'; id: number; op: K; body: RequestInputs[K] } }[RequestOp]
  | { kind: 'reply'; id: number; body: ReplyInputs[RequestOp] | Readonly<Record<string, unknown>> }
  | { kind: 'error'; id: number | null; code: WireErrorCode | string; message: string };

export type EncodeResult = { ok: true; bytes: Buffer } | { ok: false; code: 'E_BAD_MESSAGE'; message: string };

const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
/** Fallback for maps with non-string keys (Python `b"key"`): decode maps as Map, then convert. */
const mapUnpackr = new Unpackr({ useRecords: false, mapsAsObjects: false });

const ENVELOPE_KEYS = ['v', 'id', 'op', 'body'] as const;

/**
 * Encodes one message into one frame. Fails (never throws) when a body holds an unsendable value.
 * `alloc` supplies the frame's buffer (the server passes a FrameSlab's).
 */
export function encodeMessage(msg: OutboundMessage, alloc?: FrameAllocator): EncodeResult {
  let op: string;
  let body: unknown;
  switch (msg.kind) {
    case 'request':
      op = msg.op;
      body = msg.body;
      break;
    case 'reply':
      op = 'reply';
      body = msg.body;
      break;
    case 'error':
      op = 'error';
      body = { code: msg.code, message: msg.message };
      break;
  }
  try {
    return { ok: true, bytes: encodeFrame({ v: PROTOCOL_VERSION, id: msg.id, op, body: toWire(body, 'body') }, alloc) };
  } catch (e) {
    return { ok: false, code: 'E_BAD_MESSAGE', message: e instanceof Error ? e.message : String(e) };
  }
}

/** Packs any value the way bodies are packed (ndarrays as extension 17); throws WireValueError. */
export function encodeValue(value: unknown): Buffer {
  return encodeFrame(toWire(value));
}

/** Unpacks a value packed by `encodeValue` or by a Python peer; throws on malformed bytes. */
export function decodeValue(bytes: Uint8Array): WireValue {
  const r = unpackFrame(bytes);
  if (!r.ok) throw new WireValueError('', r.message);
  return fromWire(r.value);
}

/** Encodes an error reply (cannot fail: code and message are strings). */
export function encodeError(id: number | null, code: WireErrorCode | string, message: string): Buffer {
  const r = encodeMessage({ kind: 'error', id, code, message });
  if (r.ok) return r.bytes;
  /* c8 ignore next */
  throw new Error(`encodeError: ${r.message}`);
}

function unpackFrame(frame: Uint8Array): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: unpackr.unpack(frame) as unknown };
  } catch (first) {
    try {
      return { ok: true, value: mapUnpackr.unpack(frame) as unknown };
    } catch {
      return { ok: false, message: `undecodable msgpack: ${first instanceof Error ? first.message : String(first)}` };
    }
  }
}

function readId(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

const errorBodySchema = z.object({ code: z.string(), message: z.string() });

export interface DecodeOptions {
  /**
   * The request ops this peer serves: another op is E_UNKNOWN_OP before its body is looked at
   * (a server does not serve `memory.read`; a client serves only `memory.read`). Default: all.
   */
  readonly serves?: readonly RequestOp[];
}

/** Decodes one received message (the frames after any routing id). Never throws. */
export function decodeMessage(frames: Uint8Array | readonly Uint8Array[], options: DecodeOptions = {}): DecodeResult {
  const list = frames instanceof Uint8Array ? [frames] : frames;
  if (list.length !== 1) return bad(null, `expected one frame, got ${list.length}`);
  const unpacked = unpackFrame(list[0] as Uint8Array);
  if (!unpacked.ok) return bad(null, unpacked.message);
  let root: unknown;
  try {
    root = fromWire(unpacked.value);
  } catch (e) {
    const raw = isMapLike(unpacked.value) ? unpacked.value : {};
    return bad(
      readId(raw['id']),
      e instanceof WireValueError ? e.message : String(e),
      typeof raw['op'] === 'string' ? raw['op'] : null,
    );
  }
  if (!isMapLike(root)) return bad(null, 'message is not a map');
  const id = readId(root['id']);
  const rawOp = typeof root['op'] === 'string' ? root['op'] : null;
  const fail = (code: WireErrorCode, message: string, withId = id): DecodeResult => ({
    ok: false,
    code,
    message,
    id: withId,
    op: rawOp,
  });
  if (!('v' in root)) return fail('E_BAD_MESSAGE', 'envelope: missing "v"');
  if (root['v'] !== PROTOCOL_VERSION) {
    return fail('E_VERSION', `protocol version ${JSON.stringify(root['v'])} is not supported (this peer speaks 1)`);
  }
  // msgpack decodes the float 1.0 to the number 1: PROTOCOL.md asks for the integer (and for an integer id)
  const floats = floatEnvelopeFields(list[0] as Uint8Array);
  if (floats.includes('v'))
    return fail('E_VERSION', 'protocol version 1.0 (a msgpack float) is not supported: v is the integer 1');
  for (const k of Object.keys(root)) {
    if (!(ENVELOPE_KEYS as readonly string[]).includes(k)) return fail('E_BAD_MESSAGE', `envelope: unknown key "${k}"`);
  }
  for (const k of ENVELOPE_KEYS) if (!(k in root)) return fail('E_BAD_MESSAGE', `envelope: missing "${k}"`);
  const op = root['op'];
  if (typeof op !== 'string' || op === '') return fail('E_BAD_MESSAGE', 'envelope.op: expected a non-empty string');
  const rawId = root['id'];
  if (!(rawId === null && op === 'error') && (!isUint(rawId) || floats.includes('id'))) {
    return fail(
      'E_BAD_MESSAGE',
      `envelope.id: expected a uint (at most 2^53 − 1)${floats.includes('id') ? ', got a msgpack float' : ''}`,
      null,
    );
  }
  const body = root['body'];
  if (!isPlainMap(body)) return fail('E_BAD_MESSAGE', 'envelope.body: expected a map');
  if (op === 'reply') return { ok: true, message: { kind: 'reply', id: id as number, body } };
  if (op === 'error') {
    const e = errorBodySchema.safeParse(body);
    if (!e.success) return fail('E_BAD_MESSAGE', describeIssue(e.error, 'body'));
    return { ok: true, message: { kind: 'error', id, code: e.data.code, message: e.data.message } };
  }
  if (!isRequestOp(op) || (options.serves !== undefined && !options.serves.includes(op))) {
    const served = options.serves === undefined ? '' : ` (this peer serves: ${options.serves.join(', ')})`;
    return fail('E_UNKNOWN_OP', `unknown op "${op}"${served}`);
  }
  if (op === 'step') {
    const fast = fastStepRequestBody(body);
    if (fast !== undefined) return { ok: true, message: { kind: 'request', id: id as number, op, body: fast } };
  }
  const parsed = requestBodySchemas[op].safeParse(body);
  if (!parsed.success) return fail('E_BAD_MESSAGE', describeIssue(parsed.error, 'body'));
  return { ok: true, message: { kind: 'request', id: id as number, op, body: parsed.data } as RequestMessage };
}

/** Validates a reply body against the schema of the op it answers. */
export function parseReplyBody<K extends RequestOp>(
  op: K,
  body: Record<string, unknown>,
): { ok: true; body: ReplyBodies[K] } | { ok: false; message: string } {
  if (op === 'step' || op === 'reset') {
    const fast = fastStepResult(body);
    if (fast !== undefined) return { ok: true, body: fast as unknown as ReplyBodies[K] };
  }
  const r = replyBodySchemas[op].safeParse(body);
  return r.success
    ? { ok: true, body: r.data as ReplyBodies[K] }
    : { ok: false, message: describeIssue(r.error, `${op} reply body`) };
}

function bad(id: number | null, message: string, op: string | null = null): DecodeResult {
  return { ok: false, code: 'E_BAD_MESSAGE', id, message, op };
}

function isMapLike(v: unknown): v is Record<string, unknown> {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Uint8Array) &&
    Object.getPrototypeOf(v) === Object.prototype
  );
}
