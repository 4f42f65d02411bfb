/**
 * One connection to a policy server IMEP did not write (openpi's WebsocketPolicyServer, a vla-eval model server):
 * the server runs unmodified and IMEP speaks its wire protocol. A session serves ONE episode slot at a time (a
 * server may keep per-connection state, so slots never share a connection). Implementations: openpi-session.ts,
 * vla-eval-session.ts; the runtime kinds (src/campaign/server-runtime*.ts) drive them through ServerPolicy.
 *
 * Every failure is an ImepError whose message names the endpoint, in one line: E_BRIDGE_PROTOCOL (the server sent
 * something that is not the protocol: no metadata, a non-msgpack frame, a traceback string, an error message, a reply
 * without the action), E_BRIDGE_TIMEOUT (no reply within the deadline), E_BRIDGE_REMOTE (not listening, connection
 * lost, server died). Before precommit they refuse the run (nothing written); during the run the episode is an
 * execution failure under the registered failure budget (src/campaign/row-failure.ts).
 */
import type { NdArray } from '../../runtime/index.js';

/** A value on a policy server's wire: an ndarray (msgpack-numpy), or plain msgpack data. */
export type WireValue =
  NdArray | string | number | boolean | null | readonly WireValue[] | { readonly [key: string]: WireValue };

export type WireMap = Readonly<Record<string, WireValue>>;

/** What the episode is, as much as a server may be told (never seed, fact or the plan's episode id). */
export interface ServerEpisodeStart {
  /** The task's instruction (the prompt), when the environment declares one. */
  readonly instruction?: string;
  /** The environment id (vla-eval's EPISODE_START task name). */
  readonly envId: string;
}

export interface ServerSession {
  /** The endpoint as the user wrote it (ws://host:port[/path]); named in every error. */
  readonly endpoint: string;
  /** What the server said first: openpi's metadata frame, vla-eval's HELLO payload. */
  readonly metadata: WireMap;
  /** Starts an episode (vla-eval: EPISODE_START; openpi: nothing on the wire). */
  startEpisode(start: ServerEpisodeStart): Promise<void>;
  /** One inference: the observation dict in, the server's reply dict (its action or action chunk) out. */
  infer(observation: WireMap): Promise<WireMap>;
  /** Ends the episode (vla-eval: EPISODE_END with the result; openpi: nothing on the wire). */
  endEpisode(result: { readonly success: boolean; readonly steps: number }): Promise<void>;
  /** Closes the connection; idempotent. */
  close(): Promise<void>;
}

export interface ServerConnectOptions {
  /** Deadline of the handshake and of every call (ms). */
  readonly deadlineMs: number;
}

/** Opens a session to a server of one wire protocol. */
export type ServerConnector = (endpoint: string, options: ServerConnectOptions) => Promise<ServerSession>;
