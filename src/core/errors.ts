/**
 * One error class for every failure a user can cause, with a closed union of codes.
 * The CLI maps codes to exit codes in one place (src/cli/exit-codes.ts); library code throws
 * `ImepError` and never calls process.exit.
 */
export const ERROR_CODES = [
  'E_USAGE', // bad command-line argument
  'E_PROTOCOL_INVALID',
  'E_PROTOCOL_FROZEN',
  'E_OUT_OF_ORDER',
  'E_SEED_OVERLAP',
  'E_ALLOWLIST_OVERLAP',
  'E_CHECKPOINT_MISSING',
  'E_CHECKPOINT_MISMATCH',
  'E_BRIDGE_TIMEOUT',
  'E_BRIDGE_PROTOCOL',
  'E_BRIDGE_REMOTE',
  'E_SIM_UNAVAILABLE',
  'E_UNIT_TAMPERED',
  'E_UNIT_SEALED',
  'E_ROLLBACK', // evidence intact, but at an earlier stage or another root than this machine saw it at
  'E_UNTRUSTED', // evidence intact, but not signed by keys this verifier trusts (or not signed at all)
  'E_SAME_OPERATOR', // adjudication by the session that ran the conditions, without a recorded override
  'E_IO',
  'E_BANK_INVALID',
  'E_INTERVENTION_INVALID',
  'E_DONOR_SHORT',
  'E_STATS_DOMAIN',
  'E_MANIFEST_INVALID',
  'E_CLUSTER',
  'E_CONVENTION_MISMATCH', // the policy's action/observation conventions disagree with the environment's (preflight)
  'E_FAILURE_BUDGET', // a formal run stopped before the seal: its execution failures exceeded the registered budget
  'E_INTERRUPTED', // a formal run stopped cleanly on SIGINT/SIGTERM: its durable rows are kept, a rerun resumes (exit 130)
  'E_INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ImepErrorOptions {
  /** The file the error concerns, when there is one. */
  file?: string;
  /** The field / argument / YAML path the error concerns. */
  field?: string;
  /** What the user should do about it. */
  hint?: string;
  cause?: unknown;
}

export class ImepError extends Error {
  readonly code: ErrorCode;
  readonly file: string | undefined;
  readonly field: string | undefined;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: ImepErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ImepError';
    this.code = code;
    this.file = options.file;
    this.field = options.field;
    this.hint = options.hint;
  }

  /**
   * One line for a terminal: `file: field: message (hint)`. Line breaks echoed from user input (a key
   * "a\nb", a JSON snippet) are escaped so the result is always exactly one line.
   */
  oneLine(): string {
    const where = [this.file, this.field].filter((s): s is string => s !== undefined && s !== '').join(': ');
    const hint = this.hint ? ` — ${this.hint}` : '';
    return escapeLineBreaks(`${where ? `${where}: ` : ''}${this.message}${hint}`);
  }
}

/** Escapes CR, LF, U+2028 and U+2029 as visible sequences. */
export function escapeLineBreaks(text: string): string {
  return text
    .replace(/\r/g, '\\r')
    .replace(/\n/g, '\\n')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function isImepError(e: unknown): e is ImepError {
  return e instanceof ImepError;
}

/** Throws E_STATS_DOMAIN naming the argument; used by the pure statistics functions. */
export function domainError(field: string, message: string): never {
  throw new ImepError('E_STATS_DOMAIN', message, { field });
}
