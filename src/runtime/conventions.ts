/**
 * Action / observation conventions (vla-eval 0.8.0's DimSpec vocabulary; the zod shapes are core's
 * conventions-schema.ts) and their comparison, the way vla-eval's orchestrator compares a model server's specs with a
 * benchmark's (vla_eval/specs.py check_specs / DimSpec.is_compatible / DimSpec.validate) — except that here a
 * mismatch is a refusal, not a log warning:
 *
 *   action (policy produces → env consumes)  component k of the policy covers the same entries as the env's
 *                                            component there, with the same dims; formats equal, or the policy's in
 *                                            the env's `accepts`
 *   observation (env produces → policy)      every component the policy needs is one the env gives (by `field`,
 *                                            else by name); formats equal, or the env's in the policy's `accepts`;
 *                                            dims equal where both are > 0
 *   values                                   within the declared range ± RANGE_TOLERANCE (vla-eval's 0.01); finite
 *
 * Every function returns a clause naming BOTH sides (`action[6] 'gripper' is binary_close_negative, but env X declares
 * binary_close_positive (…)`) or null; the caller (src/campaign/convention-check.ts) prefixes the policy it asked.
 */
import type { ConventionComponent, EnvConventions, PolicyConventions } from '../core/index.js';

export type { ConventionComponent, EnvConventions, PolicyConventions } from '../core/index.js';

/** vla-eval's DimSpec.validate tolerance: values may stray this far outside the declared range. */
export const RANGE_TOLERANCE = 0.01;

/** The predefined components of vla_eval/specs.py, for declarations that use them as they are. */
export const CONVENTIONS = {
  POSITION_DELTA: { name: 'position', dims: 3, format: 'delta_xyz', range: [-1, 1] },
  POSITION_ABSOLUTE: { name: 'position', dims: 3, format: 'absolute_xyz' },
  ROTATION_EULER: { name: 'rotation', dims: 3, format: 'euler_xyz', range: [-3.15, 3.15] },
  ROTATION_AA: { name: 'rotation', dims: 3, format: 'axis_angle', range: [-3.15, 3.15] },
  ROTATION_QUAT: { name: 'rotation', dims: 4, format: 'quaternion_xyzw', range: [-1, 1] },
  GRIPPER_CLOSE_POS: { name: 'gripper', dims: 1, format: 'binary_close_positive', range: [-1, 1] },
  GRIPPER_CLOSE_NEG: { name: 'gripper', dims: 1, format: 'binary_close_negative', range: [-1, 1] },
  GRIPPER_01: { name: 'gripper', dims: 1, format: 'continuous_01', range: [0, 1] },
  GRIPPER_CLOSE_01: { name: 'gripper', dims: 1, format: 'binary_close_01', range: [0, 1] },
  IMAGE_RGB: { name: 'image', dims: 0, format: 'rgb_hwc_uint8' },
  LANGUAGE: { name: 'language', dims: 0, format: 'language' },
} as const satisfies Record<string, ConventionComponent>;

/** A component with the entries it covers in the flat action vector: [start, end). */
export interface PlacedComponent {
  readonly component: ConventionComponent;
  readonly index: number;
  readonly start: number;
  readonly end: number;
}

/** The components placed one after another (component k after the dims of 0…k−1). */
export function placeComponents(components: readonly ConventionComponent[]): PlacedComponent[] {
  let start = 0;
  return components.map((component, index) => {
    const placed = { component, index, start, end: start + component.dims };
    start = placed.end;
    return placed;
  });
}

/** Entries the components cover in all. */
export const totalDims = (components: readonly ConventionComponent[]): number =>
  components.reduce((n, c) => n + c.dims, 0);

/** `action[6] 'gripper'` / `action[0:3] 'position'`. */
export function placeText(what: string, p: PlacedComponent): string {
  const at = p.end - p.start === 1 ? `${p.start}` : `${p.start}:${p.end}`;
  return `${what}[${at}] '${p.component.name}'`;
}

const rangeText = (r: readonly [number, number]): string => `[${r[0]}, ${r[1]}]`;
const describe = (c: ConventionComponent): string => (c.description ? ` (${c.description})` : '');

/** vla-eval's is_compatible: the producer's format is the consumer's, or in its `accepts`. Null when compatible. */
export function formatClash(producer: ConventionComponent, consumer: ConventionComponent): string | null {
  if (consumer.accepts !== undefined) return consumer.accepts.includes(producer.format) ? null : 'format';
  if (producer.format !== consumer.format) return 'format';
  if (producer.dims !== consumer.dims && producer.dims > 0 && consumer.dims > 0) return 'dims';
  return null;
}

const acceptsText = (c: ConventionComponent): string =>
  c.accepts === undefined ? c.format : `${c.format} (accepts ${c.accepts.join(', ')})`;

/**
 * The first disagreement between what the policy declares it returns (`policy`) and what the env takes (`env`),
 * as a clause naming both sides; null when they agree. `envName` names the environment.
 */
export function actionClash(
  policy: readonly ConventionComponent[],
  env: readonly ConventionComponent[],
  envName: string,
): string | null {
  const envPlaced = placeComponents(env);
  const total = totalDims(env);
  if (totalDims(policy) !== total)
    return `its action components cover ${totalDims(policy)} entries (${policy.map((c) => `${c.name} ×${c.dims}`).join(', ')}), but env ${envName} takes ${total} (${env.map((c) => `${c.name} ×${c.dims}`).join(', ')})`;
  for (const p of placeComponents(policy)) {
    const e = envPlaced.find((x) => x.start === p.start);
    if (e === undefined || e.end !== p.end) {
      const over = envPlaced.find((x) => x.start <= p.start && p.start < x.end) ?? envPlaced[0];
      return `${placeText('action', p)} is ${p.component.format} ×${p.component.dims}, but env ${envName} has ${over === undefined ? 'no component there' : `${placeText('action', over)} (${over.component.format} ×${over.component.dims})`} at those entries`;
    }
    const clash = formatClash(p.component, e.component);
    if (clash !== null)
      return `${placeText('action', p)} is ${p.component.format}, but env ${envName} declares ${placeText('action', e)} ${acceptsText(e.component)}${describe(e.component)}`;
  }
  return null;
}

/** The env component a policy's observation component reads: the same `field`, else the same name. */
function envObservationFor(
  need: ConventionComponent,
  gives: readonly ConventionComponent[],
): ConventionComponent | undefined {
  if (need.field !== undefined) return gives.find((g) => (g.field ?? g.name) === need.field);
  return gives.find((g) => g.name === need.name);
}

/** The first observation component the policy needs that the env does not give as needed (a clause), or null. */
export function observationClash(
  needs: readonly ConventionComponent[],
  gives: readonly ConventionComponent[],
  envName: string,
): string | null {
  for (const need of needs) {
    const g = envObservationFor(need, gives);
    const label = `observation '${need.name}'${need.field === undefined ? '' : ` (field ${need.field})`}`;
    if (g === undefined)
      return `needs ${label} as ${need.format}${need.dims > 0 ? ` ×${need.dims}` : ''}, which env ${envName} does not give (it gives: ${gives.map((x) => `${x.name}${x.field === undefined ? '' : `=${x.field}`} ${x.format}`).join(', ') || 'nothing declared'})`;
    const clash = formatClash(g, need);
    if (clash !== null)
      return `needs ${label} as ${acceptsText(need)}${need.dims > 0 ? ` ×${need.dims}` : ''}, but env ${envName} gives ${g.name}${g.field === undefined ? '' : ` (field ${g.field})`} as ${g.format}${g.dims > 0 ? ` ×${g.dims}` : ''}${describe(g)}`;
  }
  return null;
}

/** The first value of `values` outside the component's range ± tolerance (or not finite), as a clause; else null. */
export function valueClash(
  values: ArrayLike<number>,
  p: PlacedComponent,
  envName: string,
  call: number,
): string | null {
  const r = p.component.range;
  for (let i = p.start; i < p.end && i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v))
      return `${placeText('action', p)} is ${v} at call ${call}; env ${envName} takes finite ${p.component.format}`;
    if (r !== undefined && (v < r[0] - RANGE_TOLERANCE || v > r[1] + RANGE_TOLERANCE))
      return `action[${i}] ('${p.component.name}') = ${Number(v.toPrecision(6))} at call ${call} is outside ${rangeText(r)}, the range env ${envName} declares for ${p.component.format}${describe(p.component)}`;
  }
  return null;
}

/** Where a policy's conventions come from, named in every refusal: `policy ws://127.0.0.1:8000 (vla-eval HELLO)`. */
export interface DeclaredConventions {
  readonly source: string;
  readonly conventions: PolicyConventions;
}

/**
 * A runner policy that returns one action per call while executing a longer chunk its server returned (an openpi
 * server's [H, A] reply, `execute` steps of it): the length of the chunk behind slot `slot`'s last action, so the
 * convention preflight can compare it with the declared chunk length.
 */
export interface ReportsChunkLength {
  lastChunkLength(slot: number): number | undefined;
}

export function reportsChunkLength(p: unknown): p is ReportsChunkLength {
  return (
    typeof p === 'object' && p !== null && typeof (p as Partial<ReportsChunkLength>).lastChunkLength === 'function'
  );
}

/** The action-vector length of an env action shape ([A] → A; [] → 1). */
export const actionLength = (shape: readonly number[]): number => shape.reduce((n, d) => n * d, 1);

/** The conventions of `env` that are internally consistent: the action components cover the action shape. */
export function envConventionsProblem(
  conventions: EnvConventions,
  action: { readonly shape: readonly number[] },
): string | null {
  const want = actionLength(action.shape);
  const got = totalDims(conventions.action);
  return got === want ? null : `its action components cover ${got} entries but its action shape holds ${want}`;
}
