/**
 * The sim-bridge simulator kind (`simulator: { kind: sim-bridge, adapter, endpoint?, replayDir?, limits?, devices?,
 * vectorize? }`): a real simulator behind the Python sim-bridge (sim-bridge/imep_sim_bridge), either the server
 * the user started at `endpoint` (never restarted by IMEP) or `python3 -m imep_sim_bridge serve --adapters ADAPTER`
 * servers IMEP starts, sandboxes and supervises. The protocol's adapter names are the sim-bridge's own
 * (SIM_BRIDGE_ADAPTER_NAMES = sim-bridge's ADAPTER_NAMES; test/sims/sim-bridge-kind.test.ts keeps them equal).
 * Environment ids, allowlists and seeds are checked when the servers start (src/campaign/bridge-open.ts), before
 * anything is written. It needs nothing of the bridge itself: its open asks the bridge layer it is given
 * (SimulatorOpenContext.bridged). Registered by src/kinds.
 *
 * Its preflight, from the protocol and the file system alone:
 *   endpoint and replayDir                    → E_PROTOCOL_INVALID simulator.replayDir (the server has its own)
 *   replay adapter, no endpoint, no replayDir → E_PROTOCOL_INVALID simulator.replayDir
 *   replayDir that exists in no root          → E_PROTOCOL_INVALID simulator.replayDir
 */
import { z } from 'zod';
import { ImepError, type KindBlock } from '../../core/index.js';
import {
  DevicesSchema,
  findProtocolFolder,
  HostLimitsSchema,
  lookedIn,
  type ServerSource,
  type SimulatorContext,
  type SimulatorKind,
} from '../../runtime/index.js';
import { simBridgeBenchmarks } from './benchmarks.js';

/** The sim-bridge's adapters, by the names the protocol and the Python server both use (its ADAPTER_NAMES). */
export const SIM_BRIDGE_ADAPTER_NAMES = ['mikasa', 'simplerenv', 'libero', 'replay'] as const;

const NonEmptyText = z.string().min(1);

const fields = {
  adapter: z.enum(SIM_BRIDGE_ADAPTER_NAMES).describe('the sim-bridge adapter'),
  endpoint: NonEmptyText.optional().describe(
    'the ZeroMQ endpoint of a server you started, e.g. tcp://127.0.0.1:5555 (never restarted by IMEP); without it IMEP starts and supervises `python3 -m imep_sim_bridge serve`',
  ),
  replayDir: NonEmptyText.optional().describe(
    'adapter replay, without endpoint: the folder of replay files (<stem>.msgpack → env replay/<stem>), resolved like checkpoint.path',
  ),
  limits: HostLimitsSchema.optional().describe(
    'without endpoint: the resource limits of each server IMEP starts (memory, processes, CPU time, call deadline); missing fields take the simulator-server defaults',
  ),
  devices: DevicesSchema.optional(),
  vectorize: z
    .boolean()
    .optional()
    .describe(
      "vectorised hosting: each server makes its batch slots with one makeBatch and steps them with one stepBatch per tick (each slot the adapter's own single env in a worker process, or the adapter's native vectorisation); a server without those ops gets one message per slot. Rows do not depend on it (default false)",
    ),
};

const SimBridgeBlockSchema = z.looseObject(fields);
export type SimBridgeBlock = z.infer<typeof SimBridgeBlockSchema>;
const simBridgeBlock = (block: KindBlock): SimBridgeBlock => SimBridgeBlockSchema.parse(block);

/** The replay folder the block names, resolved against ctx.roots (undefined when none is named). */
function resolveReplayDir(sim: SimBridgeBlock, ctx: SimulatorContext): string | undefined {
  if (sim.replayDir === undefined) return undefined;
  const dir = sim.replayDir;
  const found = findProtocolFolder(dir, ctx.roots);
  if (found === undefined) {
    throw new ImepError('E_PROTOCOL_INVALID', `replay directory ${dir} does not exist${lookedIn(dir, ctx.roots)}`, {
      file: ctx.file,
      field: 'simulator.replayDir',
      hint: 'point it at a folder of replay files (<stem>.msgpack, format imep-replay/1; sim-bridge/PROTOCOL.md "Replay files")',
    });
  }
  return found;
}

/** Refuses a block no server could serve; returns the resolved replay folder, if any. */
function assertSettings(sim: SimBridgeBlock, ctx: SimulatorContext): string | undefined {
  if (sim.endpoint !== undefined) {
    if (sim.replayDir !== undefined) {
      throw new ImepError(
        'E_PROTOCOL_INVALID',
        'replayDir is given with an endpoint: a server someone else started has its own replay directory',
        {
          file: ctx.file,
          field: 'simulator.replayDir',
          hint: 'remove replayDir (the server at the endpoint was started with --replay-dir), or remove endpoint so IMEP starts the server',
        },
      );
    }
    return undefined;
  }
  if (sim.adapter === 'replay' && sim.replayDir === undefined) {
    throw new ImepError('E_PROTOCOL_INVALID', 'the replay adapter needs its replay files', {
      file: ctx.file,
      field: 'simulator.replayDir',
      hint: 'add replayDir: DIR (a folder of <stem>.msgpack replay files), or an endpoint of a server you started',
    });
  }
  return resolveReplayDir(sim, ctx);
}

function serversOf(sim: SimBridgeBlock, replayDir: string | undefined): ServerSource {
  if (sim.endpoint !== undefined) return { attach: sim.endpoint, adapter: sim.adapter };
  return {
    start: 'python',
    adapter: sim.adapter,
    ...(replayDir === undefined ? {} : { replayDir }),
    ...(sim.limits === undefined ? {} : { limits: sim.limits }),
    ...(sim.devices === undefined ? {} : { devices: sim.devices }),
  };
}

export const simBridgeSimulatorKind: SimulatorKind = {
  name: 'sim-bridge',
  summary: 'a real simulator behind the Python sim-bridge',
  fields,
  preflight(block, ctx) {
    assertSettings(simBridgeBlock(block), ctx);
  },
  async open(block, ctx) {
    const sim = simBridgeBlock(block);
    const replayDir = assertSettings(sim, ctx);
    return ctx.bridged({
      servers: serversOf(sim, replayDir),
      adapter: sim.adapter,
      checkAdapter: true,
      vectorize: sim.vectorize === true,
    });
  },
  describe(block) {
    const sim = simBridgeBlock(block);
    return sim.endpoint === undefined
      ? `sim-bridge adapter ${sim.adapter}: servers started by IMEP`
      : `sim-bridge adapter ${sim.adapter} at ${sim.endpoint} (started outside IMEP; never restarted by it)`;
  },
  servers(block, ctx) {
    const sim = simBridgeBlock(block);
    return serversOf(sim, ctx === undefined || sim.endpoint !== undefined ? undefined : resolveReplayDir(sim, ctx));
  },
  vectorize: (block) => simBridgeBlock(block).vectorize === true,
  benchmarks: (block) => simBridgeBenchmarks(simBridgeBlock(block).adapter),
  inputFolders(block, ctx): Readonly<Record<string, string>> {
    const dir = resolveReplayDir(simBridgeBlock(block), ctx);
    return dir === undefined ? {} : { 'simulator.replayDir': dir };
  },
};
