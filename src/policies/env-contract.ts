/**
 * Checks a checkpoint's declared I/O (model.json, already checked against its real graphs by contract.ts when it is
 * loaded) against an ENVIRONMENT's spec — what the simulator declares (in process: the lite kind's spec; bridged:
 * the spec the server sent when the environment was made) — before anything is written. The first disagreement is
 * refused with one line naming model.json, the tensor's field (`graphs.<graph>.inputs[i]` / `outputs[i]`), the
 * tensor, its shape and what the environment gives (E_CHECKPOINT_MISMATCH).
 *
 * Rules:
 *   observation inputs  `field` is one the environment shows the policy (spec.methodVisible, with a field spec) and
 *                       the protocol's allowlists.methodVisible lists; the input's shape without the batch axis
 *                       equals the field's shape (a scalar field ↔ ["batch"]); the dtypes are convertible the way
 *                       the observation packer converts: uint8 ← uint8; float32 ← any float or integer field;
 *                       int32 ← an integer field of at most 32 bits; string ← string
 *   action output       its shape without the batch axis equals the environment's action shape, or is [H, …that]
 *                       (an action chunk of H steps)
 */
import { ImepError, sameShape } from '../core/index.js';
import type { EnvSpec, FieldSpec } from '../runtime/index.js';
import { BATCH_AXIS, GRAPH_NAMES, type CheckpointManifest, type InputContract } from './manifest.js';

/** What the checkpoint is checked against: one environment's spec and the protocol's method-visible allowlist. */
export interface EnvContractTarget {
  readonly spec: EnvSpec;
  /** The protocol's allowlists.methodVisible (a field it does not list never reaches the policy). */
  readonly allowlist: readonly string[];
  /** How errors name the environment (default: the spec's id). */
  readonly label?: string;
}

/** A tensor shape as the refusals print it: `[batch, 3, 4]`. */
export const shapeText = (s: readonly (number | string)[]): string => `[${s.join(', ')}]`;

const FLOATS = new Set(['float16', 'float32', 'float64']);
const INTS32 = new Set(['int8', 'int16', 'int32', 'uint8', 'uint16']);
const INTS = new Set([...INTS32, 'int64', 'uint32', 'uint64']);

/** Whether an observation input of dtype `input` can be fed from a field of dtype `field` (observation-packer.ts). */
export function feedsDtype(input: InputContract['dtype'], field: string): boolean {
  switch (input) {
    case 'uint8':
      return field === 'uint8';
    case 'float32':
      return FLOATS.has(field) || INTS.has(field);
    case 'int32':
      return INTS32.has(field);
    case 'string':
      return field === 'string';
    default:
      return false;
  }
}

/** Refuses (E_CHECKPOINT_MISMATCH) the first tensor of `manifest` that the environment cannot feed or take. */
export function verifyEnvContract(manifest: CheckpointManifest, manifestFile: string, target: EnvContractTarget): void {
  const { spec, allowlist } = target;
  const envId = target.label ?? spec.id;
  const env = `env ${envId}`;
  const fail = (field: string, message: string, hint: string): never => {
    throw new ImepError('E_CHECKPOINT_MISMATCH', message, { file: manifestFile, field, hint });
  };
  const built = manifest.task;
  const retrain =
    built === undefined || built.env !== envId
      ? `bind a checkpoint built for ${envId}${built === undefined ? '' : ` (${manifest.name} was built for ${built.env})`}, or re-export it for that environment`
      : `${manifest.name} was built for ${built.env} with kwargs ${JSON.stringify(built.kwargs)}: make the environment it was built for, or re-export it for this one`;
  const shown = new Set(spec.methodVisible);
  const evaluatorOnly = new Set(spec.evaluatorOnly);
  const allowed = new Set(allowlist);
  for (const g of GRAPH_NAMES) {
    manifest.graphs[g].inputs.forEach((t, i) => {
      if (t.role !== 'observation' || t.field === undefined) return;
      const where = `graphs.${g}.inputs[${i}]`;
      const name = `${g} input ${JSON.stringify(t.name)}`;
      const field = t.field;
      const fieldSpec: FieldSpec | undefined = Object.hasOwn(spec.observation, field)
        ? spec.observation[field]
        : undefined;
      if (!shown.has(field) || fieldSpec === undefined) {
        const why = evaluatorOnly.has(field) ? 'keeps for the evaluator only' : 'does not have';
        fail(
          `${where}.field`,
          `${name} reads field ${JSON.stringify(field)}, which ${env} ${why} (it shows the policy: ${spec.methodVisible.join(', ') || 'nothing'})`,
          retrain,
        );
        return;
      }
      if (!allowed.has(field)) {
        fail(
          `${where}.field`,
          `${name} reads field ${JSON.stringify(field)}, which the protocol's allowlists.methodVisible does not list (${allowlist.join(', ') || 'nothing'})`,
          `add ${field} to allowlists.methodVisible, or bind a checkpoint that does not read it`,
        );
      }
      const rest = t.shape.slice(1);
      if (!sameShape(rest, fieldSpec.shape)) {
        fail(
          `${where}.shape`,
          `${name} has shape ${shapeText(t.shape)} but ${env} gives ${field} ${shapeText(fieldSpec.shape)} (expected ${shapeText([BATCH_AXIS, ...fieldSpec.shape])})`,
          retrain,
        );
      }
      if (!feedsDtype(t.dtype, fieldSpec.dtype)) {
        fail(
          `${where}.dtype`,
          `${name} is ${t.dtype} but ${env} gives ${field} as ${fieldSpec.dtype}`,
          `${retrain} (uint8 inputs take uint8 fields; float32 inputs take float or integer fields; int32 inputs take integers of up to 32 bits; string inputs take strings)`,
        );
      }
    });
  }
  const act = manifest.graphs.act;
  const i = act.outputs.findIndex((o) => o.role === 'action');
  const action = act.outputs[i];
  if (action === undefined) return; // parseManifest requires one
  const rest = action.shape.slice(1);
  const want = spec.action.shape;
  if (!sameShape(rest, want) && !(rest.length === want.length + 1 && sameShape(rest.slice(1), want))) {
    fail(
      `graphs.act.outputs[${i}].shape`,
      `act output ${JSON.stringify(action.name)} has shape ${shapeText(action.shape)} but ${env} takes actions of shape ${shapeText(want)} (expected ${shapeText([BATCH_AXIS, ...want])}, or ${shapeText([BATCH_AXIS, 'H', ...want])} for a chunk)`,
      retrain,
    );
  }
}
