/**
 * The lite simulator kind (`simulator: { kind: lite, transport?, executionNoise? }`): IMEP's own lite simulators,
 * in process (the default, fastest) or behind `imep sim serve lite` servers IMEP starts (transport: bridge — for
 * testing and parity; rows are identical). Its protocol checks (env ids, kwargs merged with each condition's
 * envKwargs, method-visible fields) ask the simulators themselves; every lite protocol states the kwargs
 * liteStatedKwargs gives before it is hashed. Registered by src/kinds.
 */
import { z } from 'zod';
import {
  didYouMean,
  ExecutionNoiseSchema,
  isImepError,
  type ExecutionNoise,
  type KindBlock,
  type ProtocolIssueSink,
  type ProtocolPath,
  type ProtocolView,
} from '../../core/index.js';
import { inProcessSimulators, type EnvProvider, type SimulatorKind } from '../../runtime/index.js';
import { LITE_ENV_IDS, isLiteEnvId, liteStatedKwargs, makeLiteEnv, makeLiteEnvSync } from './registry.js';
import { LITE_BENCHMARKS } from './benchmarks.js';

const fields = {
  transport: z
    .enum(['in-process', 'bridge'])
    .optional()
    .describe(
      'in-process (the default, fastest) or bridge: the same simulators behind `imep sim serve lite` servers IMEP starts (for testing and parity; rows are identical)',
    ),
  executionNoise: ExecutionNoiseSchema.optional(),
};

const LiteBlockSchema = z.looseObject(fields);
type LiteBlock = z.infer<typeof LiteBlockSchema>;
const liteBlock = (block: KindBlock): LiteBlock => LiteBlockSchema.parse(block);
const inProcess = (block: KindBlock): boolean => (liteBlock(block).transport ?? 'in-process') === 'in-process';

/** The lite environments in process: one per task and slot, made from the protocol's id and kwargs. */
export const liteInProcessEnvs: EnvProvider = (task) => makeLiteEnv(task.envId, task.kwargs);

/** The kwargs key an E_USAGE error from the lite options names (`kwargs.<key>`), if any. */
function kwargKey(field: string | undefined): string | undefined {
  return field?.startsWith('kwargs.') ? field.slice('kwargs.'.length) : undefined;
}

/** Env ids the lite registry knows; each env's kwargs, merged with every condition's envKwargs, accepted. */
function checkEnvs(p: ProtocolView, issues: ProtocolIssueSink): void {
  p.envs.forEach((env, i) => {
    if (!isLiteEnvId(env.id)) {
      issues.push(
        ['envs', i, 'id'],
        `unknown lite environment "${env.id}"`,
        `${didYouMean(env.id, LITE_ENV_IDS)}known lite environments: ${LITE_ENV_IDS.join(', ')}`,
      );
      return;
    }
    const variants = [{ envKwargs: undefined as Readonly<Record<string, unknown>> | undefined, index: -1 }];
    p.conditions.forEach((c, j) => {
      if (c.envKwargs) variants.push({ envKwargs: c.envKwargs, index: j });
    });
    for (const { envKwargs, index } of variants) {
      try {
        makeLiteEnvSync(env.id, { ...(env.kwargs ?? {}), ...(envKwargs ?? {}) });
      } catch (e) {
        if (!isImepError(e)) throw e;
        const key = kwargKey(e.field);
        const fromCondition = envKwargs !== undefined && key !== undefined && key in envKwargs;
        const path: ProtocolPath = fromCondition
          ? ['conditions', index, 'envKwargs', key]
          : key !== undefined && key in (env.kwargs ?? {})
            ? ['envs', i, 'kwargs', key]
            : ['envs', i, 'kwargs'];
        issues.push(path, e.message, e.hint ?? `see the kwargs of ${env.id} in src/sims/lite`, 'E_PROTOCOL_INVALID');
        return;
      }
    }
  });
}

/** Every method-visible field is one some lite env shows the policy (each missing field reported once). */
function checkMethodVisible(p: ProtocolView, issues: ProtocolIssueSink): void {
  const reported = new Set<string>();
  for (const env of p.envs) {
    if (!isLiteEnvId(env.id)) continue;
    let shown: readonly string[];
    try {
      shown = makeLiteEnvSync(env.id, env.kwargs).spec.methodVisible;
    } catch {
      continue; // reported by checkEnvs
    }
    p.allowlists.methodVisible.forEach((f, i) => {
      if (shown.includes(f) || reported.has(f)) return;
      reported.add(f);
      issues.push(
        ['allowlists', 'methodVisible', i],
        `${env.id} does not show "${f}" to the policy`,
        `method-visible fields of ${env.id}: ${shown.join(', ')}`,
      );
    });
  }
}

export const liteSimulatorKind: SimulatorKind = {
  name: 'lite',
  summary: 'the in-repo lite simulators (src/sims/lite)',
  fields,
  statedKwargs: liteStatedKwargs,
  checkProtocol: checkEnvs,
  checkMethodVisible,
  executionNoise: (block): ExecutionNoise | undefined => liteBlock(block).executionNoise,
  inProcess,
  preflight: () => undefined,
  async open(block, ctx) {
    if (inProcess(block)) return inProcessSimulators(liteInProcessEnvs);
    return ctx.bridged({ servers: { start: 'imep-lite' }, adapter: 'lite', checkAdapter: false, vectorize: false });
  },
  describe: (block) =>
    inProcess(block)
      ? 'lite simulators in process'
      : 'lite simulators over the bridge (`imep sim serve lite` servers started by IMEP)',
  servers: (block) => (inProcess(block) ? undefined : { start: 'imep-lite' }),
  knownSpec: (_block, envId, kwargs) => makeLiteEnv(envId, kwargs).spec,
  benchmarks: () => LITE_BENCHMARKS,
};
