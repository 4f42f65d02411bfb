/** src/core/kinds — registered kinds: the registry, and the protocol-facing half of simulator, policy runtime and condition kinds. */
export { KindRegistry, type Kind, type KindLookupSite } from './registry.js';
export type {
  ConditionView,
  EnvView,
  KindBlock,
  ProtocolIssueSink,
  ProtocolPath,
  ProtocolView,
} from './protocol-view.js';
export type { BenchmarkTask, BenchmarkTaskSet, SimulatorFace } from './simulator-face.js';
export type { PolicyRuntimeFace } from './policy-runtime-face.js';
export type { ConditionFace, ConditionRole } from './condition-face.js';
export { conditionFaces, policyRuntimeFaces, simulatorFaces } from './registries.js';
