/**
 * The bridge: IMEP's ZeroMQ client for simulators (and server-side policies), the message schema of
 * protocol v1 (sim-bridge/PROTOCOL.md), the lite simulators' server, and process supervision.
 */
export type {
  EnvSpec,
  FieldSpec,
  NdArray,
  ObsValue,
  ResetRequest,
  SimEnvironment,
  StepResult,
} from '../runtime/index.js';
export { LITE_ENV_IDS, makeLiteEnv } from '../sims/index.js';

export {
  DTYPES,
  DTYPE_NAMES,
  NDARRAY_EXT_TYPE,
  NdArrayCodecError,
  WireNdArray,
  isDtype,
  isNdArray,
  ndarray,
  ndarrayBytes,
  ndarraysEqual,
  type Dtype,
  type NdData,
} from './ndarray-codec.js';
export type { WireValue } from './wire-value.js';
export { factsOf, type TaskFacts } from '../runtime/index.js';
export {
  BATCH_OPS,
  POLICY_OPS,
  PROTOCOL_VERSION,
  REQUEST_OPS,
  WIRE_ERROR_CODES,
  envSpecSchema,
  factSpecSchema,
  stepResultSchema,
  type HelloReply,
  type ReplyBodies,
  type RequestInputs,
  type RequestOp,
  type WireErrorCode,
} from './op-schemas.js';
export {
  decodeMessage,
  decodeValue,
  encodeError,
  encodeMessage,
  encodeValue,
  type DecodeResult,
  type EncodeResult,
  type InboundMessage,
  type OutboundMessage,
} from './envelope.js';
export type { CurveClientKeys, CurveKeyPair, CurveServerKeys, PrivateIpcEndpoint } from './endpoint.js';
export type { CurveCertificate } from './curve-keys.js';
export type { BridgeClientOptions, CallOptions, RemoteLiveness } from './client.js';
export { BridgeCallError, errorFromWire, wireCodeOf } from './remote-error.js';
export { DEFAULT_REMOTE_DEADLINES, RemoteEnvironment, type RemoteDeadlines } from './remote-environment.js';
export { sendSteps, type SentStep } from '../runtime/index.js';
export {
  AllowlistedEnvironment,
  assertDisjointAllowlists,
  droppedFields,
  splitBySpec,
  splitObservation,
  type Allowlists,
} from '../runtime/index.js';
export { CLIENT_NODE_FLAGS, LITE_SERVER_NODE_FLAGS } from './node-flags.js';
export type { BridgeServerOptions, EnvFactory } from './server.js';
export type { ExitStatus, ServerCommand, SupervisorOptions } from './supervisor.js';
export { MAX_HANDLES_PER_CLIENT } from './handle-limit.js';
export type { PolicyIdentity } from './op-schemas.js';
export type { BridgeServerPool, ServerPoolObserver } from './server-pool.js';
export {
  bubblewrapWorks,
  describeIsolation,
  INSIDE,
  requestedBinds,
  sandboxed,
  type Isolation,
  type SandboxBind,
  type SandboxRequest,
} from './sandbox.js';
export { sandboxSimulator, simulatorBinds, type SimulatorSandboxOptions } from './simulator-sandbox.js';
export {
  deviceRefusal,
  NOT_A_NODE,
  refusedDevice,
  resolveDevices,
  type DeviceName,
  type ResolvedDevices,
} from './sandbox-devices.js';
export {
  assertNoExposure,
  findExposure,
  HOME_PRIVATE,
  protectedZones,
  type ProtectedZone,
  type RequestedBind,
} from './sandbox-exposure.js';
export type { ServerSupervisor } from './supervisor.js';
export {
  DEFAULT_HOST_LIMITS,
  hostLimiter,
  resolveHostLimits,
  type HostKind,
  type HostLimiter,
  type HostLimits,
} from './resource-limits.js';
export { RestartingHost, type HostRecovery } from './host-recovery.js';
