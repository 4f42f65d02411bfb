/**
 * Errors of bridge calls: a peer's `error` reply becomes an `ImepError` that keeps the wire code.
 * E_SIM_UNAVAILABLE stays E_SIM_UNAVAILABLE; the peer refusing our message (E_VERSION, E_BAD_MESSAGE,
 * E_UNKNOWN_OP) is E_BRIDGE_PROTOCOL; everything else the remote reports is E_BRIDGE_REMOTE.
 */
import { ImepError, OUTSIDE_MESSAGE_MAX, OUTSIDE_NAME_MAX, outsideText, type ErrorCode } from '../core/index.js';

export class BridgeCallError extends ImepError {
  /** The wire error code the peer sent (E_BAD_HANDLE, E_ADAPTER, …). */
  readonly wireCode: string;
  /** The op of the failed call. */
  readonly op: string;

  constructor(code: ErrorCode, op: string, wireCode: string, message: string) {
    super(code, `${op}: ${wireCode}: ${message}`, { field: op });
    this.name = 'BridgeCallError';
    this.wireCode = wireCode;
    this.op = op;
  }
}

const PROTOCOL_REFUSALS = new Set(['E_VERSION', 'E_BAD_MESSAGE', 'E_UNKNOWN_OP']);

/**
 * The ImepError for an `error` reply to a call of `op`. The peer's code and message are outside text: they are
 * cleaned and capped here, where they enter (src/core/outside-text.ts), before any terminal, row or report sees them.
 */
export function errorFromWire(op: string, rawCode: string, rawMessage: string): BridgeCallError {
  const wireCode = outsideText(rawCode, OUTSIDE_NAME_MAX);
  const message = outsideText(rawMessage, OUTSIDE_MESSAGE_MAX);
  const code: ErrorCode =
    wireCode === 'E_SIM_UNAVAILABLE'
      ? 'E_SIM_UNAVAILABLE'
      : PROTOCOL_REFUSALS.has(wireCode)
        ? 'E_BRIDGE_PROTOCOL'
        : 'E_BRIDGE_REMOTE';
  return new BridgeCallError(code, op, wireCode, message);
}

/** The wire code of a bridge error, when it came from the peer. */
export function wireCodeOf(e: unknown): string | undefined {
  return e instanceof BridgeCallError ? e.wireCode : undefined;
}
