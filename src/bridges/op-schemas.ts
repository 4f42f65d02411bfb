/**
 * zod schemas of every op body of bridge protocol v1 (sim-bridge/PROTOCOL.md, "Operations"), for
 * requests and replies. Unknown keys in a body are ignored (stripped); fields not marked optional in
 * PROTOCOL.md are required.
 */
import { z } from 'zod';
import type { ReadContext, RecordIdentity, RetrievedItem } from '../banks/index.js';
import { EnvConventionsSchema, type FloatTensor } from '../core/index.js';
import { isNdArray } from './ndarray-codec.js';
import type { EnvSpec, NdArray, ObsValue, StepResult } from '../runtime/index.js';

export const PROTOCOL_VERSION = 1;

/**
 * Ops a peer may request. `memory.read` travels server → client. `policy.reset` / `policy.infer` are
 * served by policy hosts only (`hello.policies` lists what a host serves; simulator servers refuse them).
 */
export const REQUEST_OPS = [
  'hello',
  'ping',
  'make',
  'reset',
  'step',
  'close',
  'memory.read',
  'policy.reset',
  'policy.infer',
  'makeBatch',
  'stepBatch',
] as const;
/** The ops only a policy host serves. */
export const POLICY_OPS = ['policy.reset', 'policy.infer'] as const;
/**
 * The batch ops (PROTOCOL.md "Batch ops"): a batch of slots as one `makeBatch` and one `stepBatch` per tick. A server
 * that lists both in `hello.ops` serves them; clients fall back to per-handle `make` / `step` on one that does not.
 */
export const BATCH_OPS = ['makeBatch', 'stepBatch'] as const;

/** How a server hosts a batch it made (`makeBatch` reply `host`). */
export const BATCH_HOSTS = ['native', 'processes', 'inline'] as const;
export type BatchHost = (typeof BATCH_HOSTS)[number];
export type RequestOp = (typeof REQUEST_OPS)[number];

export function isRequestOp(op: string): op is RequestOp {
  return (REQUEST_OPS as readonly string[]).includes(op);
}

/** Error codes carried in `error` replies. */
export const WIRE_ERROR_CODES = [
  'E_VERSION',
  'E_BAD_MESSAGE',
  'E_UNKNOWN_OP',
  'E_UNKNOWN_ENV',
  'E_BAD_HANDLE',
  'E_BAD_ACTION',
  'E_SIM_UNAVAILABLE',
  'E_ADAPTER',
  'E_TOO_MANY_HANDLES',
] as const;
export type WireErrorCode = (typeof WIRE_ERROR_CODES)[number];

export { MAX_HANDLES_PER_CLIENT } from './handle-limit.js';

/** A non-negative integer a TypeScript number holds exactly. */
export const uintSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Message ids: uints a TypeScript number holds exactly (senders here use 1 … 2^32 − 1). */
export const idSchema = uintSchema;

/** What `uintSchema` accepts, as a plain check (the decoder's hot path). */
export function isUint(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

export function isPlainMap(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export const mapSchema = z.custom<Record<string, unknown>>(isPlainMap, { message: 'expected a map' });
export const ndarraySchema = z.custom<NdArray>(isNdArray, { message: 'expected an ndarray (extension 17)' });
const FLOAT_DTYPES = new Set(['float32', 'float64', 'float16', 'bfloat16']);
export const floatTensorSchema = z.custom<FloatTensor>((v) => isNdArray(v) && FLOAT_DTYPES.has(v.dtype), {
  message: 'expected a float ndarray (float32, float64, float16 or bfloat16)',
});
const obsMapSchema = z.custom<Record<string, ObsValue | NdArray>>(isPlainMap, { message: 'expected a map' });

const nameVersion = z.object({ name: z.string(), version: z.string() });

export const fieldSpecSchema = z.object({ shape: z.array(uintSchema), dtype: z.string() });

/** Optional numbers may arrive as nil from Python (`None`). */
const optionalNumber = z
  .number()
  .nullish()
  .transform((v) => v ?? undefined);

/** A task's fact (PROTOCOL.md, "Facts"): an evaluator-only field and its ≥ 2 distinct values. */
export const factSpecSchema = z.object({
  field: z.string().min(1),
  domain: z
    .array(z.union([z.number().int(), z.string()]))
    .min(2, 'a fact domain needs at least two values')
    .refine((d) => new Set(d).size === d.length, 'fact domain values repeat'),
});

export const envSpecSchema = z
  .object({
    id: z.string(),
    maxSteps: uintSchema,
    action: z.object({ shape: z.array(uintSchema), dtype: z.string(), low: optionalNumber, high: optionalNumber }),
    observation: z.record(z.string(), fieldSpecSchema),
    methodVisible: z.array(z.string()),
    evaluatorOnly: z.array(z.string()),
    instruction: z
      .string()
      .nullish()
      .transform((v) => v ?? undefined),
    fact: factSpecSchema.nullish().transform((v) => v ?? undefined),
    decisionFromStep: uintSchema.nullish().transform((v) => v ?? undefined),
    seeds: z
      .array(
        z
          .object({ start: uintSchema, end: uintSchema })
          .refine((r) => r.start <= r.end, 'a seed range ends before it starts'),
      )
      .min(1, 'an environment that declares its seeds takes at least one')
      .nullish()
      .transform((v) => v ?? undefined),
    conventions: EnvConventionsSchema.nullish().transform((v) => v ?? undefined),
  })
  .superRefine((spec, ctx) => {
    if (spec.fact !== undefined && !spec.evaluatorOnly.includes(spec.fact.field)) {
      ctx.addIssue({
        code: 'custom',
        path: ['fact', 'field'],
        message: `the fact field "${spec.fact.field}" is not evaluator-only: a policy must never see the fact it is tested on`,
      });
    }
    if (spec.decisionFromStep !== undefined && spec.decisionFromStep > spec.maxSteps) {
      ctx.addIssue({
        code: 'custom',
        path: ['decisionFromStep'],
        message: `decisionFromStep ${spec.decisionFromStep} exceeds maxSteps ${spec.maxSteps}`,
      });
    }
  });

export const stepResultSchema = z.object({
  obs: obsMapSchema,
  evaluator: obsMapSchema,
  done: z.boolean(),
  step: uintSchema,
  firstFrameHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits')
    .nullish()
    .transform((v) => v ?? undefined),
});

export const recordIdentitySchema = z.object({
  slot: uintSchema,
  scope: z.string(),
  sourceEpisode: z.string(),
  timestep: uintSchema,
  version: uintSchema,
});

export const retrievedItemSchema = z.object({
  identity: recordIdentitySchema,
  leaves: z.record(z.string(), floatTensorSchema),
});

export const readContextSchema = z.object({
  bank: z.string(),
  scope: z.string(),
  episode: z.string(),
  queryIndex: uintSchema,
  decisionStep: z.boolean(),
  candidateCount: uintSchema,
});

const nonEmpty = z.string().min(1, 'expected a non-empty string');
/** `kwargs` / `options` may be omitted or nil (= {}). */
const optionalMap = mapSchema.nullish().transform((v): Record<string, unknown> => v ?? {});
const optionalUint = uintSchema.nullish().transform((v) => v ?? undefined);

/** One slot's answer in a `policy.infer` reply. */
export const policyOutputSchema = z.object({
  action: ndarraySchema,
  decisionLogits: floatTensorSchema.nullish().transform((v) => v ?? undefined),
  reads: z.array(z.object({ ctx: readContextSchema, identities: z.array(recordIdentitySchema) })),
});

/** What a policy host reports about a policy it serves (`hello.policyIdentity[name]`; campaigns freeze it). */
export const policyIdentitySchema = z.object({
  version: z.string(),
  memory: z.object({ bank: z.string(), banks: z.array(z.string()).optional(), k: uintSchema.optional() }),
  files: z.array(z.object({ path: nonEmpty, bytes: uintSchema, sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
});
export type PolicyIdentity = z.output<typeof policyIdentitySchema>;

/** Request bodies by op. */
export const requestBodySchemas = {
  hello: z.object({ client: nameVersion }),
  ping: z.object({}),
  make: z.object({ env: nonEmpty, kwargs: optionalMap }),
  reset: z.object({ handle: nonEmpty, seed: uintSchema, options: optionalMap, initStateId: optionalUint }),
  step: z.object({ handle: nonEmpty, action: ndarraySchema }),
  close: z.object({ handle: nonEmpty }),
  'memory.read': z.object({ bank: z.string(), ctx: readContextSchema, items: z.array(retrievedItemSchema) }),
  'policy.reset': z.object({ policy: nonEmpty, slot: uintSchema, episode: z.object({ episode: nonEmpty }) }),
  'policy.infer': z.object({ policy: nonEmpty, requests: z.array(z.object({ slot: uintSchema, obs: obsMapSchema })) }),
  makeBatch: z.object({ env: nonEmpty, kwargs: optionalMap, count: uintSchema.min(1) }),
  stepBatch: z.object({ steps: z.array(z.object({ handle: nonEmpty, action: ndarraySchema })) }),
} as const satisfies Record<RequestOp, z.ZodType>;

/** One entry of a `stepBatch` reply that failed: coded as a whole-message error would be. */
export const batchEntryErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** Reply bodies by the op they answer. */
export const replyBodySchemas = {
  hello: z.object({
    protocol: z.number(),
    server: nameVersion,
    ops: z.array(z.string()),
    envs: z.array(z.string()),
    adapters: z.array(z.string()),
    /** Adapters the server has but cannot run here, each with why (a package, a renderer missing); absent: none. */
    unavailable: z
      .record(z.string(), z.string())
      .nullish()
      .transform((v) => v ?? undefined),
    /** What each available adapter reports about the simulator stack it drives (packages, renderer), for the run record. */
    environment: z
      .record(z.string(), mapSchema)
      .nullish()
      .transform((v) => v ?? undefined),
    /** Policies a policy host serves (absent on simulator servers). */
    policies: z
      .array(z.string())
      .nullish()
      .transform((v) => v ?? undefined),
    /** Each served policy's identity (policy hosts that report it). */
    policyIdentity: z
      .record(z.string(), policyIdentitySchema)
      .nullish()
      .transform((v) => v ?? undefined),
  }),
  ping: z.object({ t: z.number() }),
  make: z.object({ handle: z.string(), spec: envSpecSchema }),
  reset: stepResultSchema,
  step: stepResultSchema,
  close: z.object({}),
  'memory.read': z.object({ items: z.array(retrievedItemSchema) }),
  'policy.reset': z.object({}),
  'policy.infer': z.object({ outputs: z.array(policyOutputSchema) }),
  makeBatch: z.object({ handles: z.array(z.string().min(1)).min(1), spec: envSpecSchema, host: z.enum(BATCH_HOSTS) }),
  /** Each entry is a StepResult or a { error } map; checked entry by entry (stepBatchEntry) where it is used. */
  stepBatch: z.object({ results: z.array(mapSchema) }),
} as const satisfies Record<RequestOp, z.ZodType>;

export type RequestBodies = { [K in RequestOp]: z.output<(typeof requestBodySchemas)[K]> };
export type ReplyBodies = { [K in RequestOp]: z.output<(typeof replyBodySchemas)[K]> };
export type HelloReply = ReplyBodies['hello'];

/** What a caller passes as a request body (inputs may use the richer in-memory types). */
export interface RequestInputs {
  hello: { client: { name: string; version: string } };
  ping: Record<string, never>;
  make: { env: string; kwargs?: Readonly<Record<string, unknown>> };
  reset: { handle: string; seed: number; options?: Readonly<Record<string, unknown>>; initStateId?: number };
  step: { handle: string; action: NdArray };
  close: { handle: string };
  'memory.read': { bank: string; ctx: ReadContext; items: readonly RetrievedItem[] };
  /** Only the episode id (bank scope) travels: seed, task and attempt are evaluator-side. */
  'policy.reset': { policy: string; slot: number; episode: { episode: string } };
  'policy.infer': {
    policy: string;
    requests: readonly { slot: number; obs: Readonly<Record<string, ObsValue | NdArray>> }[];
  };
  makeBatch: { env: string; kwargs?: Readonly<Record<string, unknown>>; count: number };
  stepBatch: { steps: readonly { handle: string; action: NdArray }[] };
}

/** What a replier passes as a reply body. */
export interface ReplyInputs {
  hello: HelloReply;
  ping: { t: number };
  make: { handle: string; spec: EnvSpec };
  reset: StepResult;
  step: StepResult;
  close: Record<string, never>;
  'memory.read': { items: readonly RetrievedItem[] };
  'policy.reset': Record<string, never>;
  'policy.infer': {
    outputs: readonly {
      action: NdArray;
      decisionLogits?: FloatTensor;
      reads: readonly { ctx: ReadContext; identities: readonly RecordIdentity[] }[];
    }[];
  };
  makeBatch: { handles: readonly string[]; spec: EnvSpec; host: BatchHost };
  stepBatch: { results: readonly (StepResult | { error: { code: string; message: string } })[] };
}

// Compile-time checks that the schemas' outputs are assignable to the shared contracts.
type Assignable<A extends B, B> = A;
export type _SpecCheck = Assignable<z.output<typeof envSpecSchema>, EnvSpec>;
export type _StepCheck = Assignable<z.output<typeof stepResultSchema>, StepResult>;
export type _ItemCheck = Assignable<z.output<typeof retrievedItemSchema>, RetrievedItem>;
export type _IdentityCheck = Assignable<z.output<typeof recordIdentitySchema>, RecordIdentity>;
export type _CtxCheck = Assignable<z.output<typeof readContextSchema>, ReadContext>;

/*
 * Fast paths of the hot ops (`step` requests, `step` / `reset` replies): hand checks that accept
 * exactly what the schemas above accept and build the same output (unknown keys stripped, a nil
 * `firstFrameHash` kept as an undefined key, as zod does). They return undefined for anything they do
 * not accept; the caller then runs the schema, which rejects it with its own message. The schemas stay
 * the definition; test/bridges/op-schemas.test.ts checks the two agree.
 */

const HASH_RE = /^[0-9a-f]{64}$/;

/** `requestBodySchemas.step`'s output for `v`, or undefined when the schema must decide. */
export function fastStepRequestBody(v: Record<string, unknown>): RequestBodies['step'] | undefined {
  const handle = v['handle'];
  const action = v['action'];
  if (typeof handle !== 'string' || handle.length === 0 || !isNdArray(action)) return undefined;
  return { handle, action };
}

/** `stepResultSchema`'s output for `v`, or undefined when the schema must decide. */
export function fastStepResult(v: Record<string, unknown>): StepResult | undefined {
  const { obs, evaluator, done, step } = v;
  if (!isPlainMap(obs) || !isPlainMap(evaluator) || typeof done !== 'boolean' || !isUint(step)) return undefined;
  if (!('firstFrameHash' in v))
    return { obs: obs as StepResult['obs'], evaluator: evaluator as StepResult['evaluator'], done, step };
  const hash = v['firstFrameHash'];
  if (hash === null || hash === undefined) {
    return {
      obs: obs as StepResult['obs'],
      evaluator: evaluator as StepResult['evaluator'],
      done,
      step,
      firstFrameHash: undefined,
    };
  }
  if (typeof hash !== 'string' || !HASH_RE.test(hash)) return undefined;
  return {
    obs: obs as StepResult['obs'],
    evaluator: evaluator as StepResult['evaluator'],
    done,
    step,
    firstFrameHash: hash,
  };
}

/** The first issue of a failed parse as `path: message`. */
export function describeIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0];
  if (issue === undefined) return `${prefix}: invalid`;
  const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  return `${prefix}${path}: ${issue.message}`;
}

/**
 * Entry `i` of a `stepBatch` reply: its StepResult, or the error the server answered for that entry alone
 * ({ error: { code, message } }), or a description of why the entry is neither (a protocol fault).
 */
export function stepBatchEntry(
  v: Record<string, unknown>,
):
  | { readonly ok: StepResult }
  | { readonly error: { readonly code: string; readonly message: string } }
  | { readonly invalid: string } {
  const fast = fastStepResult(v);
  if (fast !== undefined) return { ok: fast };
  if ('error' in v) {
    const e = batchEntryErrorSchema.safeParse(v);
    return e.success ? { error: e.data.error } : { invalid: describeIssue(e.error, 'result') };
  }
  const r = stepResultSchema.safeParse(v);
  return r.success ? { ok: r.data } : { invalid: describeIssue(r.error, 'result') };
}
