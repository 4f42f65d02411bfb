/**
 * The bridge client (ZeroMQ DEALER): calls with per-call deadlines, several in flight matched by id,
 * heartbeat pings while idle, and `memory.read` requests from the server answered through a ReadHook.
 *
 * A call that passes its deadline fails with E_BRIDGE_TIMEOUT (or E_BRIDGE_REMOTE when the supervised
 * server process is known dead); the client then rejects every other pending call, closes its socket
 * (ZeroMQ would otherwise keep the requests queued for a reconnect) and opens a fresh one. A call never
 * hangs past its deadline. A missed heartbeat marks the connection dead: calls then fail fast with that
 * error until `reconnect()`.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import * as zmq from 'zeromq';
import type { ReadHook } from '../banks/index.js';
import { ImepError, isImepError, OUTSIDE_MESSAGE_MAX, outsideText, outsideTree } from '../core/index.js';
import { checkEndpointPolicy, type CurveClientKeys } from './endpoint.js';
import { decodeMessage, encodeError, encodeMessage, parseReplyBody, type RequestMessage } from './envelope.js';
import type { HelloReply, ReplyBodies, RequestInputs, RequestOp } from './op-schemas.js';
import { errorFromWire } from './remote-error.js';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

/** What a supervisor tells the client about the server process. */
export interface RemoteLiveness {
  /** E_BRIDGE_REMOTE naming the exit status once the process has died; undefined while it runs. */
  deathError(): ImepError | undefined;
  /** Called once per death; returns an unsubscribe function. */
  onDeath(listener: (error: ImepError) => void): () => void;
}

export interface BridgeClientOptions {
  readonly endpoint: string;
  readonly curve?: CurveClientKeys;
  /** Default per-call deadline (ms). */
  readonly deadlineMs?: number;
  /** Idle time after which a ping is sent (ms); 0 disables heartbeats. */
  readonly heartbeatMs?: number;
  /** Deadline of a heartbeat ping (ms). */
  readonly heartbeatDeadlineMs?: number;
  /** Passes the items of server → client `memory.read` requests; without one such reads are refused. */
  readonly readHook?: ReadHook;
  readonly liveness?: RemoteLiveness;
  /** Sent in `hello`. */
  readonly clientName?: string;
  /**
   * The largest message accepted from the server (bytes; default DEFAULT_MAX_MESSAGE_BYTES). ZeroMQ drops the
   * connection on a larger one before allocating it; the call it answered then fails at its deadline, saying so.
   */
  readonly maxMessageBytes?: number;
}

export interface CallOptions {
  readonly deadlineMs?: number;
}

/** A call's options, with a check of its reply made as the reply arrives (no extra promise on the hot path). */
export interface CheckedCallOptions<T> extends CallOptions {
  /** Returns the body the call resolves with, or throws the ImepError it rejects with. */
  readonly check?: (body: T) => T;
}

interface Pending {
  readonly op: RequestOp;
  readonly deadlineMs: number;
  /** performance.now() at which the call is due. */
  readonly due: number;
  readonly check: ((body: never) => unknown) | undefined;
  resolve(body: unknown): void;
  reject(error: ImepError): void;
}

export const DEFAULT_DEADLINE_MS = 30_000;
/**
 * The wire cap of a message from a server: 256 MiB, over 20× a stepBatch of 64 slots with two 256×256 RGB cameras.
 * A server cannot make IMEP allocate more for one message (an observation's own size is then the spec's:
 * observation-spec.ts).
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/**
 * Replies whose every string and key is outside text that IMEP prints, records or reports (server and policy names,
 * versions, env ids, spec fields and observation keys, adapter metadata, policy identities): cleaned and capped
 * once here (src/core/outside-text.ts). The hot ops' observations are checked against the declared spec instead.
 */
const CLEANED_OPS: ReadonlySet<RequestOp> = new Set<RequestOp>(['hello', 'make', 'makeBatch']);

const ignore = (): void => undefined;
export const DEFAULT_HEARTBEAT_MS = 5_000;

export class BridgeClient {
  readonly endpoint: string;
  readonly #options: BridgeClientOptions;
  #socket: zmq.Dealer | undefined;
  #generation = 0;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #outbox: { gen: number; bytes: Buffer }[] = [];
  #pumping = false;
  #lastSend: Promise<void> = Promise.resolve();
  #dead: ImepError | undefined;
  #closed = false;
  #handshakeError: string | undefined;
  /** Connections the server side dropped since the socket opened (a message over the cap is one way). */
  #disconnects = 0;
  #lastActivity = performance.now();
  #heartbeat: NodeJS.Timeout | undefined;
  /**
   * One deadline timer for all calls (not one setTimeout per call): armed for the earliest due call
   * when a call is earlier than what it is armed for; when it fires it fails the calls past due and
   * re-arms for the next. While nothing is pending it stays armed but unref'd (it keeps no process alive).
   */
  #deadlineTimer: NodeJS.Timeout | undefined;
  #timerDue = Infinity;
  #heartbeatInFlight = false;
  #readHook: ReadHook | undefined;
  readonly #unsubscribe: (() => void) | undefined;
  readonly #deadListeners = new Set<(error: ImepError) => void>();

  constructor(options: BridgeClientOptions) {
    checkEndpointPolicy(options.endpoint, options.curve !== undefined);
    this.endpoint = options.endpoint;
    this.#options = options;
    this.#readHook = options.readHook;
    this.#unsubscribe = options.liveness?.onDeath((e) => this.#failAll(e));
  }

  /** Opens the socket and says hello (the reply names the server, its ops and envs). */
  async connect(options: CallOptions = {}): Promise<HelloReply> {
    if (this.#socket === undefined) this.#openSocket();
    const hello = await this.call(
      'hello',
      { client: { name: this.#options.clientName ?? 'imep', version: pkg.version } },
      options,
    );
    this.#startHeartbeat();
    return hello;
  }

  /** Clears a dead mark, opens a fresh socket and says hello again (after a server restart). */
  async reconnect(options: CallOptions = {}): Promise<HelloReply> {
    this.#dead = undefined;
    this.#resetSocket();
    return this.connect(options);
  }

  /** True until a heartbeat is missed or the supervised process dies. */
  get alive(): boolean {
    return this.#dead === undefined && this.#options.liveness?.deathError() === undefined;
  }

  get inFlight(): number {
    return this.#pending.size;
  }

  /** Listens for the connection being marked dead; returns an unsubscribe function. */
  onDead(listener: (error: ImepError) => void): () => void {
    this.#deadListeners.add(listener);
    return () => this.#deadListeners.delete(listener);
  }

  /** Sets the hook that server → client `memory.read` items pass through. */
  setReadHook(hook: ReadHook | undefined): void {
    this.#readHook = hook;
  }

  /** One request → one reply, or a typed rejection no later than the deadline. */
  call<K extends RequestOp>(
    op: K,
    body: RequestInputs[K],
    options: CheckedCallOptions<ReplyBodies[K]> = {},
  ): Promise<ReplyBodies[K]> {
    if (this.#closed)
      return Promise.reject(new ImepError('E_INTERNAL', `bridge client for ${this.endpoint} is closed`));
    const remote = this.#options.liveness?.deathError();
    if (remote) return Promise.reject(remote);
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#socket === undefined) this.#openSocket();
    const id = this.#takeId();
    const encoded = encodeMessage({ kind: 'request', id, op, body } as Parameters<typeof encodeMessage>[0]);
    if (!encoded.ok)
      return Promise.reject(
        new ImepError('E_BRIDGE_PROTOCOL', `${op}: cannot encode request: ${encoded.message}`, { field: op }),
      );
    const deadlineMs = options.deadlineMs ?? this.#options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    return new Promise<ReplyBodies[K]>((resolve, reject) => {
      const due = performance.now() + deadlineMs;
      this.#pending.set(id, {
        op,
        deadlineMs,
        due,
        check: options.check,
        resolve: resolve as (b: unknown) => void,
        reject,
      });
      this.#armDeadline(due);
      this.#send(encoded.bytes);
    });
  }

  /** Rejects pending calls, stops heartbeats and closes the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe?.();
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    if (this.#deadlineTimer) clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    this.#rejectPending(new ImepError('E_INTERNAL', `bridge client for ${this.endpoint} closed with calls in flight`));
    this.#closeSocket();
  }

  #takeId(): number {
    const id = this.#nextId;
    this.#nextId = id >= 0xffffffff ? 1 : id + 1;
    return id;
  }

  #openSocket(): void {
    const curve = this.#options.curve;
    const socket = new zmq.Dealer({
      linger: 0,
      maxMessageSize: this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      ...(curve
        ? { curveServerKey: curve.serverPublicKey, curvePublicKey: curve.publicKey, curveSecretKey: curve.secretKey }
        : {}),
    });
    socket.connect(this.endpoint);
    this.#socket = socket;
    this.#generation += 1;
    this.#handshakeError = undefined;
    this.#disconnects = 0;
    void this.#receiveLoop(socket, this.#generation);
    void this.#watchEvents(socket, this.#generation);
  }

  #closeSocket(): void {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#generation += 1;
    this.#outbox.length = 0;
    if (socket && !socket.closed) socket.close();
  }

  #resetSocket(): void {
    this.#closeSocket();
    if (!this.#closed) this.#openSocket();
  }

  #send(bytes: Buffer): void {
    this.#lastActivity = performance.now();
    const socket = this.#socket;
    if (socket === undefined) return;
    if (!this.#pumping) {
      // fast path: ZeroMQ queues the frame at once; while a send is blocked, later ones wait in the outbox
      let sent: Promise<void>;
      try {
        sent = socket.send(bytes);
      } catch {
        return; // the socket closed under us: the call's deadline (or close()) settles it
      }
      this.#pumping = true;
      this.#lastSend = sent;
      sent.then(
        () => this.#drained(),
        () => this.#drained(),
      );
      return;
    }
    this.#outbox.push({ gen: this.#generation, bytes });
  }

  #drained(): void {
    this.#pumping = false;
    if (this.#outbox.length > 0) void this.#pump();
  }

  /** ZeroMQ allows one blocking send at a time: sends that find one in progress queue here. */
  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      for (let item = this.#outbox.shift(); item !== undefined; item = this.#outbox.shift()) {
        await this.#lastSend.catch(ignore);
        const socket = this.#socket;
        if (socket === undefined || item.gen !== this.#generation) continue;
        try {
          this.#lastSend = socket.send(item.bytes);
          await this.#lastSend;
        } catch {
          // the socket was closed under a blocked send (reset after a timeout): the call's own deadline reports it
        }
      }
    } finally {
      this.#pumping = false;
    }
  }

  async #receiveLoop(socket: zmq.Dealer, gen: number): Promise<void> {
    try {
      for await (const frames of socket) {
        if (gen !== this.#generation) break;
        this.#lastActivity = performance.now();
        await this.#onMessage(frames);
      }
    } catch {
      // closed while receiving
    }
  }

  async #watchEvents(socket: zmq.Dealer, gen: number): Promise<void> {
    try {
      for await (const event of socket.events) {
        if (gen !== this.#generation) break;
        if (event.type === 'handshake') this.#handshakeError = undefined;
        else if (event.type === 'disconnect') this.#disconnects += 1;
        else if (event.type.startsWith('handshake:error')) {
          const detail = 'error' in event && event.error instanceof Error ? event.error.message : event.type;
          this.#handshakeError = `${event.type} (${detail})`;
          this.#rejectPending(
            new ImepError('E_BRIDGE_PROTOCOL', `handshake with ${this.endpoint} failed: ${this.#handshakeError}`, {
              hint: this.#options.curve
                ? 'check the server public key and that the server uses Curve'
                : 'does the server require CurveZMQ keys?',
            }),
          );
        }
      }
    } catch {
      // socket closed
    }
  }

  async #onMessage(frames: readonly Buffer[]): Promise<void> {
    const decoded = decodeMessage(frames, { serves: ['memory.read'] });
    if (!decoded.ok) {
      if (decoded.id === null) return; // unattributable: the call it answers (if any) times out
      if (decoded.op === 'reply' || decoded.op === 'error') {
        this.#settle(
          decoded.id,
          new ImepError(
            'E_BRIDGE_PROTOCOL',
            `malformed reply: ${decoded.code}: ${outsideText(decoded.message, OUTSIDE_MESSAGE_MAX)}`,
          ),
        );
      } else if (decoded.op !== null) {
        // a malformed or unserved request from the server (its id space): answer it with the error
        this.#send(encodeError(decoded.id, decoded.code, decoded.message));
      }
      return;
    }
    const msg = decoded.message;
    if (msg.kind === 'request') return this.#serveRequest(msg);
    if (msg.id === null) return; // the server could not read one of our messages; its call will time out
    if (msg.kind === 'error') {
      const p = this.#pending.get(msg.id);
      this.#settle(msg.id, errorFromWire(p?.op ?? 'call', msg.code, msg.message));
      return;
    }
    const p = this.#pending.get(msg.id);
    if (p === undefined) return; // a late reply to a call already failed
    const parsed = parseReplyBody(p.op, msg.body);
    if (!parsed.ok) {
      const message = outsideText(parsed.message, OUTSIDE_MESSAGE_MAX);
      this.#settle(msg.id, new ImepError('E_BRIDGE_PROTOCOL', message, { field: p.op }));
      return;
    }
    let value: unknown = CLEANED_OPS.has(p.op) ? outsideTree(parsed.body) : parsed.body;
    if (p.check !== undefined) {
      try {
        value = p.check(value as never);
      } catch (e) {
        this.#settle(msg.id, isImepError(e) ? e : new ImepError('E_BRIDGE_PROTOCOL', outsideText(String(e))));
        return;
      }
    }
    this.#settle(msg.id, { value });
  }

  #settle(id: number, outcome: { value: unknown } | ImepError): void {
    const p = this.#pending.get(id);
    if (p === undefined) return;
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#deadlineTimer?.unref();
    if (outcome instanceof ImepError) p.reject(outcome);
    else p.resolve(outcome.value);
  }

  /** Answers a server → client request; only `memory.read` is served. */
  async #serveRequest(msg: RequestMessage): Promise<void> {
    if (msg.op !== 'memory.read') {
      this.#send(encodeError(msg.id, 'E_UNKNOWN_OP', `the client serves memory.read only, not ${msg.op}`));
      return;
    }
    const hook = this.#readHook;
    if (hook === undefined) {
      this.#send(
        encodeError(msg.id, 'E_UNKNOWN_OP', 'memory.read refused: no read hook is registered with this client'),
      );
      return;
    }
    let items;
    try {
      items = hook(msg.body.items, msg.body.ctx);
    } catch (e) {
      this.#send(encodeError(msg.id, 'E_ADAPTER', `read hook raised: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    const reply = encodeMessage({ kind: 'reply', id: msg.id, body: { items } });
    this.#send(
      reply.ok
        ? reply.bytes
        : encodeError(msg.id, 'E_ADAPTER', `read hook returned unsendable items: ${reply.message}`),
    );
  }

  #armDeadline(due: number): void {
    const timer = this.#deadlineTimer;
    if (timer !== undefined && due >= this.#timerDue) {
      if (!timer.hasRef()) timer.ref();
      return;
    }
    if (timer !== undefined) clearTimeout(timer);
    this.#timerDue = due;
    // +1 ms: node's timers run on whole milliseconds of loop time and may fire a fraction early
    this.#deadlineTimer = setTimeout(() => this.#onDeadlines(), Math.max(0, due - performance.now()) + 1);
  }

  /** The deadline timer fired: fail the earliest call past due (which resets the rest), re-arm for the next. */
  #onDeadlines(): void {
    this.#deadlineTimer = undefined;
    this.#timerDue = Infinity;
    const now = performance.now();
    let first: number | undefined;
    let firstDue = Infinity;
    for (const [id, p] of this.#pending) {
      if (p.due < firstDue) {
        firstDue = p.due;
        first = id;
      }
    }
    if (first === undefined) return;
    // #onTimeout fails every pending call (and resets the socket), so nothing is left to re-arm for
    if (firstDue <= now) this.#onTimeout(first);
    else this.#armDeadline(firstDue);
  }

  #onTimeout(id: number): void {
    const p = this.#pending.get(id);
    if (p === undefined) return;
    const remote = this.#options.liveness?.deathError();
    const handshake = this.#handshakeError ? ` (last handshake error: ${this.#handshakeError})` : '';
    const cap = this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const dropped =
      this.#disconnects > 0
        ? ` (the connection dropped while it waited: a reply over the ${cap}-byte message cap is refused so, or the server went away)`
        : '';
    const error =
      remote ??
      new ImepError(
        'E_BRIDGE_TIMEOUT',
        `${p.op} #${id}: no reply from ${this.endpoint} within ${p.deadlineMs} ms${handshake}${dropped}`,
        {
          field: p.op,
          hint: 'the server may be dead, stopped or overloaded; it is checked and the connection is reset',
        },
      );
    this.#settle(id, error);
    this.#rejectPending(
      new ImepError('E_BRIDGE_TIMEOUT', `call reset: call #${id} (${p.op}) to ${this.endpoint} timed out`),
    );
    this.#resetSocket();
  }

  #rejectPending(error: ImepError): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id, error);
  }

  /** The remote died or a heartbeat was missed: fail everything now and fail fast until reconnect(). */
  #failAll(error: ImepError): void {
    if (this.#closed) return;
    this.#dead = error;
    this.#rejectPending(error);
    this.#resetSocket();
    for (const listener of this.#deadListeners) listener(error);
  }

  #startHeartbeat(): void {
    const every = this.#options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    if (every <= 0 || this.#heartbeat !== undefined) return;
    this.#heartbeat = setInterval(() => void this.#beat(every), Math.max(10, Math.floor(every / 2)));
    this.#heartbeat.unref();
  }

  async #beat(every: number): Promise<void> {
    if (this.#closed || this.#dead || this.#heartbeatInFlight || this.#pending.size > 0) return;
    if (performance.now() - this.#lastActivity < every) return;
    this.#heartbeatInFlight = true;
    try {
      await this.call('ping', {}, { deadlineMs: this.#options.heartbeatDeadlineMs ?? every });
    } catch (e) {
      const error = e instanceof ImepError ? e : new ImepError('E_BRIDGE_TIMEOUT', String(e));
      this.#failAll(new ImepError(error.code, `missed heartbeat: ${error.message}`, { cause: error }));
    } finally {
      this.#heartbeatInFlight = false;
    }
  }
}
