/**
 * An observation a simulator server sends is checked against the spec its environment declared at make time
 * (`make` / `makeBatch` reply): every field of `obs` is one of the spec's method-visible fields, every field of
 * `evaluator` one of its evaluator-only fields, and each value fits its declared dtype and shape. An array's size is
 * therefore the one the spec implies (shape × item size), so a server cannot hand the policy a frame of another
 * shape or a 512 MiB blob under a declared name; a string field holds at most MAX_OBSERVATION_STRING characters and
 * a structured one (a map or list: `dtype: map`) at most MAX_OBSERVATION_ITEMS values. An off-spec result fails the
 * call (E_BRIDGE_PROTOCOL naming the field), so the episode is an execution failure, never a row the policy saw.
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

/** Why `value` does not fit `field`, or undefined when it does. */
function misfit(value: unknown, field: FieldSpec): string | undefined {
  if (typeof value === 'object' && value !== null) {
    if (isNdArray(value)) {
      if (value.dtype !== field.dtype) return `dtype ${value.dtype}, the spec declares ${field.dtype}`;
      const shape = value.shape;
      const declared = field.shape;
      let same = shape.length === declared.length;
      for (let i = 0; same && i < shape.length; i++) same = shape[i] === declared[i];
      return same ? undefined : `shape [${shape.join(', ')}], the spec declares [${declared.join(', ')}]`;
    }
    if (ArrayBuffer.isView(value))
      return `untyped binary of ${value.byteLength} bytes, the spec declares ${field.dtype} [${field.shape.join(', ')}]`;
    if (elements(field) !== 1)
      return `a ${Array.isArray(value) ? 'list' : 'map'}, the spec declares ${field.dtype} [${field.shape.join(', ')}]`;
    const items = countItems(value, 0);
    return items > MAX_OBSERVATION_ITEMS ? `a structured value of over ${MAX_OBSERVATION_ITEMS} items` : undefined;
  }
  if (elements(field) !== 1) return `a scalar, the spec declares ${field.dtype} [${field.shape.join(', ')}]`;
  if (typeof value === 'string') {
    if (field.dtype !== 'string') return `a string, the spec declares ${field.dtype}`;
    return value.length > MAX_OBSERVATION_STRING
      ? `a string of ${value.length} characters (at most ${MAX_OBSERVATION_STRING})`
      : undefined;
  }
  return field.dtype === 'string' && value !== null ? `a ${typeof value}, the spec declares string` : undefined;
}

function elements(field: FieldSpec): number {
  let n = 1;
  for (const d of field.shape) n *= d;
  return n;
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
      hint: 'a simulator server sends only the fields its environment declared at make time, in their declared dtype and shape',
    },
  );
}

/** Per spec (made once, at its first result): each declared field's part and dtype/shape, for one Map lookup a key. */
interface Declared {
  readonly obs: ReadonlyMap<string, FieldSpec>;
  readonly evaluator: ReadonlyMap<string, FieldSpec>;
}
const DECLARED = new WeakMap<EnvSpec, Declared>();

function declaredOf(spec: EnvSpec): Declared {
  let d = DECLARED.get(spec);
  if (d === undefined) {
    const pick = (names: readonly string[]): Map<string, FieldSpec> => {
      const m = new Map<string, FieldSpec>();
      for (const k of names)
        if (Object.prototype.hasOwnProperty.call(spec.observation, k)) m.set(k, spec.observation[k] as FieldSpec);
      return m;
    };
    d = { obs: pick(spec.methodVisible), evaluator: pick(spec.evaluatorOnly) };
    DECLARED.set(spec, d);
  }
  return d;
}

function checkPart(
  spec: EnvSpec,
  part: 'obs' | 'evaluator',
  declared: ReadonlyMap<string, FieldSpec>,
  fields: Readonly<Record<string, unknown>>,
): void {
  for (const key in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) continue;
    const field = declared.get(key);
    if (field === undefined) throw offSpec(spec, part, key, whyUndeclared(spec, part, key));
    const why = misfit(fields[key], field);
    if (why !== undefined) throw offSpec(spec, part, key, why);
  }
}

function whyUndeclared(spec: EnvSpec, part: 'obs' | 'evaluator', key: string): string {
  const listed = (part === 'obs' ? spec.methodVisible : spec.evaluatorOnly).includes(key);
  return listed
    ? 'no dtype and shape declared for it'
    : `not ${part === 'obs' ? 'method-visible' : 'evaluator-only'} in the spec`;
}

/** `result` when it fits the spec; otherwise throws E_BRIDGE_PROTOCOL naming the first off-spec field. */
export function checkObservation<R extends StepResult>(spec: EnvSpec, result: R): R {
  const declared = declaredOf(spec);
  checkPart(spec, 'obs', declared.obs, result.obs);
  checkPart(spec, 'evaluator', declared.evaluator, result.evaluator);
  return result;
}
