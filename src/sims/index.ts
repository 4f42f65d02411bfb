/** src/sims — simulators that run inside IMEP's process (public face). Each declares its fact in its spec. */
export * from './lite/index.js';
export { CHAIN_OBJECTS, ChainDrawersLite } from './lite/chain-drawers.js';
export { isLiteEnvId, makeLiteEnvSync } from './lite/registry.js';
export { frameOf, toolOf } from './lite/scripted.js';
