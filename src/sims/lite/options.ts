/**
 * Validation of the lite simulators' make-time kwargs and reset options. Every bad value throws
 * ImepError('E_USAGE') naming the offending key (`kwargs.<key>` or `options.<key>`) and what is
 * allowed; unknown keys are rejected too, so a misspelt option never silently does nothing.
 */
import { ImepError } from '../../core/index.js';

export type Options = Readonly<Record<string, unknown>>;

/** Where a value came from, for error messages: make-time kwargs or reset options. */
export type OptionSource = 'kwargs' | 'options';

/** Resolutions the lite renderers support (square frames). */
export const LITE_RESOLUTIONS = [64, 128] as const;

function usage(envId: string, source: OptionSource, key: string, message: string, hint?: string): ImepError {
  return new ImepError('E_USAGE', `${envId}: ${source}.${key} ${message}`, {
    field: `${source}.${key}`,
    ...(hint === undefined ? {} : { hint }),
  });
}

/** Rejects keys outside `allowed`. */
export function checkKnownKeys(envId: string, source: OptionSource, opts: Options, allowed: readonly string[]): void {
  for (const key of Object.keys(opts)) {
    if (!allowed.includes(key)) {
      throw usage(envId, source, key, 'is not a known option', `known: ${allowed.join(', ') || '(none)'}`);
    }
  }
}

export function optBool(envId: string, source: OptionSource, opts: Options, key: string, fallback: boolean): boolean {
  const v = opts[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw usage(envId, source, key, `must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

export function optInt(
  envId: string,
  source: OptionSource,
  opts: Options,
  key: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = opts[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw usage(envId, source, key, `must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
}

/** An integer option that may also be null (meaning "off"). */
export function optNullableInt(
  envId: string,
  source: OptionSource,
  opts: Options,
  key: string,
  fallback: number | null,
  min: number,
  max: number,
): number | null {
  const v = opts[key];
  if (v === null) return null;
  if (v === undefined) return fallback;
  return optInt(envId, source, opts, key, min, min, max);
}

export function optNumber(
  envId: string,
  source: OptionSource,
  opts: Options,
  key: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = opts[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw usage(envId, source, key, `must be a number in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
}

export function optEnum<T extends string>(
  envId: string,
  source: OptionSource,
  opts: Options,
  key: string,
  fallback: T,
  allowed: readonly T[],
): T {
  const v = opts[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw usage(envId, source, key, `must be one of ${allowed.join(' | ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

export function optResolution(envId: string, opts: Options): number {
  const v = opts['resolution'];
  if (v === undefined) return LITE_RESOLUTIONS[0];
  if (typeof v !== 'number' || !(LITE_RESOLUTIONS as readonly number[]).includes(v)) {
    throw usage(
      envId,
      'kwargs',
      'resolution',
      `must be one of ${LITE_RESOLUTIONS.join(' | ')}, got ${JSON.stringify(v)}`,
    );
  }
  return v;
}

/**
 * Where the tool starts at reset (make-time kwarg `toolStart`, every lite task):
 * - `'home'` (the default since issue #32): exactly TOOL_HOME on every reset. The start then carries no information
 *   about the seed or the fact.
 * - `'seeded'` (the lite tasks' first version, kept so units precommitted with it replay byte for byte): TOOL_HOME
 *   jittered by a draw from Prng(seed).fork('tool'). The seed is public and so is this code, so the visible start
 *   position identifies the seed among a band's seeds — and with it the hidden fact. Never use it in an evaluation.
 * A lite protocol states the value in each env's kwargs (the schema fills the default, LITE_STATED_KWARGS), so its
 * hash binds it.
 */
export const TOOL_STARTS = ['home', 'seeded'] as const;
export type ToolStart = (typeof TOOL_STARTS)[number];

export function optToolStart(envId: string, opts: Options): ToolStart {
  return optEnum(envId, 'kwargs', opts, 'toolStart', 'home', TOOL_STARTS);
}

/** The reset seed: an integer in [0, 2^32 − 1]. */
export function checkSeed(envId: string, seed: unknown): number {
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new ImepError(
      'E_USAGE',
      `${envId}: reset seed must be an integer in [0, 2^32-1], got ${JSON.stringify(seed)}`,
      {
        field: 'seed',
      },
    );
  }
  return seed;
}

/** An option value that is any object (used for reset options, which may be absent). */
export function asOptions(envId: string, source: OptionSource, value: unknown): Options {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ImepError('E_USAGE', `${envId}: ${source} must be a map, got ${JSON.stringify(value)}`, {
      field: source,
    });
  }
  return value as Options;
}
