/**
 * An observation a simulator server sends is checked against the spec its environment declared at make time
 * (`make` / `makeBatch` reply): every field of `obs` is one of the spec's method-visible fields and every declared
 * method-visible field is there, every field of `evaluator` is one of its evaluator-only fields, and each value fits
 * its declared dtype and shape:
 * - an ndarray has exactly the declared dtype and shape, so its size is the one the spec implies (shape × item size):
 *   a server cannot hand the policy a frame of another shape or a 512 MiB blob under a declared name;
 * - a scalar is declared with one element and has the dtype's type: a number for a float dtype, an integer within the
 *   dtype's range for an int dtype, a boolean only for `bool`, a string (at most MAX_OBSERVATION_STRING characters)
 *   only for `string`;
 * - a structured value (a map or list) only where the spec declares `dtype: map`, with at most MAX_OBSERVATION_ITEMS
 *   values;
 * - nil is no value: it is off spec in `obs` (a policy is never handed a hole), and an evaluator field may be nil
 *   ("not yet": a lite task's `firstVisit` before the first touch). Evaluator fields may also be absent (a
 *   simulator reports some only on some steps); the evaluator reads them, never a policy.
 * An off-spec result fails the call (E_BRIDGE_PROTOCOL naming the field), so the episode is an execution failure,
 * never a row the policy saw.
 *
 * Hot path (every reset and step of every bridged episode): a few comparisons per field, no allocation unless a
 * field is off spec.
 */
import { ImepError, OUTSIDE_NAME_MAX, outsideText } from '../core/index.js';
import { isNdArray } from './ndarray-codec.js';
import type { EnvSpec, FieldSpec, StepResult } from '../runtime/index.js';

/** The most characters a string observation field may hold. */
export const MAX_OBSERVATION_STRING = 65_536;
/** The most values (leaves and containers, strings counted by length / 64) a structured observation field may hold. */
export const MAX_OBSERVATION_ITEMS = 65_536;

/** The dtype that declares a structured field (a map or list: PROTOCOL.md, "What the client takes from a server"). */
export const STRUCTURED_DTYPE = 'map';

/** What a one-element field of each dtype holds as a scalar; a dtype not listed holds none (only its ndarray fits). */
type Kind = 'float' | 'int' | 'bool' | 'string' | 'map' | 'none';

/** The integer dtypes' ranges: lowest value and the first value above the highest (both exact as doubles). */
const INT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  int8: [-(2 ** 7), 2 ** 7],
  uint8: [0, 2 ** 8],
  int16: [-(2 ** 15), 2 ** 15],
  uint16: [0, 2 ** 16],
  int32: [-(2 ** 31), 2 ** 31],
  uint32: [0, 2 ** 32],
  int64: [-(2 ** 63), 2 ** 63],
  uint64: [0, 2 ** 64],
};
const FLOAT_DTYPES: ReadonlySet<string> = new Set(['float16', 'bfloat16', 'float32', 'float64']);

/** A declared field as the check reads it (made once per spec). */
interface Field {
  readonly spec: FieldSpec;
  readonly kind: Kind;
  /** The spec declares one element (shape [] or all ones): a scalar or structured value may stand for it. */
  readonly one: boolean;
  /** Int dtypes: the lowest value, the first value above the highest, and the range in words. (Integers beyond
   * ±(2^53 − 1) never arrive as scalars: the envelope refuses them, so int64 values are numbers here.) */
  readonly low: number;
  readonly above: number;
  readonly range: string;
  /** An evaluator field: nil (no value) fits it. */
  readonly nilFits: boolean;
}

function fieldOf(spec: FieldSpec, nilFits: boolean): Field {
  const bounds = Object.prototype.hasOwnProperty.call(INT_RANGES, spec.dtype) ? INT_RANGES[spec.dtype] : undefined;
  const kind: Kind =
    bounds !== undefined
      ? 'int'
      : FLOAT_DTYPES.has(spec.dtype)
        ? 'float'
        : spec.dtype === 'bool'
          ? 'bool'
          : spec.dtype === 'string'
            ? 'string'
            : spec.dtype === STRUCTURED_DTYPE
              ? 'map'
              : 'none';
  const [low, above] = bounds ?? [0, 0];
  let n = 1;
  for (const d of spec.shape) n *= d;
  const range = `an integer in ${low} … ${(BigInt(above) - 1n).toString()}`;
  return { spec, kind, one: n === 1, low, above, range, nilFits };
}

const declares = (f: Field): string => `${f.spec.dtype} [${f.spec.shape.join(', ')}]`;

/** Why `value` does not fit `field`, or undefined when it does. */
function misfit(value: unknown, field: Field): string | undefined {
  if (typeof value === 'object' && value !== null) {
    if (isNdArray(value)) {
      if (value.dtype !== field.spec.dtype) return `dtype ${value.dtype}, the spec declares ${field.spec.dtype}`;
      const shape = value.shape;
      const declared = field.spec.shape;
      let same = shape.length === declared.length;
      for (let i = 0; same && i < shape.length; i++) same = shape[i] === declared[i];
      return same ? undefined : `shape [${shape.join(', ')}], the spec declares [${declared.join(', ')}]`;
    }
    if (ArrayBuffer.isView(value))
      return `untyped binary of ${value.byteLength} bytes, the spec declares ${declares(field)}`;
    if (field.kind !== 'map' || !field.one)
      return `a ${Array.isArray(value) ? 'list' : 'map'}, the spec declares ${declares(field)}`;
    const items = countItems(value, 0);
    return items > MAX_OBSERVATION_ITEMS ? `a structured value of over ${MAX_OBSERVATION_ITEMS} items` : undefined;
  }
  if (value === null) return field.nilFits ? undefined : `nil (no value), the spec declares ${declares(field)}`;
  if (!field.one) return `a scalar, the spec declares ${declares(field)}`;
  switch (field.kind) {
    case 'float':
      return typeof value === 'number' ? undefined : `${aScalar(value)}, the spec declares ${field.spec.dtype}`;
    case 'int':
      if (typeof value !== 'number') return `${aScalar(value)}, the spec declares ${field.spec.dtype}`;
      return Number.isInteger(value) && value >= field.low && value < field.above
        ? undefined
        : `${String(value)}, the spec declares ${field.spec.dtype} (${field.range})`;
    case 'bool':
      return typeof value === 'boolean' ? undefined : `${aScalar(value)}, the spec declares bool`;
    case 'string':
      if (typeof value !== 'string') return `${aScalar(value)}, the spec declares string`;
      return value.length > MAX_OBSERVATION_STRING
        ? `a string of ${value.length} characters (at most ${MAX_OBSERVATION_STRING})`
        : undefined;
    case 'map':
      return `${aScalar(value)}, the spec declares ${STRUCTURED_DTYPE} (a map or list)`;
    case 'none':
      return `${aScalar(value)}, the spec declares ${field.spec.dtype}, which only an ndarray of that dtype fits`;
  }
}

/** "a boolean", "a number", … (never the value itself: it may be outside text). */
function aScalar(value: unknown): string {
  const t = typeof value;
  return t === 'boolean' ? 'a boolean' : t === 'undefined' ? 'an undefined value' : `a ${t}`;
}

/** Values in a structured field, counted until the cap is passed (then any larger number). */
function countItems(v: unknown, seen: number): number {
  let n = seen + 1;
  if (n > MAX_OBSERVATION_ITEMS) return n;
  if (typeof v === 'string') return n + Math.floor(v.length / 64);
  if (typeof v !== 'object' || v === null) return n;
  if (ArrayBuffer.isView(v)) return n + Math.floor(v.byteLength / 64);
  const values = Array.isArray(v) ? (v as unknown[]) : Object.values(v as Record<string, unknown>);
  for (const x of values) {
    n = countItems(x, n);
    if (n > MAX_OBSERVATION_ITEMS) return n;
  }
  return n;
}

function offSpec(spec: EnvSpec, part: 'obs' | 'evaluator', key: string, why: string): ImepError {
  return new ImepError(
    'E_BRIDGE_PROTOCOL',
    `${outsideText(spec.id, OUTSIDE_NAME_MAX)}: observation field ${JSON.stringify(outsideText(key, OUTSIDE_NAME_MAX))} (${part}) is off spec: ${why}`,
    {
      field: `${part}.${outsideText(key, OUTSIDE_NAME_MAX)}`,
      hint: 'a simulator server sends every method-visible field its environment declared at make time and no other field, each in its declared dtype and shape',
    },
  );
}

/** Per spec (made once, at its first result): each declared field's part and dtype/shape, for one Map lookup a key. */
interface Declared {
  readonly obs: ReadonlyMap<string, Field>;
  readonly evaluator: ReadonlyMap<string, Field>;
}
const DECLARED = new WeakMap<EnvSpec, Declared>();

function declaredOf(spec: EnvSpec): Declared {
  let d = DECLARED.get(spec);
  if (d === undefined) {
    const pick = (names: readonly string[], nilFits: boolean): Map<string, Field> => {
      const m = new Map<string, Field>();
      for (const k of names)
        if (Object.prototype.hasOwnProperty.call(spec.observation, k))
          m.set(k, fieldOf(spec.observation[k] as FieldSpec, nilFits));
      return m;
    };
    d = { obs: pick(spec.methodVisible, false), evaluator: pick(spec.evaluatorOnly, true) };
    DECLARED.set(spec, d);
  }
  return d;
}

/** Checks every field of one part; returns how many declared fields it holds. */
function checkPart(
  spec: EnvSpec,
  part: 'obs' | 'evaluator',
  declared: ReadonlyMap<string, Field>,
  fields: Readonly<Record<string, unknown>>,
): number {
  let present = 0;
  for (const key in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) continue;
    const field = declared.get(key);
    if (field === undefined) throw offSpec(spec, part, key, whyUndeclared(spec, part, key));
    const why = misfit(fields[key], field);
    if (why !== undefined) throw offSpec(spec, part, key, why);
    present++;
  }
  return present;
}

function whyUndeclared(spec: EnvSpec, part: 'obs' | 'evaluator', key: string): string {
  const listed = (part === 'obs' ? spec.methodVisible : spec.evaluatorOnly).includes(key);
  return listed
    ? 'no dtype and shape declared for it'
    : `not ${part === 'obs' ? 'method-visible' : 'evaluator-only'} in the spec`;
}

/** The first declared method-visible field `obs` lacks (called only when one is missing). */
function missingField(
  spec: EnvSpec,
  declared: ReadonlyMap<string, Field>,
  obs: Readonly<Record<string, unknown>>,
): ImepError {
  for (const [key, field] of declared)
    if (!Object.prototype.hasOwnProperty.call(obs, key))
      return offSpec(spec, 'obs', key, `missing: the spec declares it method-visible, ${declares(field)}`);
  /* c8 ignore next */
  throw new ImepError('E_INTERNAL', 'missingField: no declared field is missing');
}

/** `result` when it fits the spec; otherwise throws E_BRIDGE_PROTOCOL naming the first off-spec field. */
export function checkObservation<R extends StepResult>(spec: EnvSpec, result: R): R {
  const declared = declaredOf(spec);
  if (checkPart(spec, 'obs', declared.obs, result.obs) !== declared.obs.size)
    throw missingField(spec, declared.obs, result.obs);
  checkPart(spec, 'evaluator', declared.evaluator, result.evaluator);
  return result;
}
