/**
 * The protocol file (version 1): one zod schema, types by z.infer, exported as JSON Schema for
 * editors (json-schema.ts). Objects are strict: an unknown or misspelt key is an error, never
 * silently ignored. Cross-field rules (references resolve, anchors in their waves, n ≤ band, …) live
 * in cross-check.ts.
 *
 * Top-level keys: version, id, title, description, simulator, envs | suite, checkpoint | policy, conventions, memory, seeds, n,
 * attempts | chains, factors, conditions, waves, estimands, criteria, gates, validity, holmFamilies, goNoGo,
 * executionFailures, allowlists, bootstrap, mde, frames, amendments.
 */
import { z } from 'zod';
import { PolicyConventionsSchema, policyRuntimeFaces, simulatorFaces } from '../core/index.js';
import { BootstrapSchema, CriterionSchema, EstimandSchema, HolmFamilySchema, MdeSchema } from './schema-analysis.js';
import {
  Ident,
  IdentList,
  Kwargs,
  MAX_ENTRIES,
  MAX_ENVS,
  NonEmptyText,
  PositiveInt,
  SeedInt,
  Slug,
  TaskName,
} from './schema-common.js';
import { ConditionSchema } from './schema-conditions.js';
import { FramesSchema } from './schema-frames.js';
import { ExecutionFailureSchema, GateSchema, GoNoGoSchema, ValidityChecksSchema } from './schema-gates.js';
import { kindField } from './kind-field.js';
import { SuiteSchema } from './schema-suite.js';
import { expandSuite } from './suite-expand.js';

export const PROTOCOL_VERSION = 1;

/** The value `checkpoint.sha256` may hold until the checkpoint exists; freezing refuses it. */
export const PENDING_SHA256 = 'pending';

/**
 * The simulator: `{ kind, … }`, the kind one registered with registerSimulatorKind (src/runtime; the built-ins
 * lite and sim-bridge by src/kinds), its other fields that kind's own (kind-field.ts).
 */
export const SimulatorSchema = kindField(simulatorFaces, 'kind', 'the simulator');

export const EnvSchema = z
  .strictObject({
    id: NonEmptyText.describe('the environment id, e.g. ShellGameTouch-lite'),
    task: TaskName.optional().describe('the task name in the plan and the analysis (default: the env id)'),
    kwargs: Kwargs.optional(),
  })
  .describe('an environment (task) with its make-time kwargs');

export const CheckpointSchema = z
  .strictObject({
    path: NonEmptyText.describe(
      'the checkpoint directory; a relative one resolves in the working folder, else next to the protocol, else in the package (docs/install.md)',
    ),
    file: NonEmptyText.default('model.json').describe('the file inside path whose SHA-256 binds the checkpoint'),
    sha256: z
      .string()
      .regex(/^([0-9a-f]{64}|pending)$/, {
        error: 'must be 64 lower-case hex digits (or "pending" before the checkpoint exists)',
      })
      .describe('the SHA-256 of path/file as 64 lower-case hex digits (sha256sum), or "pending" until it exists'),
  })
  .describe('the checkpoint binding: directory, file and SHA-256');

/**
 * The consolidation modes of an episode-local bank (src/banks/token-merge.ts CONSOLIDATION_MODES; the protocol
 * keeps its own list so it depends on core only — src/campaign/memory-modes.ts fails to compile if they differ).
 */
export const MEMORY_CONSOLIDATION_MODES = ['token-merge', 'fifo'] as const;

/**
 * The `policy:` block: `{ runtime: NAME, … }` naming a registered policy runtime (src/campaign/policy-runtime-kind.ts),
 * parsed by that runtime's own fields. Without it, the `checkpoint:` block names the `checkpoint` runtime.
 */
export const PolicyBlockSchema = kindField(
  policyRuntimeFaces,
  'runtime',
  'the policy, run by a registered policy runtime instead of a checkpoint',
);

const bankCommon = {
  capacity: PositiveInt.default(16).describe('records (slots or tokens) per bank before consolidation or eviction'),
  k: PositiveInt.describe('records returned per read (top-k)'),
};

/** How a history window fills a position with no record (memory.bank: history). */
export const HISTORY_PADS = ['first', 'zeros'] as const;
/** The longest history window a protocol may register. */
export const MAX_HISTORY_WINDOW = 256;

export const MemorySchema = z
  .discriminatedUnion('bank', [
    z.strictObject({
      ...bankCommon,
      bank: z
        .literal('episode-local')
        .describe('episode-local perceptual/cognitive banks, emptied at every episode start'),
      banks: z
        .array(z.enum(['perceptual', 'cognitive']))
        .min(1)
        .default(['perceptual', 'cognitive']),
      consolidation: z
        .enum(MEMORY_CONSOLIDATION_MODES)
        .describe(`consolidation when full: ${MEMORY_CONSOLIDATION_MODES.join(' | ')}`),
    }),
    z.strictObject({
      ...bankCommon,
      bank: z.literal('structured-pcmb').describe('the structured slot bank (PCMB) with keyed records'),
      gate: z.number().min(-1).max(1).describe('the selector’s state-similarity gate (e.g. 0.45)'),
      mergeThreshold: z.number().min(-1).max(1).optional().describe('key similarity above which a write merges'),
      persistence: z
        .enum(['within-episode', 'across-attempts'])
        .describe('within-episode: cleared at every attempt; across-attempts: attempt-1 records reach attempt 2'),
    }),
    z.strictObject({
      bank: z
        .literal('history')
        .describe(
          'history memory owned by IMEP: the episode’s past observations, given to the policy as history/<field> each call',
        ),
      window: PositiveInt.max(MAX_HISTORY_WINDOW).describe(
        'observations per call, the current step last (k = window; the bank holds the episode’s steps)',
      ),
      stride: PositiveInt.default(1).describe('elapsed steps between two observations of the window'),
      keys: z
        .array(NonEmptyText)
        .min(1)
        .max(MAX_ENTRIES)
        .describe('the method-visible observation fields kept (history/<field> each)'),
      pad: z
        .enum(HISTORY_PADS)
        .default('first')
        .describe(
          'what fills a position with no record: first = the oldest record the window holds, zeros = all zeros',
        ),
    }),
  ])
  .describe('the memory configuration: bank kind, capacity, k, gate, consolidation; or a history window');

/** The history memory's read k: its window (every read returns at most the window's records). */
export function memoryK(memory: MemoryConfig): number {
  return memory.bank === 'history' ? memory.window : memory.k;
}

const Band = z
  .strictObject({
    start: SeedInt.describe('first seed of the band (inclusive)'),
    end: SeedInt.describe('last seed of the band (inclusive)'),
  })
  .describe('an inclusive seed band { start, end }');

export const SeedsSchema = z
  .strictObject({
    bands: z.array(Band).min(1).optional().describe('inclusive seed bands, used in order'),
    list: z.array(SeedInt).min(1).optional().describe('an explicit seed list, used in order'),
    reuse: z
      .array(
        z.strictObject({
          campaign: NonEmptyText.describe('the registered campaign whose seeds this protocol reuses'),
          reason: NonEmptyText.describe('why the overlap is intended'),
        }),
      )
      .optional()
      .describe('declared overlaps with other registered campaigns (otherwise an overlap is refused)'),
  })
  .describe('the seed band(s): { bands: [{ start, end }] } or { list: [...] }, optional reuse declarations');

export const AttemptsSchema = z
  .strictObject({
    count: z
      .union([z.literal(1), z.literal(2)])
      .describe('episodes per unit: 1, or 2 (attempt 2 may read attempt-1 records)'),
    registered: z.union([z.literal(1), z.literal(2)]).describe('the attempt whose outcome is the registered estimand'),
  })
  .describe('attempts per unit and which one is registered');

export const ChainsSchema = z
  .strictObject({
    length: z.number().int().min(2).max(64).describe('episodes per chain'),
    registered: z
      .array(PositiveInt)
      .min(1)
      .describe('the chain positions (1-based) pooled into the registered endpoint'),
  })
  .describe('multi-episode chains instead of attempts');

export const WaveSchema = z
  .strictObject({
    id: PositiveInt.describe('the wave number (waves run in the listed order)'),
    conditions: IdentList.describe('the conditions run in this wave, in order'),
    anchor: Ident.describe('the wave’s anchor condition; each contrast is taken against its own wave’s anchor'),
  })
  .describe('a wave: its conditions and its anchor');

export const AllowlistsSchema = z
  .strictObject({
    methodVisible: z
      .array(NonEmptyText)
      .min(1)
      .max(MAX_ENTRIES)
      .describe('fields the policy may see (e.g. rgb, toolPosition, instruction)'),
    evaluatorOnly: z
      .array(NonEmptyText)
      .min(1)
      .max(MAX_ENTRIES)
      .describe('fields only the evaluator sees (success, reward, seed, task, attempt, …)'),
  })
  .describe('information isolation: the two lists must be disjoint');

export const AmendmentSchema = z
  .strictObject({
    id: Ident,
    date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date YYYY-MM-DD' }),
    stage: z
      .enum(['before-data', 'after-smoke', 'at-launch', 'during-run', 'after-data'])
      .describe('when it was written'),
    summary: NonEmptyText,
  })
  .describe('a recorded amendment (changing the protocol changes its hash)');

/** The protocol object as written (the issue walk in issues.ts reads its shape); ProtocolSchema validates through it. */
export const ProtocolObjectSchema = z
  .strictObject({
    version: z.literal(PROTOCOL_VERSION).describe('the protocol format version: 1'),
    id: Slug.describe('the protocol id, a lower-case slug'),
    title: NonEmptyText.describe('a one-line title'),
    description: NonEmptyText.optional(),
    simulator: SimulatorSchema,
    envs: z
      .array(EnvSchema)
      .min(1)
      .max(MAX_ENVS)
      .optional()
      .describe(
        'the environments (tasks); units are task × seed. Required unless suite names a task set (which fills it)',
      ),
    suite: SuiteSchema.optional(),
    checkpoint: CheckpointSchema.optional(),
    policy: PolicyBlockSchema.optional(),
    conventions: PolicyConventionsSchema.optional().describe(
      "the policy's action/observation conventions (vla-eval DimSpec vocabulary), checked against each environment's by the convention preflight before anything is written",
    ),
    memory: MemorySchema,
    seeds: SeedsSchema,
    n: PositiveInt.describe('units per condition per task: the first n seeds of the band'),
    attempts: AttemptsSchema.optional(),
    chains: ChainsSchema.optional(),
    factors: z
      .record(Ident, z.array(Ident).min(2).max(MAX_ENTRIES))
      .optional()
      .describe('factorial designs: factor name → its levels, e.g. { view: [visible, blackout] }'),
    conditions: z.array(ConditionSchema).min(1).max(MAX_ENTRIES).describe('the conditions; ids unique'),
    waves: z.array(WaveSchema).min(1).max(MAX_ENTRIES).describe('the waves, each with its conditions and anchor'),
    estimands: z.array(EstimandSchema).min(1).max(MAX_ENTRIES),
    criteria: z
      .array(CriterionSchema)
      .max(MAX_ENTRIES)
      .default([])
      .describe('the registered criteria (frozen decision rules)'),
    gates: z.array(GateSchema).max(MAX_ENTRIES).default([]),
    validity: ValidityChecksSchema,
    holmFamilies: z.array(HolmFamilySchema).max(MAX_ENTRIES).default([]),
    goNoGo: z.array(GoNoGoSchema).max(MAX_ENTRIES).default([]),
    executionFailures: ExecutionFailureSchema,
    allowlists: AllowlistsSchema,
    bootstrap: BootstrapSchema.optional(),
    mde: MdeSchema.optional(),
    frames: FramesSchema.optional(),
    amendments: z.array(AmendmentSchema).max(MAX_ENTRIES).default([]),
  })
  .describe('an IMEP protocol (version 1)');

/**
 * The protocol schema: the object, its suite expanded (suite-expand.ts: envs, per-task estimands, criteria, Holm
 * families), then the kwargs its simulator kind states filled in (stateKwargs). A protocol without suite is the
 * object with stated kwargs, as before.
 */
export const ProtocolSchema = ProtocolObjectSchema.transform((p, ctx) => {
  const expanded = expandSuite(
    p,
    (envs) => statedEnvs(p.simulator.kind, envs),
    (path, message, hint) =>
      ctx.issues.push({ code: 'custom', path, message, input: p, params: { worded: { message, hint } } }),
  );
  return expanded === null ? z.NEVER : stateKwargs(expanded);
});

function statedEnvs<E extends z.infer<typeof EnvSchema>>(kind: string, envs: E[]): E[] {
  const stated = simulatorFaces.get(kind)?.statedKwargs;
  if (stated === undefined) return envs;
  return envs.map((e) => ({ ...e, kwargs: { ...stated(e.id), ...(e.kwargs ?? {}) } }));
}

/**
 * The envs with the kwargs the simulator kind states for every protocol filled in where the YAML leaves them out
 * (SimulatorFace.statedKwargs; lite: toolStart home, RememberColor layout fixed — nothing visible depends on the
 * seed, issue #32), so the protocol hash binds them like any other default. A value the YAML gives is kept.
 */
function stateKwargs<P extends { simulator: { kind: string }; envs: Array<z.infer<typeof EnvSchema>> }>(p: P): P {
  if (simulatorFaces.get(p.simulator.kind)?.statedKwargs === undefined) return p;
  return { ...p, envs: statedEnvs(p.simulator.kind, p.envs) };
}

export type Protocol = z.infer<typeof ProtocolSchema>;
export type ProtocolInput = z.input<typeof ProtocolSchema>;
export type Simulator = z.infer<typeof SimulatorSchema>;
export type EnvEntry = z.infer<typeof EnvSchema>;
export type MemoryConfig = z.infer<typeof MemorySchema>;
export type Seeds = z.infer<typeof SeedsSchema>;
export type Wave = z.infer<typeof WaveSchema>;
export type Allowlists = z.infer<typeof AllowlistsSchema>;
export type CheckpointBinding = z.infer<typeof CheckpointSchema>;
export type PolicyBlock = z.infer<typeof PolicyBlockSchema>;
export type { Frames } from './schema-frames.js';
export type { Suite } from './schema-suite.js';

export type { ProtocolCondition, InstallPoint, ProtocolConditionKind } from './schema-conditions.js';
export type {
  Estimand,
  EstimandKind,
  Criterion,
  HolmFamily,
  BootstrapConfig,
  Mde,
  BoundMethod,
} from './schema-analysis.js';
export type { Gate, GateKind, GoNoGo, ExecutionFailurePolicy, FailureBudget, ValidityChecks } from './schema-gates.js';
export { FAILURE_BUDGET_DEFAULTS } from './schema-gates.js';
