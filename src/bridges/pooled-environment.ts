/**
 * One environment on server i of a BridgeServerPool, as the SimEnvironment contract. Its spec is known
 * beforehand (the runner makes each environment once before the run and checks it), so the runner can
 * create it synchronously; the server-side environment is made on the first reset (or adopted: the one the
 * runner's check made, when it hands it over) and re-made after every recovery of its server (a restarted
 * process has none of the old handles).
 *
 * - reset: recovers the server if needed (BridgeServerPool.ensure), re-makes if the generation changed,
 *   then resets. A failure fails the episode (the runner records it) and is reported to the pool.
 * - step: fails fast when the server was recovered during the episode (its state is gone) or is suspect. With
 *   vectorised hosting (the pool's `batches(i)`) the steps of one tick on a server travel as one `stepBatch`
 *   (step-batcher.ts), each with these checks made when the batch is sent.
 * - close: closes the server-side environment only on a healthy server of the same generation.
 * Each runs in its server's turn (BridgeServerPool.inTurn): one environment call in flight per server, its checks
 * made when it is sent. Like the RemoteEnvironment it wraps, it offers none of the runtime's capabilities
 * (src/runtime/capabilities.ts): its own step (with the checks above) always runs.
 */
import { ImepError } from '../core/index.js';
import { RemoteEnvironment } from './remote-environment.js';
import type { BridgeServerPool } from './server-pool.js';
import type { EnvSpec, NdArray, ResetRequest, SimEnvironment, StepResult } from '../runtime/index.js';

/** A server-side environment made before the run (the runner's check), handed to the slot that runs on it. */
export interface AdoptedEnvironment {
  readonly remote: RemoteEnvironment;
  /** The server's generation when it was made (after a restart it is gone and the slot makes its own). */
  readonly generation: number;
}

export class PooledEnvironment implements SimEnvironment {
  readonly spec: EnvSpec;
  readonly #pool: BridgeServerPool;
  readonly #server: number;
  readonly #envId: string;
  readonly #kwargs: Readonly<Record<string, unknown>>;
  #remote: RemoteEnvironment | null = null;
  #generation = -1;

  /** `adopt`: a server-side environment of this id and kwargs already made on server `server` in generation `generation`. */
  constructor(
    pool: BridgeServerPool,
    server: number,
    envId: string,
    kwargs: Readonly<Record<string, unknown>>,
    spec: EnvSpec,
    adopt?: AdoptedEnvironment,
  ) {
    this.#pool = pool;
    this.#server = server;
    this.#envId = envId;
    this.#kwargs = kwargs;
    this.spec = spec;
    if (adopt !== undefined) {
      this.#remote = adopt.remote;
      this.#generation = adopt.generation;
    }
  }

  async #call<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      this.#pool.fault(this.#server, e);
      throw e;
    }
  }

  reset(request: ResetRequest): Promise<StepResult> {
    return this.#pool.inTurn(this.#server, () => this.#reset(request));
  }

  step(action: NdArray): Promise<StepResult> {
    if (this.#pool.batches(this.#server))
      return this.#pool.stepInBatch(this.#server, () => this.#prepareStep(), action);
    return this.#pool.inTurn(this.#server, () => this.#step(action));
  }

  close(): Promise<void> {
    return this.#pool.inTurn(this.#server, () => this.#close());
  }

  async #reset(request: ResetRequest): Promise<StepResult> {
    await this.#pool.ensure(this.#server);
    const generation = this.#pool.generation(this.#server);
    if (this.#remote === null || this.#generation !== generation) {
      const client = this.#pool.client(this.#server);
      // vectorised hosting: made as its batch siblings are (a batch of one), hosted as they are
      this.#remote = await this.#call(async () =>
        this.#pool.batches(this.#server)
          ? ((
              await RemoteEnvironment.makeBatch(client, this.#envId, this.#kwargs, 1, this.#pool.deadlines)
            )[0] as RemoteEnvironment)
          : RemoteEnvironment.make(client, this.#envId, this.#kwargs, this.#pool.deadlines),
      );
      this.#generation = generation;
    }
    const remote = this.#remote;
    return this.#call(() => remote.reset(request));
  }

  async #step(action: NdArray): Promise<StepResult> {
    const remote = this.#prepareStep();
    return this.#call(() => remote.step(action));
  }

  /** The checks a step makes when it is sent (restarted or suspect server: this episode fails); its environment. */
  #prepareStep(): RemoteEnvironment {
    if (this.#remote === null || this.#generation !== this.#pool.generation(this.#server)) {
      throw new ImepError(
        'E_BRIDGE_REMOTE',
        `simulator server ${this.#server} was restarted during this episode; its simulator state is gone`,
      );
    }
    const suspect = this.#pool.suspectError(this.#server);
    if (suspect !== null) throw suspect;
    this.#pool.beforeStep(this.#server);
    return this.#remote;
  }

  async #close(): Promise<void> {
    const remote = this.#remote;
    this.#remote = null;
    if (remote === null || this.#generation !== this.#pool.generation(this.#server)) return;
    if (this.#pool.suspectError(this.#server) !== null || !this.#pool.client(this.#server).alive) return;
    await remote.close().catch(() => undefined);
  }
}
