/**
 * The bridge: IMEP's ZeroMQ client for simulators (and server-side policies), the message schema of
 * protocol v1 (sim-bridge/PROTOCOL.md), the lite simulators' server, and process supervision.
 */
export type { EnvSpec, FieldSpec, NdArray, ObsValue, ResetRequest, SimEnvironment, StepResult } from '../runtime/environment.js';
export { LITE_ENV_IDS, makeLiteEnv } from '../sims/lite/index.js';

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
export { factsOf, type TaskFacts } from '../runtime/task-facts.js';
export {
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
export {
  checkEndpointPolicy,
  isLocalEndpoint,
  loadCurveKeyPair,
  loadCurvePublicKey,
  loopbackTcpEndpoint,
  makeCurveKeyPair,
  parseEndpoint,
  privateIpcEndpoint,
  saveCurveKeyPair,
  type CurveClientKeys,
  type CurveKeyPair,
  type CurveServerKeys,
  type PrivateIpcEndpoint,
} from './endpoint.js';
export {
  formatCurveCertificate,
  loadAuthorizedKeys,
  parseCurveCertificate,
  writeCurveCertificates,
  type CurveCertificate,
} from './curve-keys.js';
export { BridgeClient, DEFAULT_DEADLINE_MS, DEFAULT_HEARTBEAT_MS, type BridgeClientOptions, type CallOptions, type RemoteLiveness } from './client.js';
export { BridgeCallError, errorFromWire, wireCodeOf } from './remote-error.js';
export { DEFAULT_REMOTE_DEADLINES, RemoteEnvironment, type RemoteDeadlines } from './remote-environment.js';
export { sendSteps, type SentStep } from '../runtime/send-steps.js';
export { AllowlistedEnvironment, assertDisjointAllowlists, droppedFields, splitBySpec, splitObservation, type Allowlists } from '../runtime/allowlist.js';
export { CLIENT_NODE_FLAGS, LITE_SERVER_NODE_FLAGS } from './node-flags.js';
export { BridgeServer, SERVED_OPS, type BridgeServerOptions, type EnvFactory } from './server.js';
export {
  ServerSupervisor,
  bridgePython,
  liteServerCommand,
  packageRoot,
  pythonServerCommand,
  type ExitStatus,
  type ServerCommand,
  type SupervisorOptions,
} from './supervisor.js';
