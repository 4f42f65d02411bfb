/**
 * src/runtime — the contracts every simulator and policy meets, and the lockstep loop over them (public face).
 *   environment.ts  SimEnvironment: reset / step / close, EnvSpec with its declared fact
 *   conventions.ts  action/observation conventions (vla-eval DimSpec vocabulary) and their comparison
 *   policy.ts       BatchPolicy: resetSlot / inferBatch, the memory read hook's context
 *   capabilities.ts fast paths beside the contracts, each an interface with a type guard (stepSync,
 *                   releaseObservation, drawNextInto with the frame field the environment declares, nextInputRow)
 *   lockstep.ts     runSlots / runLockstep: B episodes in batch slots, subscribers for everything it learns
 *   slot-loop.ts    the loop's body, one named method per part of a batched step
 *   allowlist.ts    observation split: what the policy may see, what only the evaluator sees
 *   task-facts.ts   the fact (field, domain, decision steps) an environment's spec declares
 *   send-steps.ts   every bridged slot's step sent before any is awaited
 *   simulator-kind.ts  SimulatorKind (preflight / open / describe over core's SimulatorFace), its registry, Simulators
 *   host-limits-schema.ts, devices-schema.ts  the `limits` / `devices` fields of hosts and servers IMEP starts
 *   protocol-folder.ts  where a folder a protocol names lies (replayDir, pythonPath)
 */
export * from './environment.js';
export * from './conventions.js';
export * from './policy.js';
export * from './capabilities.js';
export * from './lockstep.js';
export * from './allowlist.js';
export * from './task-facts.js';
export * from './send-steps.js';
export * from './simulator-kind.js';
export { findProtocolFolder, lookedIn } from './protocol-folder.js';
export { DeviceSchema, DevicesSchema, type DeviceRequest } from './devices-schema.js';
export { HostLimitsSchema, type HostLimitsConfig } from './host-limits-schema.js';
