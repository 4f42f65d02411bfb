/**
 * IMEP's side of vla-eval 0.8.0's model-server protocol (vla_eval/protocol/messages.py, vla_eval/connection.py,
 * vla_eval/model_servers/serve.py), as its own benchmark client speaks it:
 *
 *   - every frame is a msgpack map { type, payload, seq, timestamp } (messages.py `pack_message`; vla-eval dialect
 *     of msgpack-numpy); type ∈ hello | observation | action | episode_start | episode_end | error.
 *   - seq: the client numbers its messages 1, 2, 3, … (connection.py `_next_seq`, HELLO is 1); the server answers
 *     HELLO, ACTION and ERROR with the seq of the message they answer (serve.py).
 *   - HELLO: the client sends { harness_version, protocol_version: 1 }; the server replies HELLO with
 *     { harness_version, protocol_version, model_server: <class name>, capabilities: {}, observation_params?,
 *     action_spec?, observation_spec? } (specs as DimSpec.to_dict). That whole payload is `metadata`.
 *   - EPISODE_START { task: { name: <env id>, instruction?: <the prompt> } }: no reply (a failing
 *     on_episode_start answers ERROR "episode_start_failed: …", seen by the next recv). Never seeds or facts, and no
 *     `recording` (IMEP records itself).
 *   - OBSERVATION <the observation dict> → ACTION <the action dict, e.g. { actions: float32 [A] or [H, A] }> with the
 *     observation's seq; a predict() that raises answers ERROR { error: "observation_failed: <Type>: <msg>" } and the
 *     connection stays open: E_BRIDGE_PROTOCOL naming the endpoint and the server's message, the session stays usable.
 *   - EPISODE_END { metrics: { success }, steps }: no reply (the upstream runner also sends elapsed_sec; IMEP leaves
 *     the wall clock out so what a server sees does not depend on timing).
 *   - health: GET /health answers 200 {"status": "ok"} (serve.py `process_request`), not used here: HELLO is the
 *     readiness check.
 */
import { ImepError } from '../../core/index.js';
import { MsgpackNumpyError, isWireMap, packWire, unpackWireMap } from './msgpack-numpy.js';
import type {
  ServerConnectOptions,
  ServerConnector,
  ServerEpisodeStart,
  ServerSession,
  WireMap,
  WireValue,
} from './session.js';
import { oneLine, WsChannel } from './ws-channel.js';

export const VLA_EVAL_PROTOCOL_VERSION = 1;
/** What IMEP calls itself in its HELLO (vla-eval's client sends its own version; the server only logs it). */
export const VLA_EVAL_HARNESS_NAME = 'imep';

export type VlaEvalMessageType = 'hello' | 'observation' | 'action' | 'episode_start' | 'episode_end' | 'error';
const TYPES: readonly string[] = ['hello', 'observation', 'action', 'episode_start', 'episode_end', 'error'];

export interface VlaEvalMessage {
  readonly type: VlaEvalMessageType;
  readonly payload: WireMap;
  readonly seq: number;
  readonly timestamp: number;
}

/** The frame of one message (vla-eval's `pack_message`). */
export function packVlaEvalMessage(
  type: VlaEvalMessageType,
  payload: WireMap,
  seq: number,
  timestamp: number,
): Uint8Array {
  return packWire({ type, payload, seq, timestamp }, 'vla-eval', type);
}

/** One message from its frame (vla-eval's `unpack_message`); throws MsgpackNumpyError. */
export function unpackVlaEvalMessage(frame: Uint8Array): VlaEvalMessage {
  const raw = unpackWireMap(frame, 'message');
  const missing = ['type', 'payload', 'seq', 'timestamp'].filter((k) => !(k in raw));
  if (missing.length > 0) throw new MsgpackNumpyError('message', `missing ${missing.join(', ')}`);
  const { type, payload, seq, timestamp } = raw as Record<string, WireValue>;
  if (typeof type !== 'string' || !TYPES.includes(type))
    throw new MsgpackNumpyError('message.type', `unknown message type ${JSON.stringify(type)}`);
  if (payload === undefined || !isWireMap(payload))
    throw new MsgpackNumpyError('message.payload', 'payload is not a map');
  if (typeof seq !== 'number' || !Number.isInteger(seq)) throw new MsgpackNumpyError('message.seq', 'not an integer');
  if (typeof timestamp !== 'number') throw new MsgpackNumpyError('message.timestamp', 'not a number');
  return { type: type as VlaEvalMessageType, payload, seq, timestamp };
}

class VlaEvalWsSession implements ServerSession {
  private busy = false;

  constructor(
    readonly endpoint: string,
    readonly metadata: WireMap,
    private readonly channel: WsChannel,
    private readonly deadlineMs: number,
    private seq: number,
  ) {}

  private async send(type: VlaEvalMessageType, payload: WireMap): Promise<number> {
    this.channel.check();
    const seq = ++this.seq;
    let frame: Uint8Array;
    try {
      frame = packVlaEvalMessage(type, payload, seq, Date.now() / 1000);
    } catch (e) {
      if (e instanceof MsgpackNumpyError)
        throw new ImepError('E_BRIDGE_PROTOCOL', `${this.endpoint}: cannot send the ${type}: ${e.message}`);
      throw e;
    }
    await this.channel.send(frame);
    return seq;
  }

  private async exclusive<T>(what: string, f: () => Promise<T>): Promise<T> {
    if (this.busy) throw new Error(`${this.endpoint}: ${what} while a call is pending (one call at a time)`);
    this.busy = true;
    try {
      return await f();
    } finally {
      this.busy = false;
    }
  }

  startEpisode(start: ServerEpisodeStart): Promise<void> {
    return this.exclusive('startEpisode', async () => {
      const task: Record<string, WireValue> = { name: start.envId };
      if (start.instruction !== undefined) task['instruction'] = start.instruction;
      await this.send('episode_start', { task });
    });
  }

  infer(observation: WireMap): Promise<WireMap> {
    return this.exclusive('infer', async () => {
      const seq = await this.send('observation', observation);
      for (;;) {
        const msg = await receive(this.endpoint, this.channel, this.deadlineMs, 'action');
        if (msg.type === 'error') throw serverError(this.endpoint, msg);
        if (msg.type === 'action' && msg.seq === seq) return msg.payload;
        if (msg.type === 'action' && msg.seq < seq) continue; // a late answer to an earlier call: not this one's
        throw broken(
          this.endpoint,
          this.channel,
          msg.type === 'action'
            ? `an action for seq ${msg.seq} answered observation seq ${seq}`
            : `a ${msg.type} message answered an observation`,
        );
      }
    });
  }

  endEpisode(result: { readonly success: boolean; readonly steps: number }): Promise<void> {
    return this.exclusive('endEpisode', async () => {
      await this.send('episode_end', { metrics: { success: result.success }, steps: result.steps });
    });
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}

function serverError(endpoint: string, msg: VlaEvalMessage): ImepError {
  const detail = msg.payload['error'];
  const text = typeof detail === 'string' ? detail : JSON.stringify(msg.payload);
  return new ImepError('E_BRIDGE_PROTOCOL', `${endpoint}: the server answered ERROR: ${oneLine(text)}`, {
    hint: 'the model server raised; its log has the traceback',
  });
}

function broken(endpoint: string, channel: WsChannel, what: string): ImepError {
  const e = new ImepError('E_BRIDGE_PROTOCOL', `${endpoint}: ${what}`, { hint: 'is this a vla-eval model server?' });
  channel.fail(e);
  void channel.close();
  return e;
}

async function receive(
  endpoint: string,
  channel: WsChannel,
  waitMs: number,
  what: string,
  deadlineMs = waitMs,
): Promise<VlaEvalMessage> {
  const frame = await channel.recv(waitMs, `${what} message`, deadlineMs);
  if (!frame.binary)
    throw broken(
      endpoint,
      channel,
      `a text frame instead of the ${what}: ${oneLine(frame.data.toString('utf8').slice(0, 300))}`,
    );
  try {
    return unpackVlaEvalMessage(frame.data);
  } catch (e) {
    if (e instanceof MsgpackNumpyError) throw broken(endpoint, channel, `${e.message} (expected the ${what})`);
    throw e;
  }
}

/** Connects to a vla-eval model server and exchanges HELLO (all within `deadlineMs`). */
export const connectVlaEval: ServerConnector = async (
  endpoint: string,
  options: ServerConnectOptions,
): Promise<ServerSession> => {
  const started = Date.now();
  const channel = await WsChannel.open(endpoint, options.deadlineMs);
  try {
    const seq = 1;
    await channel.send(
      packVlaEvalMessage(
        'hello',
        { harness_version: VLA_EVAL_HARNESS_NAME, protocol_version: VLA_EVAL_PROTOCOL_VERSION },
        seq,
        Date.now() / 1000,
      ),
    );
    const left = Math.max(1, options.deadlineMs - (Date.now() - started));
    const reply = await receive(endpoint, channel, left, 'HELLO reply', options.deadlineMs);
    if (reply.type === 'error') throw serverError(endpoint, reply);
    if (reply.type !== 'hello') throw broken(endpoint, channel, `a ${reply.type} message answered HELLO`);
    const version = reply.payload['protocol_version'];
    if (version !== undefined && version !== VLA_EVAL_PROTOCOL_VERSION)
      throw broken(
        endpoint,
        channel,
        `speaks vla-eval protocol version ${JSON.stringify(version)}; IMEP speaks ${VLA_EVAL_PROTOCOL_VERSION}`,
      );
    return new VlaEvalWsSession(endpoint, reply.payload, channel, options.deadlineMs, seq);
  } catch (e) {
    await channel.close();
    throw e;
  }
};
