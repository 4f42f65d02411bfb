/**
 * A simulator hosted by a bridge server, as the SimEnvironment contract: `make` creates it on the
 * server; reset / step / close are calls with per-op deadlines. Every result is checked against the spec the
 * server declared at make time (observation-spec.ts): an off-spec field fails the call, naming it. It offers none of
 * the runtime's capabilities (src/runtime/capabilities.ts): every step is a round trip, sent with the batch's others.
 */
import { ImepError } from '../core/index.js';
import type { BridgeClient } from './client.js';
import { checkObservation } from './observation-spec.js';
import type { BatchHost } from './op-schemas.js';
import type { EnvSpec, NdArray, ResetRequest, SimEnvironment, StepResult } from '../runtime/index.js';

export interface RemoteDeadlines {
  readonly makeMs: number;
  readonly resetMs: number;
  readonly stepMs: number;
  readonly closeMs: number;
}

export const DEFAULT_REMOTE_DEADLINES: RemoteDeadlines = {
  makeMs: 120_000,
  resetMs: 60_000,
  stepMs: 30_000,
  closeMs: 10_000,
};

export class RemoteEnvironment implements SimEnvironment {
  readonly spec: EnvSpec;
  /** The server's handle of this environment. */
  readonly handle: string;
  /** How the server hosts it when it was made by `makeBatch` (undefined: by `make`, in the server). */
  readonly host: BatchHost | undefined;
  readonly #client: BridgeClient;
  readonly #deadlines: RemoteDeadlines;
  #closed = false;
  /** The spec check of every result, made as the reply arrives (observation-spec.ts). */
  readonly #check = <R extends StepResult>(r: R): R => checkObservation(this.spec, r);

  private constructor(
    client: BridgeClient,
    handle: string,
    spec: EnvSpec,
    deadlines: RemoteDeadlines,
    host?: BatchHost,
  ) {
    this.#client = client;
    this.handle = handle;
    this.host = host;
    this.spec = spec;
    this.#deadlines = deadlines;
  }

  /** Creates environment `envId` on the server the client is connected to. */
  static async make(
    client: BridgeClient,
    envId: string,
    kwargs: Readonly<Record<string, unknown>> = {},
    deadlines: Partial<RemoteDeadlines> = {},
  ): Promise<RemoteEnvironment> {
    const d = { ...DEFAULT_REMOTE_DEADLINES, ...deadlines };
    const reply = await client.call('make', { env: envId, kwargs }, { deadlineMs: d.makeMs });
    return new RemoteEnvironment(client, reply.handle, reply.spec, d);
  }

  /**
   * Creates `count` environments `envId` with one `makeBatch` (the server must list it in `hello.ops`): each its own
   * handle, hosted as the server says (worker processes, natively vectorised, or inline). Its deadline is the make
   * deadline: the server makes them at the same time.
   */
  static async makeBatch(
    client: BridgeClient,
    envId: string,
    kwargs: Readonly<Record<string, unknown>>,
    count: number,
    deadlines: Partial<RemoteDeadlines> = {},
  ): Promise<RemoteEnvironment[]> {
    const d = { ...DEFAULT_REMOTE_DEADLINES, ...deadlines };
    const reply = await client.call('makeBatch', { env: envId, kwargs, count }, { deadlineMs: d.makeMs });
    if (reply.handles.length !== count)
      throw new ImepError(
        'E_BRIDGE_PROTOCOL',
        `makeBatch of ${count} ${envId} answered ${reply.handles.length} handles`,
        { field: 'makeBatch' },
      );
    return reply.handles.map((h) => new RemoteEnvironment(client, h, reply.spec, d, reply.host));
  }

  reset(request: ResetRequest): Promise<StepResult> {
    this.#checkOpen('reset');
    const body = {
      handle: this.handle,
      seed: request.seed,
      options: request.options ?? {},
      ...(request.initStateId === undefined ? {} : { initStateId: request.initStateId }),
    };
    return this.#client.call('reset', body, { deadlineMs: this.#deadlines.resetMs, check: this.#check });
  }

  step(action: NdArray): Promise<StepResult> {
    this.#checkOpen('step');
    return this.#client.call(
      'step',
      { handle: this.handle, action },
      { deadlineMs: this.#deadlines.stepMs, check: this.#check },
    );
  }

  /** This environment's entry of a `stepBatch` (the checks `step` makes before it sends). */
  batchEntry(action: NdArray): { handle: string; action: NdArray } {
    this.#checkOpen('step');
    return { handle: this.handle, action };
  }

  /** Closes the server-side environment (idempotent; the client stays open). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#client.call('close', { handle: this.handle }, { deadlineMs: this.#deadlines.closeMs });
  }

  #checkOpen(op: string): void {
    if (this.#closed)
      throw new ImepError('E_INTERNAL', `${op} on closed remote environment ${this.spec.id} (${this.handle})`);
  }
}
