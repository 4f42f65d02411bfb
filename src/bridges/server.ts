/**
 * A generic bridge server (ZeroMQ ROUTER) hosting SimEnvironments from a factory: hello / ping / make /
 * reset / step / close of protocol v1. Malformed messages get error replies (id null when the id could
 * not be read) and the server keeps serving. Requests are served one at a time in arrival order;
 * handles are `h1`, `h2`, … in creation order. One client (ROUTER peer) holds at most MAX_HANDLES_PER_CLIENT open
 * handles; a further `make` is E_TOO_MANY_HANDLES until it closes one.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import * as zmq from 'zeromq';
import { isImepError } from '../core/index.js';
import { splitBySpec } from '../runtime/index.js';
import { checkEndpointPolicy, type CurveServerKeys } from './endpoint.js';
import { FrameSlab } from './frame-slab.js';
import { decodeMessage, encodeError, encodeMessage, type RequestMessage } from './envelope.js';
import {
  BATCH_OPS,
  MAX_HANDLES_PER_CLIENT,
  POLICY_OPS,
  PROTOCOL_VERSION,
  REQUEST_OPS,
  type RequestOp,
  type WireErrorCode,
} from './op-schemas.js';
import type { NdArray, SimEnvironment, StepResult } from '../runtime/index.js';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

export type EnvFactory = (
  envId: string,
  kwargs: Readonly<Record<string, unknown>>,
) => SimEnvironment | Promise<SimEnvironment>;

export interface BridgeServerOptions {
  readonly endpoint: string;
  readonly factory: EnvFactory;
  /** The env ids `make` accepts (announced in `hello`); others get E_UNKNOWN_ENV. */
  readonly envIds: readonly string[];
  readonly curve?: CurveServerKeys;
  readonly name?: string;
  readonly adapters?: readonly string[];
}

/** The ops this server serves (memory.read travels server → client; policy ops are a policy host's: refused here). */
export const SERVED_OPS: readonly RequestOp[] = REQUEST_OPS.filter(
  (op) =>
    op !== 'memory.read' &&
    !(POLICY_OPS as readonly string[]).includes(op) &&
    !(BATCH_OPS as readonly string[]).includes(op),
);

const EMPTY = Buffer.alloc(0);

class ServeError extends Error {
  constructor(
    readonly code: WireErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export class BridgeServer {
  /** The bound endpoint (with the port the OS chose for `tcp://…:*`). */
  readonly endpoint: string;
  readonly #socket: zmq.Router;
  readonly #options: BridgeServerOptions;
  readonly #envs = new Map<string, SimEnvironment>();
  /** handle → the routing id (hex) of the client that made it; client → how many it holds open. */
  readonly #owner = new Map<string, string>();
  readonly #held = new Map<string, number>();
  #handleCounter = 0;
  #served = 0;
  readonly #slab = new FrameSlab();
  readonly #alloc = (size: number): Buffer => this.#slab.alloc(size);
  readonly #loop: Promise<void>;

  private constructor(socket: zmq.Router, endpoint: string, options: BridgeServerOptions) {
    this.#socket = socket;
    this.endpoint = endpoint;
    this.#options = options;
    this.#loop = this.#serve();
  }

  /** Binds and starts serving. Refuses a non-loopback endpoint without Curve keys. */
  static async bind(options: BridgeServerOptions): Promise<BridgeServer> {
    checkEndpointPolicy(options.endpoint, options.curve !== undefined);
    const curve = options.curve;
    const socket = new zmq.Router({
      linger: 0,
      ...(curve ? { curveServer: true, curveSecretKey: curve.secretKey, curvePublicKey: curve.publicKey } : {}),
    });
    try {
      await socket.bind(options.endpoint);
    } catch (e) {
      socket.close();
      throw e;
    }
    return new BridgeServer(socket, socket.lastEndpoint ?? options.endpoint, options);
  }

  /** Messages answered so far (including error replies). */
  get served(): number {
    return this.#served;
  }

  get openHandles(): readonly string[] {
    return [...this.#envs.keys()];
  }

  /** Stops serving, closes every hosted environment and the socket. */
  async close(): Promise<void> {
    if (!this.#socket.closed) this.#socket.close();
    await this.#loop;
    const envs = [...this.#envs.values()];
    this.#envs.clear();
    this.#owner.clear();
    this.#held.clear();
    await Promise.allSettled(envs.map((env) => env.close()));
  }

  async #serve(): Promise<void> {
    try {
      for await (const [routingId, ...frames] of this.#socket) {
        if (routingId === undefined) continue;
        // REQ-style framing (an empty delimiter frame first) is answered the same way
        const delimited = frames.length === 2 && frames[0]!.length === 0;
        const reply = await this.#answer(delimited ? frames.slice(1) : frames, routingId.toString('hex'));
        this.#served += 1;
        if (reply !== undefined) await this.#socket.send(delimited ? [routingId, EMPTY, reply] : [routingId, reply]);
      }
    } catch {
      // socket closed
    }
  }

  /** The reply frame for one received message; undefined when none is due (a stray reply). */
  async #answer(frames: readonly Buffer[], client: string): Promise<Buffer | undefined> {
    const decoded = decodeMessage(frames, { serves: SERVED_OPS });
    if (!decoded.ok) return encodeError(decoded.id, decoded.code, decoded.message);
    const msg = decoded.message;
    if (msg.kind !== 'request') return undefined;
    try {
      const body = await this.#dispatch(msg, client);
      const encoded = encodeMessage({ kind: 'reply', id: msg.id, body }, this.#alloc);
      return encoded.ok
        ? encoded.bytes
        : encodeError(msg.id, 'E_ADAPTER', `${msg.op}: cannot encode the result: ${encoded.message}`);
    } catch (e) {
      if (e instanceof ServeError) return encodeError(msg.id, e.code, e.message);
      if (isImepError(e) && e.code === 'E_SIM_UNAVAILABLE')
        return encodeError(msg.id, 'E_SIM_UNAVAILABLE', e.oneLine());
      const text = isImepError(e) ? e.oneLine() : e instanceof Error ? e.message : String(e);
      return encodeError(msg.id, 'E_ADAPTER', `${msg.op}: ${text}`);
    }
  }

  async #dispatch(msg: RequestMessage, client: string): Promise<Record<string, unknown> | StepResult> {
    switch (msg.op) {
      case 'hello':
        return {
          protocol: PROTOCOL_VERSION,
          server: { name: this.#options.name ?? 'imep-ts', version: pkg.version },
          ops: [...SERVED_OPS],
          envs: [...this.#options.envIds],
          adapters: [...(this.#options.adapters ?? [])],
        };
      case 'ping':
        return { t: performance.now() };
      case 'make': {
        if (!this.#options.envIds.includes(msg.body.env)) {
          throw new ServeError(
            'E_UNKNOWN_ENV',
            `unknown env "${msg.body.env}" (this server hosts: ${this.#options.envIds.join(', ')})`,
          );
        }
        const held = this.#held.get(client) ?? 0;
        if (held >= MAX_HANDLES_PER_CLIENT) {
          throw new ServeError(
            'E_TOO_MANY_HANDLES',
            `this client holds ${held} open environments, the most one client may hold (${MAX_HANDLES_PER_CLIENT}): close one before making another`,
          );
        }
        const env = await this.#options.factory(msg.body.env, msg.body.kwargs);
        this.#handleCounter += 1;
        const handle = `h${this.#handleCounter}`;
        this.#envs.set(handle, env);
        this.#owner.set(handle, client);
        this.#held.set(client, held + 1);
        return { handle, spec: env.spec };
      }
      case 'reset': {
        const env = this.#env(msg.body.handle);
        const result = await env.reset({
          seed: msg.body.seed,
          options: msg.body.options,
          ...(msg.body.initStateId === undefined ? {} : { initStateId: msg.body.initStateId }),
        });
        return splitBySpec(result, env.spec);
      }
      case 'step': {
        const env = this.#env(msg.body.handle);
        checkAction(env, msg.body.action);
        return splitBySpec(await env.step(msg.body.action), env.spec);
      }
      case 'close': {
        const env = this.#env(msg.body.handle);
        this.#envs.delete(msg.body.handle);
        const owner = this.#owner.get(msg.body.handle);
        this.#owner.delete(msg.body.handle);
        if (owner !== undefined) {
          const left = (this.#held.get(owner) ?? 1) - 1;
          if (left > 0) this.#held.set(owner, left);
          else this.#held.delete(owner);
        }
        await env.close();
        return {};
      }
      case 'memory.read': // refused by decodeMessage (not in SERVED_OPS)
        throw new ServeError('E_UNKNOWN_OP', 'memory.read travels server → client; a server does not serve it');
      case 'policy.reset':
      case 'policy.infer': // refused by decodeMessage (not in SERVED_OPS)
        throw new ServeError(
          'E_UNKNOWN_OP',
          `${msg.op} is served by a policy host (python3 -m imep_sim_bridge.policy_host), not this simulator server`,
        );
      case 'makeBatch':
      case 'stepBatch': // refused by decodeMessage (not in SERVED_OPS): clients fall back to make / step per handle
        throw new ServeError('E_UNKNOWN_OP', `${msg.op}: the lite simulator server serves one handle per message`);
    }
  }

  #env(handle: string): SimEnvironment {
    const env = this.#envs.get(handle);
    if (env === undefined) throw new ServeError('E_BAD_HANDLE', `no open environment with handle "${handle}"`);
    return env;
  }
}

function checkAction(env: SimEnvironment, action: NdArray): void {
  const want = env.spec.action;
  const sameShape = want.shape.length === action.shape.length && want.shape.every((d, i) => d === action.shape[i]);
  if (action.dtype !== want.dtype || !sameShape) {
    throw new ServeError(
      'E_BAD_ACTION',
      `${env.spec.id} takes ${want.dtype} [${want.shape.join(',')}], got ${action.dtype} [${action.shape.join(',')}]`,
    );
  }
}
