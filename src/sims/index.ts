/**
 * src/sims — simulators that run inside IMEP's process (public face; each declares its fact in its spec), and the
 * simulator kinds (src/runtime SimulatorKind): lite (lite/kind.ts) and the Python sim-bridge (sim-bridge/kind.ts).
 */
export * from './lite/index.js';
export { CHAIN_OBJECTS, ChainDrawersLite } from './lite/chain-drawers.js';
export { isLiteEnvId, makeLiteEnvSync } from './lite/registry.js';
export { frameOf, toolOf } from './lite/scripted.js';
export { SIM_BRIDGE_ADAPTER_NAMES, simBridgeSimulatorKind, type SimBridgeBlock } from './sim-bridge/kind.js';
export { SIM_BRIDGE_BENCHMARKS, simBridgeBenchmarks } from './sim-bridge/benchmarks.js';
export { LITE_BENCHMARKS } from './lite/benchmarks.js';
