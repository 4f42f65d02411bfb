/**
 * The simulator settings a protocol can get wrong, checked from the protocol and the file system alone (no server
 * started): the simulator kind's preflight (SimulatorKind.preflight; sim-bridge: replayDir with an endpoint, the
 * replay adapter without replay files, a replayDir in no root). precommit-checks.ts asks before anything is written
 * (so `imep protocol check` refuses them too), and the kind's open again before it starts or attaches to a server.
 *
 * Simulator kinds, their fields and lite env ids are what the schema and cross-check already refuse.
 */
import type { Protocol } from '../protocol/index.js';
import { simulatorKindOf, type SimulatorContext } from './bridge-envs.js';

/** Refuses a simulator section that no server could serve. */
export function assertSimulatorSettings(protocol: Protocol, ctx: SimulatorContext): void {
  simulatorKindOf(protocol, ctx.file).preflight(protocol.simulator, ctx);
}
