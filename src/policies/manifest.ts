/**
 * `model.json`: the manifest of a checkpoint folder — its I/O contract, its bank, its files and their SHA-256,
 * and how it was trained. Parsed with zod; a bad manifest is refused with one line naming model.json and the
 * field (ImepError E_CHECKPOINT_MISMATCH).
 *
 * A checkpoint has two graphs run once per step each (see src/policies/README.md, "Per-step sequence"):
 *   encode: observation fields → queryKey, writeCandidate, carry tensors
 *   act:    observation fields, carry tensors, retrieved memory [k × d], memory mask [k] → action, decisionLogits
 * Every tensor of a graph is declared with its real name, dtype and shape; the leading dimension of every tensor
 * is the batch axis, written "batch". Roles say how the runtime wires each tensor:
 *   inputs:  observation (with `field`: the Observation key, e.g. rgb, toolPosition) · carry (an encode output
 *            of the same name, act only) · memory ([batch, k, d], act only) · memoryMask ([batch, k], act only)
 *   outputs: queryKey, writeCandidate ([batch, d], encode only) · carry (encode only) · action ([batch, A] or
 *            [batch, H, A] for a chunk, act only) · decisionLogits ([batch, C], act only) · writeGate ([batch, 1],
 *            encode only, structured bank only: the step's record is written iff writeGate > 0)
 *
 * Banks: `episode` (an EpisodeBank per episode, written every step) or `structured-pcmb` (a StructuredBank scope per
 * unit, src/banks/structured-bank.ts: the query and the record keys — cognitive key, perceptual key and state
 * signature — are all the step's queryKey, the record's `leaf` payload field is its writeCandidate, the other payload
 * fields are one-element zeros, and the record is written only when writeGate > 0; the scope may persist across
 * attempts, as the protocol's memory.persistence says).
 */
import { z } from 'zod';
import { PAYLOAD_FIELDS, CONSOLIDATION_MODES } from '../banks/index.js';
import { ImepError, PolicyConventionsSchema, sameShape } from '../core/index.js';

export const MANIFEST_FORMAT = 'imep-checkpoint';
export const MANIFEST_VERSION = 1;
export const BATCH_AXIS = 'batch';

export const TENSOR_DTYPES = [
  'float32',
  'float16',
  'float64',
  'uint8',
  'int8',
  'int32',
  'int64',
  'bool',
  'string',
] as const;
export type TensorDtype = (typeof TENSOR_DTYPES)[number];

export const INPUT_ROLES = ['observation', 'carry', 'memory', 'memoryMask'] as const;
export const OUTPUT_ROLES = ['queryKey', 'writeCandidate', 'carry', 'action', 'decisionLogits', 'writeGate'] as const;
export type InputRole = (typeof INPUT_ROLES)[number];
export type OutputRole = (typeof OUTPUT_ROLES)[number];
export const GRAPH_NAMES = ['encode', 'act'] as const;
export type GraphName = (typeof GRAPH_NAMES)[number];

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits');
const fileName = z
  .string()
  .min(1)
  .refine(
    (s) => !s.includes('/') && !s.includes('\\') && s !== '.' && s !== '..' && s !== 'model.json',
    'must be a plain file name in the checkpoint folder (not model.json)',
  );
const dim = z.union([z.literal(BATCH_AXIS), z.number().int().positive()]);
const shape = z
  .array(dim)
  .min(1)
  .refine(
    (s) => s[0] === BATCH_AXIS && s.slice(1).every((d) => d !== BATCH_AXIS),
    `must start with "${BATCH_AXIS}" and use it only there`,
  );

const tensorBase = { name: z.string().min(1), dtype: z.enum(TENSOR_DTYPES), shape };
export const inputContractSchema = z.strictObject({
  ...tensorBase,
  role: z.enum(INPUT_ROLES),
  /** Observation key, for role observation. */
  field: z.string().min(1).optional(),
});
export const outputContractSchema = z.strictObject({ ...tensorBase, role: z.enum(OUTPUT_ROLES) });
export const graphContractSchema = z.strictObject({
  /** The graph file (ONNX model, or TF.js layers-model JSON). */
  file: fileName,
  inputs: z.array(inputContractSchema).min(1),
  outputs: z.array(outputContractSchema).min(1),
});

export const episodeBankSchema = z.strictObject({
  kind: z.literal('episode'),
  /** ReadContext.bank of the reads. */
  name: z.string().min(1),
  capacity: z.number().int().positive(),
  k: z.number().int().positive(),
  consolidation: z.enum(CONSOLIDATION_MODES),
  /** The retrieved item's leaf fed to the memory input (EpisodeBank items carry `feature`). */
  leaf: z.literal('feature'),
  /** Reads at step t see writes of steps < t only. */
  order: z.literal('read-before-write'),
});

export const structuredBankSchema = z.strictObject({
  kind: z.literal('structured-pcmb'),
  /** ReadContext.bank of the reads (StructuredBank reads say 'pcmb'). */
  name: z.literal('pcmb'),
  capacity: z.number().int().positive(),
  k: z.number().int().positive(),
  /** The selector's state-signature gate. */
  gate: z.number().min(-1).max(1),
  /** State-signature cosine at or above which a write merges into the most similar record. */
  mergeThreshold: z.number().min(-1).max(1),
  weights: z.strictObject({ cognitive: z.number(), perceptual: z.number() }),
  /** The payload field that carries writeCandidate and is fed to the memory input. */
  leaf: z.enum(PAYLOAD_FIELDS),
  /** Where the three record/query keys come from: the queryKey output. */
  keys: z.literal('queryKey'),
  /** Writes happen only at steps whose writeGate output is > 0. */
  write: z.literal('gated'),
  order: z.literal('read-before-write'),
});

export const bankSpecSchema = z.discriminatedUnion('kind', [episodeBankSchema, structuredBankSchema]);

export const manifestSchema = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  version: z.literal(MANIFEST_VERSION),
  name: z.string().min(1),
  description: z.string(),
  backend: z.enum(['onnx', 'tfjs']),
  /** What it was trained for (informative; the runtime does not enforce it). */
  task: z.strictObject({ env: z.string().min(1), kwargs: z.record(z.string(), z.unknown()) }).optional(),
  graphs: z.strictObject({ encode: graphContractSchema, act: graphContractSchema }),
  /**
   * What the act graph's action output means and what its inputs need, in vla-eval's DimSpec vocabulary (optional;
   * the convention preflight checks it against each environment's, src/campaign/convention-check.ts).
   */
  conventions: PolicyConventionsSchema.optional(),
  bank: bankSpecSchema,
  /** Every file of the checkpoint except model.json. */
  files: z.record(fileName, z.strictObject({ sha256, bytes: z.number().int().nonnegative() })),
  training: z
    .looseObject({
      recipe: z.string().min(1),
      /** Every seed the recipe drew from, by name. */
      seeds: z.record(z.string(), z.number().int()),
    })
    .optional(),
});

export type TensorContract = z.infer<typeof inputContractSchema> | z.infer<typeof outputContractSchema>;
export type InputContract = z.infer<typeof inputContractSchema>;
export type OutputContract = z.infer<typeof outputContractSchema>;
export type GraphContract = z.infer<typeof graphContractSchema>;
export type EpisodeBankSpec = z.infer<typeof episodeBankSchema>;
export type StructuredBankSpec = z.infer<typeof structuredBankSchema>;
export type BankSpec = z.infer<typeof bankSpecSchema>;
export type CheckpointManifest = z.infer<typeof manifestSchema>;

function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else {
      const s = String(p);
      out += /^[A-Za-z_$][\w$]*$/.test(s) ? `${out === '' ? '' : '.'}${s}` : `[${JSON.stringify(s)}]`;
    }
  }
  return out || '(root)';
}

function mismatch(file: string, field: string, message: string, hint?: string): ImepError {
  return new ImepError('E_CHECKPOINT_MISMATCH', message, { file, field, ...(hint === undefined ? {} : { hint }) });
}

/** Parses and cross-checks a manifest; `file` names model.json in errors. */
export function parseManifest(value: unknown, file: string): CheckpointManifest {
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined ? '(root)' : pathOf(issue.path);
    throw mismatch(
      file,
      field,
      issue?.message ?? 'invalid manifest',
      `see src/policies/manifest.ts for the model.json schema`,
    );
  }
  crossCheck(parsed.data, file);
  return parsed.data;
}

interface Found<T> {
  readonly index: number;
  readonly t: T;
}

function byRole<T extends { role: string }>(list: readonly T[], role: string): Found<T>[] {
  const out: Found<T>[] = [];
  list.forEach((t, index) => {
    if (t.role === role) out.push({ index, t });
  });
  return out;
}

const fmt = (s: readonly (number | string)[]): string => `[${s.join(', ')}]`;

/** Internal consistency: roles where they belong, one of each singleton role, shapes agreeing with the bank. */
function crossCheck(m: CheckpointManifest, file: string): void {
  for (const g of GRAPH_NAMES) {
    const graph = m.graphs[g];
    if (m.files[graph.file] === undefined) {
      throw mismatch(
        file,
        `graphs.${g}.file`,
        `${graph.file} is not listed in files`,
        'list every checkpoint file with its sha256',
      );
    }
    for (const [kind, list] of [
      ['inputs', graph.inputs],
      ['outputs', graph.outputs],
    ] as const) {
      const seen = new Set<string>();
      list.forEach((t, i) => {
        if (seen.has(t.name))
          throw mismatch(file, `graphs.${g}.${kind}[${i}].name`, `duplicate tensor name ${JSON.stringify(t.name)}`);
        seen.add(t.name);
      });
    }
    graph.inputs.forEach((t, i) => {
      const where = `graphs.${g}.inputs[${i}]`;
      if (t.role === 'observation' && t.field === undefined)
        throw mismatch(file, `${where}.field`, 'an observation input needs the observation field it reads');
      if (t.role !== 'observation' && t.field !== undefined)
        throw mismatch(file, `${where}.field`, `only observation inputs take a field (role is ${t.role})`);
      if (g === 'encode' && t.role !== 'observation')
        throw mismatch(file, `${where}.role`, `encode inputs are observations only, got ${t.role}`);
    });
    graph.outputs.forEach((t, i) => {
      const encodeOnly =
        t.role === 'queryKey' || t.role === 'writeCandidate' || t.role === 'carry' || t.role === 'writeGate';
      if (encodeOnly !== (g === 'encode'))
        throw mismatch(file, `graphs.${g}.outputs[${i}].role`, `${t.role} is not an output of the ${g} graph`);
      if (t.dtype !== 'float32')
        throw mismatch(file, `graphs.${g}.outputs[${i}].dtype`, `outputs are float32, got ${t.dtype}`);
    });
  }
  const enc = m.graphs.encode;
  const act = m.graphs.act;
  const one = <T extends { role: string }>(
    list: readonly T[],
    role: string,
    where: string,
    required: boolean,
  ): Found<T> | undefined => {
    const found = byRole(list, role);
    if (found.length > 1)
      throw mismatch(file, `${where}[${found[1]?.index ?? 0}].role`, `more than one ${role} tensor`);
    if (required && found.length === 0) throw mismatch(file, where, `no tensor with role ${role}`);
    return found[0];
  };
  const qk = one(enc.outputs, 'queryKey', 'graphs.encode.outputs', true) as Found<OutputContract>;
  const wc = one(enc.outputs, 'writeCandidate', 'graphs.encode.outputs', true) as Found<OutputContract>;
  const action = one(act.outputs, 'action', 'graphs.act.outputs', true) as Found<OutputContract>;
  one(act.outputs, 'decisionLogits', 'graphs.act.outputs', false);
  const mem = one(act.inputs, 'memory', 'graphs.act.inputs', true) as Found<InputContract>;
  const mask = one(act.inputs, 'memoryMask', 'graphs.act.inputs', true) as Found<InputContract>;
  const k = m.bank.k;
  const wShape = wc.t.shape;
  if (wShape.length !== 2)
    throw mismatch(
      file,
      `graphs.encode.outputs[${wc.index}].shape`,
      `writeCandidate is [batch, d], got ${fmt(wShape)}`,
    );
  const d = wShape[1] as number;
  const gate = one(enc.outputs, 'writeGate', 'graphs.encode.outputs', m.bank.kind === 'structured-pcmb');
  if (m.bank.kind === 'episode') {
    if (gate !== undefined)
      throw mismatch(
        file,
        `graphs.encode.outputs[${gate.index}].role`,
        'writeGate is for structured-pcmb banks; an episode bank writes every step',
      );
    if (!sameShape(qk.t.shape, wShape)) {
      throw mismatch(
        file,
        `graphs.encode.outputs[${qk.index}].shape`,
        `queryKey ${fmt(qk.t.shape)} must match writeCandidate ${fmt(wShape)} (cosine needs equal lengths)`,
      );
    }
  } else {
    if (qk.t.shape.length !== 2)
      throw mismatch(
        file,
        `graphs.encode.outputs[${qk.index}].shape`,
        `queryKey is [batch, n], got ${fmt(qk.t.shape)}`,
      );
    if (gate !== undefined && !sameShape(gate.t.shape, [BATCH_AXIS, 1])) {
      throw mismatch(
        file,
        `graphs.encode.outputs[${gate.index}].shape`,
        `writeGate must be [batch, 1], got ${fmt(gate.t.shape)}`,
      );
    }
  }
  if (!sameShape(mem.t.shape, [BATCH_AXIS, k, d])) {
    throw mismatch(
      file,
      `graphs.act.inputs[${mem.index}].shape`,
      `memory must be [batch, k=${k}, d=${d}] (bank.k, writeCandidate d), got ${fmt(mem.t.shape)}`,
    );
  }
  if (mem.t.dtype !== 'float32')
    throw mismatch(file, `graphs.act.inputs[${mem.index}].dtype`, `memory is float32, got ${mem.t.dtype}`);
  if (!sameShape(mask.t.shape, [BATCH_AXIS, k])) {
    throw mismatch(
      file,
      `graphs.act.inputs[${mask.index}].shape`,
      `memoryMask must be [batch, k=${k}], got ${fmt(mask.t.shape)}`,
    );
  }
  if (mask.t.dtype !== 'float32')
    throw mismatch(
      file,
      `graphs.act.inputs[${mask.index}].dtype`,
      `memoryMask is float32 (1 filled, 0 empty), got ${mask.t.dtype}`,
    );
  if (action.t.shape.length < 2 || action.t.shape.length > 3) {
    throw mismatch(
      file,
      `graphs.act.outputs[${action.index}].shape`,
      `action is [batch, A] or [batch, H, A], got ${fmt(action.t.shape)}`,
    );
  }
  act.inputs.forEach((t, i) => {
    if (t.role !== 'carry') return;
    const src = enc.outputs.find((o) => o.role === 'carry' && o.name === t.name);
    if (src === undefined)
      throw mismatch(
        file,
        `graphs.act.inputs[${i}].name`,
        `carry input ${JSON.stringify(t.name)} has no encode carry output of that name`,
      );
    if (!sameShape(src.shape, t.shape) || src.dtype !== t.dtype) {
      throw mismatch(
        file,
        `graphs.act.inputs[${i}].shape`,
        `carry ${t.name} is ${src.dtype}${fmt(src.shape)} out of encode but ${t.dtype}${fmt(t.shape)} into act`,
      );
    }
  });
}
