/**
 * A simulator kind: the protocol-facing half (SimulatorFace, src/core/kinds: its `simulator:` fields, stated kwargs,
 * protocol checks) plus what the runner needs — `preflight` (checks from the protocol and the file system before
 * anything is written), `open` (the environments of a run) and `describe` (one line for the run record). Kinds are
 * registered once with `registerSimulatorKind`; the registration lands in core's `simulatorFaces` too, so the
 * protocol parses and checks a block of any registered kind. Nothing outside a kind's own entry names a kind: the
 * runner asks the kind (its capabilities below) instead.
 *
 * Built-in entries: src/sims/lite/kind.ts (lite, in process or over the bridge) and src/sims/sim-bridge/kind.ts
 * (the Python sim-bridge), registered by src/kinds.
 */
import { KindRegistry, simulatorFaces, type JsonValue, type KindBlock, type SimulatorFace } from '../core/index.js';
import type { EnvSpec, SimEnvironment } from './environment.js';

/** A task as the protocol names it: what makes its environment. */
export interface TaskEntry {
  /** The plan's task name (env.task ?? env.id). */
  readonly task: string;
  readonly envId: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
}

/** Makes the environment for one slot of one task (make-time kwargs from the protocol). */
export type EnvProvider = (task: TaskEntry, slot: number) => SimEnvironment;

/**
 * The spec of a task's environment where it is known before the simulators start (in-process lite, a test's
 * provider); undefined for a bridged simulator, whose specs are checked when its servers start.
 */
export type SpecSource = (task: TaskEntry) => EnvSpec | undefined;

/** What a bridged simulator reported about the stack it drives (hello.environment[adapter]), JSON values only. */
export interface SimulatorStackReport {
  readonly adapter: string;
  readonly reported: Record<string, JsonValue>;
}

/** The environments of a run, and what reaches them. */
export interface Simulators {
  readonly envs: EnvProvider;
  /** One line naming the simulator and how it is reached; null for in-process simulators. */
  readonly description: string | null;
  /**
   * How the simulator servers were isolated from IMEP's files and secrets, one line (src/bridges/sandbox.ts):
   * "isolation: bubblewrap (…)" or "isolation: none (why)"; null for in-process simulators (no server).
   */
  readonly isolation: string | null;
  /** The resource limits in force on the servers IMEP started, one line (src/bridges/resource-limits.ts); else null. */
  readonly limits: string | null;
  /** The spec each protocol environment declared when it was checked (undefined: in process, not asked). */
  readonly specOf: SpecSource;
  /** What the simulator reports about the stack it drives, for the run's record; undefined where nothing is reported. */
  readonly environment: SimulatorStackReport | undefined;
  /** Recoveries and failed calls so far (null for in-process simulators). */
  summary(): string | null;
  close(): Promise<void>;
}

/**
 * Environments made in IMEP's own process: no server to start, isolate or recover, nothing to report; their specs
 * are declared when each is made (a kind that knows them earlier says so with `knownSpec`).
 */
export function inProcessSimulators(envs: EnvProvider): Simulators {
  return {
    envs,
    description: null,
    isolation: null,
    limits: null,
    specOf: () => undefined,
    environment: undefined,
    summary: () => null,
    close: async () => undefined,
  };
}

/** Where the protocol's relative paths (replayDir) resolve, in order: the first that holds the path. */
export interface SimulatorContext {
  readonly file: string;
  readonly roots: readonly string[];
  /** The run's campaigns folder: no folder a simulator server's sandbox binds may expose it. */
  readonly campaignsDir?: string;
}

/** The resource limits of a server IMEP starts (protocol `simulator.limits`; src/bridges/resource-limits.ts). */
export interface ServerLimits {
  readonly memoryMiB?: number | undefined;
  readonly processes?: number | undefined;
  readonly cpuSeconds?: number | undefined;
  readonly callDeadlineS?: number | undefined;
}

/**
 * The simulator servers a block asks for, as the bridge layer starts or reaches them (src/campaign/bridge-envs.ts):
 *   { start: 'imep-lite' }  `imep sim serve lite` servers IMEP starts (IMEP's own code: no sandbox, no limits)
 *   { start: 'python' }     `python3 -m imep_sim_bridge serve --adapters ADAPTER` servers IMEP starts and supervises,
 *                           each in a sandbox under `limits`, with `devices` and the replay folder bound
 *   { attach }              the one server someone else started at that endpoint (never restarted by IMEP)
 */
export type ServerSource =
  | { readonly start: 'imep-lite' }
  | {
      readonly start: 'python';
      readonly adapter: string;
      readonly replayDir?: string | undefined;
      readonly limits?: ServerLimits | undefined;
      readonly devices?: readonly string[] | undefined;
    }
  | { readonly attach: string; readonly adapter: string };

/** What a kind's `open` asks the bridge layer for. */
export interface BridgedRequest {
  readonly servers: ServerSource;
  /**
   * The simulator's name on the servers (hello.adapters; the run record's environment key). With `checkAdapter`
   * the servers must offer it before any environment is made.
   */
  readonly adapter: string;
  readonly checkAdapter: boolean;
  /** Vectorised hosting: each server makes its slots with one makeBatch and steps them with one stepBatch per tick. */
  readonly vectorize: boolean;
}

/** What `open` is given: where paths resolve, and the bridge layer that starts or reaches servers. */
export interface SimulatorOpenContext extends SimulatorContext {
  /** Opens bridged simulators: servers started or attached, every protocol environment made once and checked. */
  bridged(request: BridgedRequest): Promise<Simulators>;
}

export interface SimulatorKind extends SimulatorFace {
  /**
   * Refuses (ImepError, one line naming the field and the fix) a block no simulator could serve, from the protocol
   * and the file system alone: precommit and `imep protocol check` ask before anything is written, `open` again.
   */
  preflight(block: KindBlock, ctx: SimulatorContext): void;
  /** The environments of a run (servers started or attached, every environment checked). */
  open(block: KindBlock, ctx: SimulatorOpenContext): Promise<Simulators>;
  /** One line: the simulator and how it is reached (the run record's and `protocol check`'s words). */
  describe(block: KindBlock): string;
  /**
   * The servers the block asks for; undefined where the simulators run in process. With `ctx`, folders the servers
   * are given (replayDir) are resolved (a missing one refused as `preflight` refuses it).
   */
  servers(block: KindBlock, ctx?: SimulatorContext): ServerSource | undefined;
  /** Whether each server makes its slots in one batch (vectorised hosting). Optional: absent is false. */
  vectorize?(block: KindBlock): boolean;
  /**
   * The spec of an environment where it is known without starting a server (the lite simulators', whichever way
   * they are reached); undefined where only a started server knows it. Optional: absent is undefined.
   */
  knownSpec?(block: KindBlock, envId: string, kwargs: Readonly<Record<string, unknown>>): EnvSpec | undefined;
  /**
   * The folders the simulator reads whose contents a precommit freezes (their digests are checked before each
   * run), by protocol field, resolved. Optional: absent is none.
   */
  inputFolders?(block: KindBlock, ctx: SimulatorContext): Readonly<Record<string, string>>;
}

/** Every simulator kind; a registration lands in core's `simulatorFaces` too. */
export const simulatorKinds = new KindRegistry<SimulatorKind>('simulator kind', 'simulator.kind', simulatorFaces);

/** Registers a simulator kind (once per name); returns the function that removes it again. */
export function registerSimulatorKind(kind: SimulatorKind): () => void {
  return simulatorKinds.register(kind);
}
