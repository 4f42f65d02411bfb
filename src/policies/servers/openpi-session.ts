/**
 * IMEP's side of openpi's WebSocket policy protocol, as openpi-server 0.1.0 (openpi_server/websocket_policy_server.py)
 * serves it and openpi-client 0.1.2 (openpi_client/websocket_client_policy.py) speaks it:
 *
 *   - connect: a WebSocket, no compression, no size limit (the client's `connect(uri, compression=None,
 *     max_size=None)`); the server sends the metadata dict first (msgpack-numpy, openpi dialect), unasked.
 *   - infer: one binary frame, the packed observation dict; the reply is one binary frame, the packed dict the
 *     policy's `infer` returned plus the key "server_timing" ({ infer_ms, prev_total_ms? }) the server adds.
 *     `infer` here returns the policy's dict WITHOUT "server_timing" (the server's clock is not the policy's output,
 *     and rows must not depend on it); the last timing is kept in `lastServerTiming`.
 *   - errors: when the policy raises, the server sends the traceback as a TEXT frame and closes with 1011 (INTERNAL
 *     ERROR, reason "Internal server error. Traceback included in previous frame."): E_BRIDGE_PROTOCOL naming the
 *     endpoint and the traceback's last line. The session is then broken (the server closed it).
 *   - episodes: nothing on the wire (openpi has no episode messages; the policy's `reset` is not remote).
 *   - health: plain HTTP GET /healthz on the same port answers 200 "OK\n" (the server's `process_request`):
 *     `checkOpenpiHealth`.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ImepError } from '../../core/index.js';
import { MsgpackNumpyError, packWire, unpackWireMap } from './msgpack-numpy.js';
import type { ServerConnectOptions, ServerConnector, ServerSession, WireMap } from './session.js';
import { lastLine, oneLine, WsChannel, type Frame } from './ws-channel.js';

/** The key openpi's server adds to every reply (removed from what `infer` returns). */
export const OPENPI_SERVER_TIMING_KEY = 'server_timing';

export interface OpenpiSession extends ServerSession {
  /** The "server_timing" of the last reply ({ infer_ms, prev_total_ms? }), if the server sent one. */
  readonly lastServerTiming: WireMap | undefined;
}

class OpenpiWsSession implements OpenpiSession {
  lastServerTiming: WireMap | undefined;
  private busy = false;

  constructor(
    readonly endpoint: string,
    readonly metadata: WireMap,
    private readonly channel: WsChannel,
    private readonly deadlineMs: number,
  ) {}

  startEpisode(): Promise<void> {
    return Promise.resolve().then(() => this.channel.check());
  }

  async infer(observation: WireMap): Promise<WireMap> {
    if (this.busy) throw new Error(`${this.endpoint}: infer while a call is pending (one call at a time)`);
    this.busy = true;
    try {
      this.channel.check();
      let frame: Uint8Array;
      try {
        frame = packWire(observation, 'openpi', 'observation');
      } catch (e) {
        throw asProtocol(this.endpoint, e, 'cannot send the observation');
      }
      await this.channel.send(frame);
      const reply = await this.channel.recv(this.deadlineMs, 'reply to infer');
      const map = replyMap(this.endpoint, reply, this.channel, 'an action');
      const { [OPENPI_SERVER_TIMING_KEY]: timing, ...action } = map;
      this.lastServerTiming = timing !== undefined && isPlainMap(timing) ? timing : undefined;
      return action;
    } finally {
      this.busy = false;
    }
  }

  endEpisode(): Promise<void> {
    return Promise.resolve().then(() => this.channel.check());
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}

function isPlainMap(v: unknown): v is WireMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !('dtype' in v && 'data' in v);
}

function asProtocol(endpoint: string, e: unknown, what: string): Error {
  if (e instanceof MsgpackNumpyError) return new ImepError('E_BRIDGE_PROTOCOL', `${endpoint}: ${what}: ${e.message}`);
  return e as Error;
}

/** A binary frame holding a msgpack map; a text frame is the server's traceback. Breaks the channel on failure. */
function replyMap(endpoint: string, frame: Frame, channel: WsChannel, expected: string): WireMap {
  let err: ImepError;
  if (!frame.binary) {
    err = new ImepError(
      'E_BRIDGE_PROTOCOL',
      `${endpoint}: the server sent a traceback instead of ${expected}: ${lastLine(frame.data.toString('utf8'))}`,
      { hint: 'the policy raised on the server; its log has the whole traceback' },
    );
  } else {
    try {
      return unpackWireMap(frame.data, 'reply');
    } catch (e) {
      if (!(e instanceof MsgpackNumpyError)) throw e;
      err = new ImepError('E_BRIDGE_PROTOCOL', `${endpoint}: ${e.message} (expected ${expected})`, {
        hint: 'is this an openpi policy server?',
      });
    }
  }
  channel.fail(err);
  void channel.close();
  throw err;
}

/**
 * Connects to an openpi WebsocketPolicyServer and reads its metadata frame (all within `deadlineMs`). A
 * ServerConnector whose sessions also carry `lastServerTiming`.
 */
export const connectOpenpi = (async (endpoint: string, options: ServerConnectOptions): Promise<OpenpiSession> => {
  const started = Date.now();
  const channel = await WsChannel.open(endpoint, options.deadlineMs);
  try {
    const left = Math.max(1, options.deadlineMs - (Date.now() - started));
    const first = await channel.recv(left, 'metadata frame', options.deadlineMs);
    const metadata = replyMap(endpoint, first, channel, 'the metadata frame');
    return new OpenpiWsSession(endpoint, metadata, channel, options.deadlineMs);
  } catch (e) {
    await channel.close();
    throw e;
  }
}) satisfies ServerConnector;

/**
 * openpi's health check: plain HTTP GET /healthz on the endpoint's host and port (its path is not used: the server
 * answers /healthz whatever path its WebSocket is reached on) must answer 200 within `deadlineMs`.
 */
export function checkOpenpiHealth(endpoint: string, deadlineMs: number): Promise<void> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return Promise.reject(new ImepError('E_BRIDGE_REMOTE', `${endpoint}: not a ws:// URL`));
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    return Promise.reject(new ImepError('E_BRIDGE_REMOTE', `${endpoint}: not a ws:// or wss:// URL`));
  const secure = url.protocol === 'wss:';
  const target = new URL('/healthz', `${secure ? 'https' : 'http'}://${url.host}`);
  return new Promise<void>((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(target, { method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        if (res.statusCode === 200) resolve();
        else
          reject(
            new ImepError(
              'E_BRIDGE_PROTOCOL',
              `${endpoint}: GET /healthz answered HTTP ${res.statusCode ?? '?'} ${oneLine(Buffer.concat(chunks).toString('utf8').slice(0, 200))}`,
              { hint: 'is this an openpi policy server?' },
            ),
          );
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new ImepError('E_BRIDGE_TIMEOUT', `${endpoint}: GET /healthz got no answer within ${deadlineMs} ms`));
    }, deadlineMs);
    req.on('error', (e: Error & { code?: string }) => {
      clearTimeout(timer);
      reject(
        e.code === 'ECONNREFUSED'
          ? new ImepError('E_BRIDGE_REMOTE', `${endpoint}: not listening (GET /healthz: connection refused)`, {
              hint: 'start the policy server first; IMEP starts nothing',
            })
          : new ImepError('E_BRIDGE_REMOTE', `${endpoint}: GET /healthz failed (${oneLine(e.message)})`),
      );
    });
    req.end();
  });
}
