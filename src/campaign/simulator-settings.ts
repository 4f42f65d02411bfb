/**
 * The simulator settings a protocol can get wrong, checked from the protocol and the file system alone (no server
 * started): precommit-checks.ts asks before anything is written (so `imep protocol check` refuses them too), and
 * bridge-envs.ts again before it starts or attaches to a server.
 *
 *   sim-bridge with endpoint and replayDir     → E_PROTOCOL_INVALID simulator.replayDir (the server has its own)
 *   replay adapter, no endpoint, no replayDir  → E_PROTOCOL_INVALID simulator.replayDir
 *   replayDir that exists in no root           → E_PROTOCOL_INVALID simulator.replayDir (resolveReplayDir)
 *
 * Simulator kinds, adapters and lite env ids are closed sets the schema and cross-check already refuse.
 */
import { ImepError } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';
import type { SimulatorContext } from './bridge-envs.js';
import { findProtocolFolder, lookedIn } from './protocol-folder.js';

/** Refuses a simulator section that no server could serve; returns the resolved replay folder, if any. */
export function assertSimulatorSettings(protocol: Protocol, ctx: SimulatorContext): string | undefined {
  const sim = protocol.simulator;
  if (sim.kind !== 'sim-bridge') return undefined;
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
  return resolveReplayDir(protocol, ctx);
}

/** The replay folder a sim-bridge replay protocol names, resolved against ctx.roots (undefined when none is named). */
export function resolveReplayDir(protocol: Protocol, ctx: SimulatorContext): string | undefined {
  const sim = protocol.simulator;
  if (sim.kind !== 'sim-bridge' || sim.replayDir === undefined) return undefined;
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
