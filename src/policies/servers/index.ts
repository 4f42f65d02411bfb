/** Public face of IMEP's side of the policy servers it speaks to (openpi, vla-eval): a plain list of exports. */
export type {
  ServerConnectOptions,
  ServerConnector,
  ServerEpisodeStart,
  ServerSession,
  WireMap,
  WireValue,
} from './session.js';
export type { ServerCall, ServerMemory } from './server-memory.js';
export {
  MsgpackNumpyError,
  dtypeOfNumpyStr,
  float16Bits,
  isWireMap,
  numpyDtypeStr,
  packWire,
  unpackWire,
  unpackWireMap,
  type NumpyDialect,
} from './msgpack-numpy.js';
export { OPENPI_SERVER_TIMING_KEY, checkOpenpiHealth, connectOpenpi, type OpenpiSession } from './openpi-session.js';
export {
  VLA_EVAL_HARNESS_NAME,
  VLA_EVAL_PROTOCOL_VERSION,
  connectVlaEval,
  packVlaEvalMessage,
  unpackVlaEvalMessage,
  type VlaEvalMessage,
  type VlaEvalMessageType,
} from './vla-eval-session.js';
export { BANK_HOOK_KEY, BankHookMemory, type BankHookMemoryOptions } from './bank-hook-memory.js';
export {
  BANK_HOOK_ERROR_CODES,
  BankHookRefusal,
  decodeBankHookRead,
  encodeBankHookError,
  encodeBankHookResult,
  type BankHookErrorCode,
  type BankHookRead,
} from './bank-hook-wire.js';
export { INSTRUCTION_SOURCE, ServerPolicy, wireValueOf, type ServerPolicyOptions } from './server-policy.js';
export {
  HISTORY_BANK,
  HISTORY_MASK_KEY,
  HistoryMemory,
  historyKey,
  obsTensor,
  type HistoryConfig,
} from './history-memory.js';
export { serverConventions, vlaEvalConventions } from './vla-eval-conventions.js';
export { ReconnectingSession, sameWireValue } from './reconnecting-session.js';
