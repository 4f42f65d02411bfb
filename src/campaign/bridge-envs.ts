/**
 * The runner's environments, opened by the frozen protocol's simulator kind (SimulatorKind.open, src/runtime): the
 * kind named by `simulator.kind` is looked up in the registry and given the bridge layer (bridge-open.ts) for
 * servers it asks for. The built-in kinds:
 *
 *   { kind: lite }                          in-process lite simulators (the default; fastest)
 *   { kind: lite, transport: bridge }       the same simulators behind `imep sim serve lite` servers
 *                                           started by IMEP (testing and parity: rows are identical)
 *   { kind: sim-bridge, adapter, endpoint } the Python sim-bridge the user started at `endpoint`
 *                                           (never restarted by IMEP)
 *   { kind: sim-bridge, adapter }           `python3 -m imep_sim_bridge serve --adapters A` started
 *                                           and supervised by IMEP (restarted on death or wedge)
 */
import { MAX_HANDLES_PER_CLIENT, type RemoteDeadlines, type ServerPoolObserver } from '../bridges/index.js';
import { liteInProcessEnvs } from '../sims/index.js';
import { simulatorKinds, type SimulatorContext, type SimulatorKind, type Simulators } from '../runtime/index.js';
import { ImepError } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';
import type { EnvProvider } from './types.js';
import { openBridged } from './bridge-open.js';

export type { SimulatorContext, Simulators } from '../runtime/index.js';
export { simulatorSandboxOptions } from './bridge-open.js';

/** Execution details of bridged simulators (none of them changes a row). */
export interface SimulatorOptions {
  /** Servers IMEP starts (lite over the bridge, or a sim-bridge without endpoint); batch slot s uses server s mod K. Default 1. */
  readonly servers?: number;
  readonly deadlines?: Partial<RemoteDeadlines>;
  /** Deadline of the hello that (re)connects to a server (ms). */
  readonly connectMs?: number;
  readonly observer?: ServerPoolObserver;
  /** The run's batch slots: with `simulator.vectorize`, each server makes its slots' environments with one makeBatch. */
  readonly slots?: number;
}

/** The in-process lite environments (what the lite kind opens in process; a caller's default provider). */
export const inProcessLiteEnvs: EnvProvider = liteInProcessEnvs;

/** The registered kind of the protocol's simulator (the protocol was parsed through the same registry). */
export function simulatorKindOf(protocol: Protocol, file?: string): SimulatorKind {
  return simulatorKinds.require(protocol.simulator.kind, file === undefined ? {} : { file });
}

/**
 * Refuses more than one server where IMEP starts none — in-process simulators, or a server the user started at
 * `simulator.endpoint` (campaign run calls it before anything is written; openSimulators again).
 */
export function checkServerCount(protocol: Protocol, file: string, servers: number | undefined): void {
  const source = simulatorKindOf(protocol, file).servers(protocol.simulator);
  const attached = source !== undefined && 'attach' in source ? source.attach : undefined;
  if ((servers ?? 1) <= 1 || (source !== undefined && attached === undefined)) return;
  const inProcess = source === undefined;
  const why = inProcess
    ? `runs the ${protocol.simulator.kind} simulators in process: there are no servers to start`
    : `connects to the one server you started at ${attached}: IMEP starts none`;
  throw new ImepError('E_USAGE', `${servers} simulator servers asked for, but the protocol's simulator ${why}`, {
    file,
    field: '--servers',
    hint:
      inProcess && 'transport' in simulatorKindOf(protocol, file).fields
        ? `drop --servers, or use a protocol whose simulator is { kind: ${protocol.simulator.kind}, transport: bridge }`
        : 'drop --servers',
  });
}

/**
 * Refuses a bridged run whose environments would exceed what one simulator server serves one client
 * (MAX_HANDLES_PER_CLIENT): the runner holds one environment per task and batch slot, slot s on server s mod K.
 */
export function checkHandlesPerServer(
  protocol: Protocol,
  file: string,
  batch: number,
  servers: number | undefined,
): void {
  if (simulatorKindOf(protocol, file).servers(protocol.simulator) === undefined) return;
  const k = Math.max(1, servers ?? 1);
  const perServer = protocol.envs.length * Math.ceil(batch / k);
  if (perServer <= MAX_HANDLES_PER_CLIENT) return;
  throw new ImepError(
    'E_USAGE',
    `${protocol.envs.length} tasks × ${Math.ceil(batch / k)} batch slots per server need ${perServer} open environments on one simulator server, over the ${MAX_HANDLES_PER_CLIENT} a server holds for one client`,
    {
      file,
      field: '--batch',
      hint: `lower --batch, or spread the slots over more servers with --servers (${Math.ceil(perServer / MAX_HANDLES_PER_CLIENT) * k} or more)`,
    },
  );
}

/** Opens the simulators a protocol names (servers started or attached, every environment checked). */
export async function openSimulators(
  protocol: Protocol,
  ctx: SimulatorContext,
  options: SimulatorOptions = {},
): Promise<Simulators> {
  checkServerCount(protocol, ctx.file, options.servers);
  return simulatorKindOf(protocol, ctx.file).open(protocol.simulator, {
    ...ctx,
    bridged: (request) => openBridged(request, protocol, ctx, options),
  });
}
