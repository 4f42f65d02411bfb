/** The built-in simulator kinds: lite (src/sims/lite/kind.ts) and sim-bridge (src/sims/sim-bridge/kind.ts). */
import { registerSimulatorKind, simulatorKinds } from '../runtime/index.js';
import { liteSimulatorKind, simBridgeSimulatorKind } from '../sims/index.js';

const BUILTIN_SIMULATOR_KINDS = [liteSimulatorKind, simBridgeSimulatorKind];

/** Registers the built-in simulator kinds that are not registered yet (idempotent). */
export function registerBuiltinSimulatorKinds(): void {
  for (const kind of BUILTIN_SIMULATOR_KINDS) if (!simulatorKinds.has(kind.name)) registerSimulatorKind(kind);
}
