/**
 * The convention preflight (issue #30 item 5): before any formal row, and before precommit writes anything, every
 * task's policy is run for a few calls (DEFAULT_PREFLIGHT_CALLS, or the most a declaration asks for) of ONE episode on
 * a seed outside every registered band — the protocol's own and every campaign's in the seed registry
 * (preflightSeed) — and what it returns is compared with what the environment declares. Nothing is recorded: no row,
 * no trace, no read hook; the environment it made is closed and the policy's slot is reset by the run before its
 * first episode, so a unit's rows and hashes are what they were without it.
 *
 *   declared      every declaration (convention-check.ts) against the env's spec, statically
 *   observation   each observation the policy is declared to need (by field) is in what it is given, with its dims
 *   action        the returned action's shape is the env's action shape, or [H, …that] (a chunk of H)
 *   values        each action component's values within the range the env declares (± vla-eval's 0.01), finite;
 *                 where the env declares no components, within its action spec's low/high
 *   chunk         the chunk length seen (H of an [H, A] action, or ReportsChunkLength.lastChunkLength of a runtime
 *                 that executes a server's chunk step by step) against the declared one (conventions.chunk)
 *
 * Any disagreement is E_CONVENTION_MISMATCH in one line naming both sides (exit 2). A policy or environment that FAILS
 * here (a timeout, a host that dies) is not a convention: the episode stops, the report says why (assemble.ts prints
 * it), and the run records such failures under the registered failure budget as it always did. It works over any RunnerPolicy,
 * so every registered runtime kind gets it (assemble.ts; not a library caller's own policies or environments); a runtime adds its own declaration through PolicyProvider.conventions or
 * PolicyRuntimeKind.declaredConventions, and its chunk length through ReportsChunkLength.
 */
import { join } from 'node:path';
import { readSeedRegistry } from '../evidence/index.js';
import { seedRanges, type Protocol } from '../protocol/index.js';
import {
  actionLength,
  placeComponents,
  reportsChunkLength,
  splitObservation,
  valueClash,
  type ConventionComponent,
  type DeclaredConventions,
  type EnvSpec,
  type NdArray,
  type Observation,
  type PlacedComponent,
  type SimEnvironment,
} from '../runtime/index.js';
import { isImepError, sameShape } from '../core/index.js';
import {
  assertDeclaredConventions,
  conventionMismatch,
  declaredChunk,
  preflightCalls,
  preflightSeed,
} from './convention-check.js';
import { taskContext, taskEntries } from './plan-segments.js';
import type { EnvProvider, PolicyProvider, RunnerPolicy, SpecSource } from './types.js';

export interface ConventionPreflightInput {
  readonly protocol: Protocol;
  readonly file: string;
  readonly declarations: readonly DeclaredConventions[];
  readonly policy: PolicyProvider;
  readonly envs: EnvProvider;
  /** Specs known before the run (the env's own spec is used when this has none). */
  readonly specs: SpecSource;
  readonly batchSize: number;
  /** The campaigns folder whose seed registry's bands the preflight seed avoids too (undefined: the protocol's only). */
  readonly campaignsDir?: string;
}

/** What the preflight did, per task (for a test or a log line; nothing is written). */
export interface ConventionPreflightReport {
  readonly task: string;
  readonly seed: number;
  readonly calls: number;
  /** Per action entry, the largest |value| the policy returned. */
  readonly maxAbs: readonly number[];
  /**
   * Why the episode stopped early: the policy or the environment failed (a timeout, a host that died) — not a
   * convention, so not refused here: the run records such failures under the registered failure budget.
   */
  readonly stopped?: string;
}

const flatLength = (v: unknown): number | undefined => {
  if (typeof v === 'number' || typeof v === 'boolean') return 1;
  if (typeof v === 'object' && v !== null && 'shape' in v && Array.isArray((v as NdArray).shape))
    return actionLength((v as NdArray).shape);
  if (ArrayBuffer.isView(v)) return (v as unknown as ArrayLike<number>).length;
  if (Array.isArray(v)) return v.length;
  return undefined;
};

const valuesOf = (a: NdArray): ArrayLike<number> =>
  a.data instanceof BigInt64Array || a.data instanceof BigUint64Array
    ? Array.from(a.data, Number)
    : (a.data as ArrayLike<number>);

/** The env's action components, or one synthetic component over its action spec's low/high. */
function actionComponents(spec: EnvSpec): PlacedComponent[] {
  if (spec.conventions !== undefined) return placeComponents(spec.conventions.action);
  const a = spec.action;
  const c: ConventionComponent = {
    name: 'action',
    dims: actionLength(a.shape),
    format: a.dtype,
    ...(a.low !== undefined && a.high !== undefined ? { range: [a.low, a.high] as [number, number] } : {}),
  };
  return placeComponents([c]);
}

/** The seeds the preflight must never use: the protocol's own and every registered campaign's. */
async function bandsToAvoid(protocol: Protocol, campaignsDir: string | undefined) {
  const own = seedRanges(protocol.seeds).map((r) => ({ start: r.start, end: r.end }));
  if (campaignsDir === undefined) return own;
  const registry = await readSeedRegistry(join(campaignsDir, 'seed-registry.json'));
  return [...own, ...Object.values(registry.campaigns).flatMap((c) => c.bands.map((b) => ({ ...b })))];
}

/**
 * Runs the preflight on every task of the protocol; throws E_CONVENTION_MISMATCH (one line, both sides) on the first
 * disagreement. Returns what it saw.
 */
export async function runConventionPreflight(input: ConventionPreflightInput): Promise<ConventionPreflightReport[]> {
  const { protocol, file, declarations } = input;
  const avoid = await bandsToAvoid(protocol, input.campaignsDir);
  const calls = preflightCalls(declarations);
  const chunk = declaredChunk(declarations);
  const chunkSource = declarations.find((d) => d.conventions.chunk !== undefined)?.source;
  const reports: ConventionPreflightReport[] = [];
  for (const entry of taskEntries(protocol).values()) {
    const env = input.envs(entry, 0);
    try {
      const spec = input.specs(entry) ?? env.spec;
      const envName = entry.envId;
      assertDeclaredConventions(declarations, spec, envName, protocol, file);
      const seed = preflightSeed(avoid, spec.seeds);
      // no calls registered, or no seed outside the bands the env takes (a replay of the band's seeds): declarations only
      if (seed === null || calls === 0) continue;
      const progress = { calls: 0, maxAbs: [] as number[] };
      try {
        const runner = await input.policy.policyFor(taskContext(entry, spec), input.batchSize);
        const who = `policy ${input.policy.description}`;
        const episode = {
          ...input,
          env,
          spec,
          envName,
          runner,
          who,
          seed,
          calls,
          task: entry.task,
          chunk,
          chunkSource,
        };
        reports.push(await runEpisode(episode, progress));
      } catch (e) {
        if (isImepError(e) && e.code === 'E_CONVENTION_MISMATCH') throw e;
        const why = e instanceof Error ? e.message : String(e);
        reports.push({ task: entry.task, seed, calls: progress.calls, maxAbs: progress.maxAbs, stopped: why });
      }
    } finally {
      await env.close().catch(() => undefined);
    }
  }
  return reports;
}

interface EpisodeInput extends ConventionPreflightInput {
  readonly env: SimEnvironment;
  readonly spec: EnvSpec;
  readonly envName: string;
  readonly runner: RunnerPolicy;
  readonly who: string;
  readonly seed: number;
  readonly calls: number;
  readonly task: string;
  readonly chunk: number | undefined;
  readonly chunkSource: string | undefined;
}

/** The observation the policy is declared to need, checked against what it is given (present, dims). */
function checkObservation(e: EpisodeInput, obs: Observation): void {
  for (const d of e.declarations) {
    for (const need of d.conventions.observation ?? []) {
      const envSide = e.spec.conventions?.observation?.find((g) =>
        need.field === undefined ? g.name === need.name : (g.field ?? g.name) === need.field,
      );
      const field = need.field ?? envSide?.field;
      if (field === undefined) continue;
      if (!Object.hasOwn(obs, field))
        throw conventionMismatch(
          e.file,
          d.source,
          `needs observation '${need.name}' from field ${field}, but the policy is given only ${Object.keys(obs).join(', ') || 'nothing'} by env ${e.envName}`,
        );
      const n = flatLength(obs[field]);
      if (need.dims > 0 && n !== undefined && n !== need.dims)
        throw conventionMismatch(
          e.file,
          d.source,
          `needs observation '${need.name}' (${need.format}) as ${need.dims} values, but env ${e.envName} gives ${field} with ${n}`,
        );
    }
  }
}

interface Progress {
  calls: number;
  maxAbs: number[];
}

async function runEpisode(e: EpisodeInput, progress: Progress): Promise<ConventionPreflightReport> {
  const policy = e.runner;
  // as the runner starts a unit: the slot's memory scoped (a structured bank cleared), then the episode reset
  const scope = `convention-preflight/${e.task}`;
  const memory = policy.slotMemory(0);
  memory.beginScope(scope);
  try {
    return await steps(e, scope, progress);
  } finally {
    memory.endScope(scope);
  }
}

async function steps(e: EpisodeInput, scope: string, progress: Progress): Promise<ConventionPreflightReport> {
  const { spec, runner: policy, file, who, envName } = e;
  const want = spec.action.shape;
  const placed = actionComponents(spec);
  const maxAbs: number[] = Array.from({ length: actionLength(want) }, () => 0);
  progress.maxAbs = maxAbs;
  await policy.resetSlot(0, { episode: scope, task: e.task, seed: e.seed, attempt: 1 });
  let result = splitObservation(await e.env.reset({ seed: e.seed, options: { attempt: 1 } }), e.protocol.allowlists);
  let made = 0;
  for (let call = 1; call <= e.calls && !result.done; call++) {
    checkObservation(e, result.obs);
    const [out] = await policy.inferBatch([{ slot: 0, obs: result.obs }]);
    if (out === undefined) break;
    made = call;
    progress.calls = call;
    const a = out.action;
    const isChunk = a.shape.length === want.length + 1 && sameShape(a.shape.slice(1), want);
    if (!sameShape(a.shape, want) && !isChunk)
      throw conventionMismatch(
        file,
        who,
        `returned an action of shape [${a.shape.join(', ')}] at call ${call}, but env ${envName} takes [${want.join(', ')}]${spec.conventions === undefined ? '' : ` (${spec.conventions.action.map((c) => `${c.name} ${c.format} ×${c.dims}`).join(', ')})`}`,
        'conventions.action',
      );
    const values = valuesOf(a);
    const per = actionLength(want);
    const rows = isChunk ? (a.shape[0] as number) : 1;
    for (let r = 0; r < rows; r++) {
      const row = Array.from({ length: per }, (_, i) => values[r * per + i] as number);
      row.forEach((v, i) => (maxAbs[i] = Math.max(maxAbs[i] as number, Math.abs(v))));
      for (const p of placed) {
        const clash = valueClash(row, p, envName, call);
        if (clash !== null) throw conventionMismatch(file, who, clash, 'conventions.action');
      }
    }
    const seen = isChunk ? rows : reportsChunkLength(policy) ? policy.lastChunkLength(0) : 1;
    if (e.chunk !== undefined && seen !== undefined && seen !== e.chunk)
      throw conventionMismatch(
        file,
        who,
        `returned a chunk of ${seen} action${seen === 1 ? '' : 's'} at call ${call}, but ${e.chunkSource ?? 'the protocol'} declares chunks of ${e.chunk}`,
        'conventions.chunk',
      );
    const step: NdArray = isChunk
      ? { dtype: a.dtype, shape: [...want], data: a.data.slice(0, per) as NdArray['data'] }
      : a;
    result = splitObservation(await e.env.step(step), e.protocol.allowlists);
  }
  return { task: e.task, seed: e.seed, calls: made, maxAbs };
}
