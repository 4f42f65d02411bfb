/**
 * BankHookMemory: the memory of a policy server that keeps its own bank (MemoryVLA-style) and routes every bank read
 * through IMEP's read hook over the bank-hook extension (sim-bridge/PROTOCOL.md, "Server-side banks"). The
 * server's protocol is unchanged (openpi's WebsocketPolicyServer calls `policy.infer(obs)` synchronously inside its
 * handler, so a read cannot come back in-band): IMEP listens on a loopback WebSocket endpoint of its own, and every
 * observation it sends carries `imep/bank_hook` = { endpoint, token }. The server's wrapper
 * (sim-bridge/imep_sim_bridge/bank_hook.py) sends each read there as a `memory.read` message and uses the items IMEP
 * answers with.
 *
 * - The token is random, fresh at every resetSlot, and never the episode id (episode-tokens.ts); ids the server sends
 *   (ctx.scope, identities) are mapped back to episode ids before the hook sees them, and the hook's answer is mapped
 *   to tokens again. `ctx.episode` must be the message's token.
 * - A read is answered only while a call of the token's slot is in flight (between beginCall and endCall). A read
 *   with an unknown or stale token, or outside a call, is refused with an error reply: the wrapper raises, the
 *   server's infer fails, the episode fails — it is never served unintervened.
 * - `ctx.decisionStep` is the evaluator's (the call's `decision`), not the server's.
 * - endCall returns IMEP's own record of the call's reads: the contexts the hook received and the identities it
 *   returned, in order. A connection may make any number of reads per call.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { ReadHook, RetrievedItem } from '../../banks/index.js';
import { identityReadHook } from '../../banks/index.js';
import { ImepError } from '../../core/index.js';
import type { ReadReadout } from '../../runtime/index.js';
import { EpisodeTokens } from '../episode-tokens.js';
import {
  BankHookRefusal,
  decodeBankHookRead,
  encodeBankHookError,
  encodeBankHookResult,
  type BankHookRead,
} from './bank-hook-wire.js';
import type { ServerCall, ServerMemory } from './server-memory.js';
import type { WireMap } from './session.js';

/** The observation entry IMEP adds to every call of a bank-hook server. */
export const BANK_HOOK_KEY = 'imep/bank_hook';

export interface BankHookMemoryOptions {
  /** Largest message accepted from a server (bytes; default 64 MiB). */
  readonly maxPayloadBytes?: number;
}

interface Call {
  readonly step: number;
  readonly decision: boolean;
  readonly reads: ReadReadout[];
}

interface Slot {
  episode: string | undefined;
  token: string | undefined;
  call: Call | undefined;
}

export class BankHookMemory implements ServerMemory {
  readonly name: string;
  /** ws://127.0.0.1:PORT, where the server's wrapper sends its reads. */
  readonly endpoint: string;
  readonly #server: WebSocketServer;
  readonly #sockets = new Set<WebSocket>();
  readonly #tokens = new EpisodeTokens();
  readonly #slots = new Map<number, Slot>();
  /** The current token of each slot → the slot (a token leaves when its slot is reset: it is stale). */
  readonly #slotOfToken = new Map<string, number>();
  #hook: ReadHook = identityReadHook;
  #readsSeen = 0;
  #refused = 0;
  #closed: Promise<void> | undefined;

  private constructor(server: WebSocketServer, port: number) {
    this.#server = server;
    this.endpoint = `ws://127.0.0.1:${port}`;
    this.name = `bank hook at ${this.endpoint}`;
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => socket.terminate());
      socket.on('message', (data, isBinary) => this.#onMessage(socket, data, isBinary));
    });
  }

  /** Listens on 127.0.0.1 at an ephemeral port; close() releases it. */
  static async start(options: BankHookMemoryOptions = {}): Promise<BankHookMemory> {
    const server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      maxPayload: options.maxPayloadBytes ?? 64 * 1024 * 1024,
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error): void => {
        server.off('listening', onListening);
        reject(
          new ImepError('E_BRIDGE_REMOTE', `bank hook: cannot listen on 127.0.0.1: ${e.message}`, {
            field: 'policy.bankHook',
            cause: e,
          }),
        );
      };
      const onListening = (): void => {
        server.off('error', onError);
        resolve();
      };
      server.once('error', onError);
      server.once('listening', onListening);
    });
    return new BankHookMemory(server, (server.address() as AddressInfo).port);
  }

  /** memory.read messages answered through the hook so far. */
  get readsSeen(): number {
    return this.#readsSeen;
  }

  /** memory.read messages refused so far (bad message, unknown or stale token, no call in flight, hook failure). */
  get readsRefused(): number {
    return this.#refused;
  }

  setReadHook(hook: ReadHook): void {
    this.#hook = hook;
  }

  resetSlot(slot: number, episode: string): void {
    if (!Number.isInteger(slot) || slot < 0) {
      throw new ImepError('E_USAGE', `BankHookMemory: slot ${slot} is not an integer ≥ 0`, { field: 'slot' });
    }
    const s = this.#slot(slot);
    if (s.token !== undefined) this.#slotOfToken.delete(s.token);
    s.episode = episode;
    s.token = this.#tokens.issue(episode);
    s.call = undefined;
    this.#slotOfToken.set(s.token, slot);
  }

  /** `{ "imep/bank_hook": { endpoint, token } }`; the slot's reads are answered until endCall. */
  beginCall(call: ServerCall): Promise<WireMap> {
    const s = this.#slots.get(call.slot);
    if (s?.token === undefined) {
      return Promise.reject(
        new ImepError('E_USAGE', `BankHookMemory: slot ${call.slot} was not reset`, { field: 'slot' }),
      );
    }
    if (this.#closed !== undefined) {
      return Promise.reject(new ImepError('E_INTERNAL', `${this.name}: beginCall after close`));
    }
    // a call that never ended (its infer failed) is dropped with its reads
    s.call = { step: call.step, decision: call.decision, reads: [] };
    return Promise.resolve({ [BANK_HOOK_KEY]: { endpoint: this.endpoint, token: s.token } });
  }

  endCall(slot: number): readonly ReadReadout[] {
    const s = this.#slots.get(slot);
    const call = s?.call;
    if (s === undefined || call === undefined) return [];
    s.call = undefined;
    return call.reads;
  }

  /** Closes every hook connection and the listening socket (the port is free when it resolves); idempotent. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      for (const socket of this.#sockets) socket.terminate();
      this.#server.close(() => resolve());
    });
    return this.#closed;
  }

  #slot(slot: number): Slot {
    let s = this.#slots.get(slot);
    if (s === undefined) {
      s = { episode: undefined, token: undefined, call: undefined };
      this.#slots.set(slot, s);
    }
    return s;
  }

  #onMessage(socket: WebSocket, data: RawData, isBinary: boolean): void {
    let reply: Buffer;
    try {
      if (!isBinary) throw new BankHookRefusal('E_BANK_HOOK_MESSAGE', 'a text frame; messages are msgpack (binary)');
      const frame = Array.isArray(data)
        ? Buffer.concat(data)
        : data instanceof ArrayBuffer
          ? new Uint8Array(data)
          : data;
      const read = decodeBankHookRead(frame);
      const answer = this.#answer(read);
      reply = encodeBankHookResult(read.id, answer.items);
      // recorded once the answer is on its way (an answer that cannot be encoded is a refusal, not a read)
      answer.call.reads.push(answer.readout);
      this.#readsSeen += 1;
    } catch (e) {
      this.#refused += 1;
      const refusal =
        e instanceof BankHookRefusal
          ? e
          : new BankHookRefusal(
              'E_BANK_HOOK_READ',
              `the read hook failed: ${e instanceof Error ? e.message : String(e)}`,
            );
      reply = encodeBankHookError(refusal.id, refusal.code, `${this.name}: ${refusal.message}`);
    }
    if (socket.readyState === socket.OPEN) socket.send(reply);
  }

  /** What the hook returns for the read (in the server's ids), the call it belongs to and IMEP's record of it. */
  #answer(read: BankHookRead): { items: readonly RetrievedItem[]; call: Call; readout: ReadReadout } {
    const id = read.id;
    const slot = this.#slotOfToken.get(read.token);
    if (slot === undefined) {
      const why = this.#tokens.has(read.token) ? 'is stale (its episode is over)' : 'was not issued by IMEP';
      throw new BankHookRefusal('E_BANK_HOOK_TOKEN', `memory.read refused: token '${read.token}' ${why}`, id);
    }
    const s = this.#slots.get(slot) as Slot;
    const call = s.call;
    if (call === undefined) {
      throw new BankHookRefusal(
        'E_BANK_HOOK_NO_CALL',
        `memory.read refused: no call of the token's episode is in flight (reads are made inside the server's infer)`,
        id,
      );
    }
    if (read.ctx.episode !== read.token) {
      throw new BankHookRefusal(
        'E_BANK_HOOK_MESSAGE',
        `memory.read refused: ctx.episode must be the token of imep/bank_hook, got '${read.ctx.episode}'`,
        id,
      );
    }
    if (read.ctx.bank !== read.bank) {
      throw new BankHookRefusal(
        'E_BANK_HOOK_MESSAGE',
        `memory.read refused: ctx.bank '${read.ctx.bank}' differs from bank '${read.bank}'`,
        id,
      );
    }
    const ctx = {
      ...read.ctx,
      scope: this.#tokens.episodeFor(read.ctx.scope),
      episode: s.episode as string,
      decisionStep: call.decision,
    };
    const items = read.items.map((item) => ({ ...item, identity: this.#tokens.fromPolicy(item.identity) }));
    let out: readonly RetrievedItem[];
    try {
      out = this.#hook(items, ctx);
    } catch (e) {
      throw new BankHookRefusal(
        'E_BANK_HOOK_READ',
        `the read hook failed: ${e instanceof Error ? e.message : String(e)}`,
        id,
      );
    }
    return {
      items: out.map((item) => ({ ...item, identity: this.#tokens.toPolicy(item.identity) })),
      call,
      readout: { ctx, identities: out.map((item) => item.identity) },
    };
  }
}
