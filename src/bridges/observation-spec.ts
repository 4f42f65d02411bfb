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

function checkPart(spec: EnvSpec, part: 'obs' | 'evaluator', fields: Readonly<Record<string, unknown>>): void {
  const allowed = part === 'obs' ? spec.methodVisible : spec.evaluatorOnly;
  const declared = spec.observation;
  for (const key in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) continue;
    if (!allowed.includes(key))
      throw offSpec(spec, part, key, `not ${part === 'obs' ? 'method-visible' : 'evaluator-only'} in the spec`);
    const field = Object.prototype.hasOwnProperty.call(declared, key) ? declared[key] : undefined;
    if (field === undefined) throw offSpec(spec, part, key, 'no dtype and shape declared for it');
    const why = misfit(fields[key], field);
    if (why !== undefined) throw offSpec(spec, part, key, why);
  }
}

/** `result` when it fits the spec; otherwise throws E_BRIDGE_PROTOCOL naming the first off-spec field. */
export function checkObservation(spec: EnvSpec, result: StepResult): StepResult {
  checkPart(spec, 'obs', result.obs);
  checkPart(spec, 'evaluator', result.evaluator);
  return result;
}
