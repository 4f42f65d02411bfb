/** Public face of the policy runtimes. */
export { slotPolicy } from '../runtime/index.js';
export type {
  BatchPolicy,
  EpisodeInfo,
  MemoryReadable,
  Observation,
  Policy,
  PolicyOutput,
  PolicyReadouts,
  ReadReadout,
  SlotObservation,
} from '../runtime/index.js';
export {
  BATCH_AXIS,
  GRAPH_NAMES,
  INPUT_ROLES,
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  OUTPUT_ROLES,
  TENSOR_DTYPES,
  manifestSchema,
  parseManifest,
} from './manifest.js';
export type {
  CheckpointManifest,
  EpisodeBankSpec,
  GraphContract,
  GraphName,
  InputContract,
  InputRole,
  OutputContract,
  OutputRole,
  TensorContract,
  TensorDtype,
} from './manifest.js';
export type { BackendReport, GraphRunner, GraphSignature, HostTensor, ValueInfo } from './backend.js';
export { verifyGraphContract } from './contract.js';
export { feedsDtype, shapeText, verifyEnvContract } from './env-contract.js';
export type { EnvContractTarget } from './env-contract.js';
export type { CheckpointOptions, LoadedCheckpoint } from './checkpoint.js';
export {
  DEFAULT_PROVIDERS,
  EXECUTION_PROVIDERS,
  onnxRuntimeProbe,
  resolveProviderConfig,
  selectProvider,
} from './providers.js';
export type { Availability, ExecutionProvider, ProviderChoice, ProviderConfig, ProviderProbe } from './providers.js';
export type { OnnxOptions } from './onnx-backend.js';
export { loadTf, loadTfjsGraph, serializeTfjsModel } from './tfjs-backend.js';
export type { LoadedTf, Tf, TfjsOptions, TfjsPackage } from './tfjs-backend.js';
export { ExternalMemoryPolicy, externalMemoryPolicy } from './memory-policy.js';
export type { MemoryPolicyOptions, PolicyTimings } from './memory-policy.js';
export { runLockstep } from '../runtime/index.js';
export type { EpisodeOutcome, LockstepEpisode, LockstepOptions, LockstepSubscriber } from '../runtime/index.js';
export { RecordingPolicy, captureField } from './recording-policy.js';
export type { ReceivedCall, ReceivedField } from './recording-policy.js';
export type { RemotePolicyOptions } from './remote-policy.js';
export type { RemotePolicy } from './remote-policy.js';
export * from './servers/index.js';
