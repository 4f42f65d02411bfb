/**
 * The protocol-facing registries: src/protocol parses and checks a protocol's simulator, policy and conditions
 * through these (it imports core only). They are filled by the full registries above them — a kind is registered
 * once, with `registerSimulatorKind` (src/runtime), `registerPolicyRuntimeKind` and `registerConditionKind`
 * (src/interventions) — and by src/kinds' built-ins (see docs/extending.md).
 */
import { KindRegistry } from './registry.js';
import type { ConditionFace } from './condition-face.js';
import type { PolicyRuntimeFace } from './policy-runtime-face.js';
import type { SimulatorFace } from './simulator-face.js';

export const simulatorFaces = new KindRegistry<SimulatorFace>('simulator kind', 'simulator.kind');
export const policyRuntimeFaces = new KindRegistry<PolicyRuntimeFace>('policy runtime', 'policy.runtime');
export const conditionFaces = new KindRegistry<ConditionFace>('condition kind', 'conditions[].kind');
