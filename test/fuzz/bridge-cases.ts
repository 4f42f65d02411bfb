/**
 * Malformed bridge messages: random bytes; byte-level mutations (truncation, garbage, flipped bits,
 * deleted spans) of valid encoded envelopes of every op; envelope-level mutations (deleted keys, wrong
 * types, hostile strings, edge numbers, deep nesting, added keys) re-packed with msgpack; hand-made
 * hazards (deep msgpack nesting, ndarray extension 17 with a garbage payload, 64-bit integers, many
 * frames). The properties: `decodeMessage` never throws and answers an error result with a wire code;
 * a running BridgeServer answers each with a decodable reply or error (or, for a stray reply/error,
 * nothing) and keeps serving.
 */
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import * as zmq from 'zeromq';
import { decodeMessage, encodeMessage, type DecodeResult, type OutboundMessage } from '../../src/bridges/envelope.js';
import { ndarray } from '../../src/bridges/ndarray-codec.js';
import { WIRE_ERROR_CODES } from '../../src/bridges/op-schemas.js';
import { SERVED_OPS } from '../../src/bridges/server.js';
import { applyTreeMutation, treeMutationArb } from './mutate.js';
import type { FuzzOutcome } from './outcome.js';

const packr = new Packr({ useRecords: false });

/** Valid messages of every kind, as plain envelopes and as encoded frames. */
export function validMessages(): { envelope: Record<string, unknown>; bytes: Buffer }[] {
  const readCtx = {
    bank: 'cognitive',
    scope: 's1',
    episode: 'e1',
    queryIndex: 0,
    decisionStep: true,
    candidateCount: 1,
  };
  const item = {
    identity: { slot: 0, scope: 's1', sourceEpisode: 'e0', timestep: 3, version: 1 },
    leaves: { z: { dtype: 'float32' as const, shape: [2], data: Float32Array.of(0.5, -1) } },
  };
  const msgs: OutboundMessage[] = [
    { kind: 'request', id: 1, op: 'hello', body: { client: { name: 'fuzz', version: '1' } } },
    { kind: 'request', id: 2, op: 'ping', body: {} },
    { kind: 'request', id: 3, op: 'make', body: { env: 'ShellGameTouch-lite', kwargs: {} } },
    { kind: 'request', id: 4, op: 'reset', body: { handle: 'h1', seed: 5 } },
    {
      kind: 'request',
      id: 5,
      op: 'step',
      body: { handle: 'h1', action: ndarray('float32', [2], Float32Array.of(0, 0.06)) },
    },
    { kind: 'request', id: 6, op: 'close', body: { handle: 'h1' } },
    { kind: 'request', id: 7, op: 'memory.read', body: { bank: 'cognitive', ctx: readCtx, items: [item] } },
    { kind: 'reply', id: 8, body: { t: 1 } },
    { kind: 'error', id: 9, code: 'E_ADAPTER', message: 'boom' },
  ];
  return msgs.map((m) => {
    const e = encodeMessage(m);
    if (!e.ok) throw new Error(`fixture does not encode: ${e.message}`);
    const op = m.kind === 'request' ? m.op : m.kind;
    const body = m.kind === 'error' ? { code: m.code, message: m.message } : m.body;
    return { envelope: { v: 1, id: m.id, op, body }, bytes: e.bytes };
  });
}

let valid: ReturnType<typeof validMessages> | undefined;
const validCached = (): ReturnType<typeof validMessages> => (valid ??= validMessages());

function deepMsgpack(depth: number, map: boolean): Buffer {
  // fixarray(1) / fixmap(1){"a": …} nested `depth` times around nil
  const open = map ? Buffer.from([0x81, 0xa1, 0x61]) : Buffer.from([0x91]);
  return Buffer.concat([...Array.from({ length: depth }, () => open), Buffer.from([0xc0])]);
}

function envelopeWithRaw(op: string, bodyKey: string, raw: Buffer): Buffer {
  // {v:1, id:77, op, body:{[bodyKey]: <raw msgpack>}} built by hand around raw bytes
  const head = packr.pack({ v: 1, id: 77, op });
  const withoutMapHeader = head.subarray(1);
  const bodyHead = Buffer.concat([Buffer.from([0x81]), packr.pack(bodyKey)]);
  return Buffer.concat([Buffer.from([0x84]), withoutMapHeader, packr.pack('body'), bodyHead, raw]);
}

export const BRIDGE_HAZARDS: readonly { readonly name: string; readonly frames: () => Buffer[] }[] = [
  { name: 'empty frame', frames: () => [Buffer.alloc(0)] },
  { name: 'nil', frames: () => [Buffer.from([0xc0])] },
  { name: 'deep arrays (100k)', frames: () => [deepMsgpack(100_000, false)] },
  { name: 'deep maps (50k)', frames: () => [deepMsgpack(50_000, true)] },
  { name: 'deep body (20k)', frames: () => [envelopeWithRaw('reply', 'x', deepMsgpack(20_000, false))] },
  {
    name: 'ndarray ext with garbage payload',
    frames: () => [envelopeWithRaw('step', 'action', Buffer.from([0xc7, 8, 17, 1, 2, 3, 4, 5, 6, 7, 8]))],
  },
  {
    name: 'ndarray ext with a short payload',
    frames: () => [envelopeWithRaw('step', 'action', Buffer.from([0xd4, 17, 0]))],
  },
  {
    name: 'ndarray ext claiming a huge shape',
    frames: () => [
      envelopeWithRaw(
        'step',
        'action',
        Buffer.concat([
          Buffer.from([0xc7, 16, 17]),
          Buffer.from([1, 3, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0]),
        ]),
      ),
    ],
  },
  { name: 'unknown ext type', frames: () => [envelopeWithRaw('reply', 'x', Buffer.from([0xd4, 99, 0]))] },
  {
    name: 'uint64 id',
    frames: () => [
      Buffer.concat([
        Buffer.from([0x84, 0xa1, 0x76, 0x01, 0xa2, 0x69, 0x64, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        packr.pack('op').subarray(0),
        packr.pack('ping'),
        packr.pack('body'),
        Buffer.from([0x80]),
      ]),
    ],
  },
  { name: 'str32 length beyond the frame', frames: () => [Buffer.from([0xdb, 0xff, 0xff, 0xff, 0xff, 0x61])] },
  { name: 'map32 count beyond the frame', frames: () => [Buffer.from([0xdf, 0xff, 0xff, 0xff, 0xff])] },
  { name: 'bin32 length beyond the frame', frames: () => [Buffer.from([0xc6, 0x7f, 0xff, 0xff, 0xff, 0x00])] },
  { name: 'two frames', frames: () => [validCached()[1]!.bytes, validCached()[1]!.bytes] },
  { name: 'three frames', frames: () => [Buffer.alloc(0), validCached()[1]!.bytes, Buffer.from('x')] },
  { name: 'delimiter + garbage', frames: () => [Buffer.alloc(0), Buffer.from('garbage')] },
  {
    name: 'non-string map keys',
    frames: () => [
      new Packr({ useRecords: false, mapsAsObjects: false }).pack(
        new Map<unknown, unknown>([
          [1, 1],
          [Buffer.from('op'), 'ping'],
        ]),
      ),
    ],
  },
  {
    name: 'record extension',
    frames: () => [
      new Packr({ useRecords: true }).pack([
        { v: 1, id: 1, op: 'ping', body: {} },
        { v: 1, id: 2, op: 'ping', body: {} },
      ]),
    ],
  },
];

export interface BridgeCase {
  readonly label: string;
  readonly frames: Buffer[];
}

export const bridgeCaseArb: fc.Arbitrary<BridgeCase> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .uint8Array({ maxLength: 300 })
      .map((b) => ({ label: `${b.length} random bytes`, frames: [Buffer.from(b)] })),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({
        which: fc.nat(),
        op: fc.constantFrom('truncate', 'garbage', 'flip', 'delete-span'),
        at: fc.nat(),
        bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }),
        bit: fc.integer({ min: 0, max: 7 }),
      })
      .map(({ which, op, at, bytes, bit }) => {
        const v = validCached()[which % validCached().length]!;
        const b = v.bytes;
        const i = at % Math.max(1, b.length);
        let out: Buffer;
        if (op === 'truncate') out = b.subarray(0, i);
        else if (op === 'garbage') out = Buffer.concat([b.subarray(0, i), Buffer.from(bytes), b.subarray(i)]);
        else if (op === 'flip') {
          out = Buffer.from(b);
          out[i] = out[i]! ^ (1 << bit);
        } else out = Buffer.concat([b.subarray(0, i), b.subarray(i + bytes.length)]);
        return { label: `${String(v.envelope['op'])}: ${op} at ${i}`, frames: [out] };
      }),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({ which: fc.nat(), m: treeMutationArb, m2: fc.option(treeMutationArb) })
      .map(({ which, m, m2 }) => {
        const v = validCached()[which % validCached().length]!;
        const r1 = applyTreeMutation(v.envelope, m);
        const r2 = m2 === null ? null : applyTreeMutation(r1.value, m2);
        let bytes: Buffer;
        try {
          bytes = packr.pack(r2?.value ?? r1.value);
        } catch {
          bytes = packr.pack(null);
        }
        return {
          label: `${String(v.envelope['op'])}: ${[r1.label, r2?.label].filter(Boolean).join('; ')}`,
          frames: [bytes],
        };
      }),
  },
  {
    weight: 1,
    arbitrary: fc.nat().map((i) => ({
      label: BRIDGE_HAZARDS[i % BRIDGE_HAZARDS.length]!.name,
      frames: BRIDGE_HAZARDS[i % BRIDGE_HAZARDS.length]!.frames(),
    })),
  },
);

const WIRE_CODES: readonly string[] = WIRE_ERROR_CODES;

/** Checks a decode result's shape (ok, or an error with a wire code, a message and a readable id). */
export function decodeResultProblem(r: DecodeResult): string | null {
  if (r.ok) return null;
  if (!WIRE_CODES.includes(r.code)) return `unknown error code ${String(r.code)}`;
  if (typeof r.message !== 'string' || r.message === '') return 'no message';
  if (r.id !== null && !Number.isSafeInteger(r.id)) return `bad id ${String(r.id)}`;
  return null;
}

/** Decodes a case as a server would (serving SERVED_OPS); a throw is a crash. */
export function runDecodeCase(c: BridgeCase): FuzzOutcome {
  let r: DecodeResult;
  try {
    r = decodeMessage(c.frames, { serves: SERVED_OPS });
  } catch (e) {
    return {
      kind: 'crash',
      reason: `decodeMessage threw ${e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e)}`.slice(
        0,
        240,
      ),
      category: 'throw',
    };
  }
  const problem = decodeResultProblem(r);
  if (problem !== null) return { kind: 'crash', reason: problem, category: 'result' };
  return r.ok ? { kind: 'accepted' } : { kind: 'refused', code: r.code, line: r.message };
}

/**
 * A dealer connected to a running server. `probe` sends a case, then a ping with a fresh id, and reads
 * until the ping's reply: every frame before it must decode (an error with a wire code, or a reply to a
 * valid request the case happened to be). No answer within `deadlineMs` is a hang.
 */
export class ServerProbe {
  readonly #dealer: zmq.Dealer;
  #next = 1_000_000_000;

  constructor(
    endpoint: string,
    readonly deadlineMs = 5000,
  ) {
    this.#dealer = new zmq.Dealer({ linger: 0, receiveTimeout: deadlineMs, sendTimeout: deadlineMs });
    this.#dealer.connect(endpoint);
  }

  async probe(c: BridgeCase): Promise<FuzzOutcome | { kind: 'hang' }> {
    const pingId = this.#next++;
    const ping = encodeMessage({ kind: 'request', id: pingId, op: 'ping', body: {} });
    if (!ping.ok) throw new Error(ping.message);
    try {
      await this.#dealer.send(c.frames);
      await this.#dealer.send(ping.bytes);
    } catch (e) {
      return { kind: 'crash', reason: `send failed: ${String(e)}`, category: 'server' };
    }
    let answered: FuzzOutcome = { kind: 'accepted' };
    for (let k = 0; k < 16; k++) {
      let frames: Buffer[];
      try {
        frames = await this.#dealer.receive();
      } catch {
        return { kind: 'hang' };
      }
      const d = decodeMessage(frames.length === 2 && frames[0]!.length === 0 ? frames.slice(1) : frames);
      if (!d.ok)
        return { kind: 'crash', reason: `the server sent an undecodable frame: ${d.message}`, category: 'server' };
      if (d.message.kind === 'reply' && d.message.id === pingId) return answered;
      if (d.message.kind === 'error') {
        if (!WIRE_CODES.includes(d.message.code))
          return { kind: 'crash', reason: `error reply with unknown code ${d.message.code}`, category: 'server' };
        answered = { kind: 'refused', code: d.message.code, line: d.message.message };
      }
    }
    return { kind: 'crash', reason: 'too many answers before the ping reply', category: 'server' };
  }

  close(): void {
    this.#dealer.close();
  }
}
