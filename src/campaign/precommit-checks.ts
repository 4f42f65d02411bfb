/**
 * Every check a new unit's precommit makes that writes nothing and starts nothing, as one list that both
 * precommit (campaign-setup.ts openCampaign, before anything is written) and `imep protocol check` run — so the
 * two cannot drift: what precommit refuses before writing, check refuses with the same line.
 *
 *   plan-size         the plan's size, computed before it is built (plan-size.ts)      → E_PROTOCOL_INVALID n
 *   frozen-power      the registered MDE table is what its inputs give (src/evidence/frozen-power.ts) → mde.outputs[i]
 *   seed-registry     the seed bands against the campaigns folder's registry (read)    → E_SEED_OVERLAP seeds
 *   checkpoint        the checkpoint file readable and its SHA-256 the bound one       → E_CHECKPOINT_MISSING / _MISMATCH
 *                     (verifyCheckpoint)
 *   policy-runtime    the registered policy runtime's preflight (policy-runtime-kind.ts), from files: a checkpoint's
 *                     manifest serves the protocol's memory (E_CHECKPOINT_MISMATCH); a hosted policy's pythonPath,
 *                     module and name found (E_PROTOCOL_INVALID policy.*; a module's name not written in its
 *                     files: a warning, the host decides)
 *   simulator         the simulator settings and files (simulator-settings.ts)         → E_PROTOCOL_INVALID simulator.*
 *   sandbox-binds     no folder a started host's or server's sandbox would bind exposes  → E_PROTOCOL_INVALID policy.* /
 *                     the campaigns folder, the key store, IMEP's state or HOME           simulator.* / the variable
 *                     (sandbox-binds.ts)
 *   conditions        every registered condition on every task against what the policy → E_PROTOCOL_INVALID conditions.*
 *                     runtime and the environments offer whose specs the simulator kind knows (run-plan.ts checkRuntime,
 *                     checkFacts; the bank's installability read from the manifest)
 *   policy-io         the policy's declared I/O against each environment's spec the    → E_CHECKPOINT_MISMATCH
 *                     simulator kind knows (a checkpoint: every observation input's       graphs.<g>.inputs[i] / outputs[i]
 *                     field, shape and dtype, the action's shape; src/policies/env-contract.ts)
 *   conventions       the policy's declared action/observation conventions (the protocol's → E_CONVENTION_MISMATCH conventions
 *                     `conventions:`, a checkpoint's model.json `conventions`) against each
 *                     environment's spec the simulator kind knows (convention-check.ts); the
 *                     convention PREFLIGHT — a few policy calls on a seed outside every band —
 *                     starts the policy, so precommit runs it next (assemble.ts)
 *   attainable        warns (never refuses) for each criterion that cannot hold at the registered n
 *                     (attainable.ts), naming it
 *
 * What a precommit checks only by starting something — a bridged simulator's servers (env ids, allowlists, seeds, the
 * policy's I/O against the specs they declare: assemble.ts),
 * a policy host's identity and memory — or from a run's options (--servers, --batch) is not here: `protocol check`
 * says so, and precommit checks them next, still before anything is written.
 *
 * A check is { id, run(input) } returning its warnings; a refusal is an ImepError thrown. To add one, append it to
 * PRECOMMIT_CHECKS: precommit and `protocol check` both pick it up (test/campaign/precommit-checks.test.ts runs every
 * bad-protocol fixture through both).
 */
import { join } from 'node:path';
import { ImepError } from '../core/index.js';
import {
  assertPlanSize,
  describeEstimate,
  verifyCheckpoint,
  type PlanEstimate,
  type Protocol,
} from '../protocol/index.js';
import { attainableWarnings } from './attainable.js';
import {
  checkFrozenPower,
  describeOverlap,
  findSeedOverlaps,
  readSeedRegistry,
  type SeedBand,
} from '../evidence/index.js';
import { seedRanges } from '../protocol/index.js';
import { factsOf } from '../runtime/index.js';
import { policyRuntimeKindOf, type PolicyRuntimeContext } from './policy-runtime-kind.js';
import { assertSimulatorSettings } from './simulator-settings.js';
import { conditionPlan } from './condition-plan.js';
import { checkFacts, checkRuntime, taskEntries } from './run-plan.js';
import { checkSandboxBinds } from './sandbox-binds.js';
import { simulatorKindOf } from './bridge-envs.js';
import { assertDeclaredConventions, fileDeclarations } from './convention-check.js';

export interface PrecommitCheckInput {
  readonly file: string;
  readonly protocol: Protocol;
  /** Where the protocol's relative paths (pythonPath, replayDir) resolve, in order. */
  readonly roots: readonly string[];
  /** Where checkpoint.path resolves (campaign-setup.ts checkpointRoot). */
  readonly checkpointRoot: string;
  /** The campaigns folder whose seed registry the bands are checked against (only read). */
  readonly campaignsDir: string;
  /** The user confirmed a plan above PLAN_ROWS_CONFIRM rows. */
  readonly allowLargePlan: boolean;
  /** The caller runs its own policy runtime (CampaignOptions.policies): the default runtime's checks are skipped. */
  readonly ownPolicies: boolean;
  /** The caller runs its own environments (CampaignOptions.envs): the lite environments' facts are not asked. */
  readonly ownEnvs: boolean;
}

export interface PrecommitCheckResult {
  /** Lines a user should read that refuse nothing (e.g. a criterion that cannot hold). */
  readonly warnings: string[];
  /** Plain information (e.g. a large plan's estimate). */
  readonly notes: string[];
}

export interface PrecommitCheck {
  readonly id: string;
  /** Refuses by throwing an ImepError (one line naming the field and the fix); returns what it has to say. */
  run(input: PrecommitCheckInput): Promise<Partial<PrecommitCheckResult> | void> | Partial<PrecommitCheckResult> | void;
}

/** Plans above this many rows announce their estimate before they are built. */
export const PLAN_ROWS_ANNOUNCE = 20_000;

export function seedBands(protocol: Protocol): SeedBand[] {
  const ranges = seedRanges(protocol.seeds);
  return protocol.envs.flatMap((e) => ranges.map((r) => ({ task: e.task ?? e.id, start: r.start, end: r.end })));
}

/** Refuses seed bands that overlap a campaign in the registry (unless declared reuse). */
export function assertNoOverlapYet(
  protocol: Protocol,
  file: string,
  registry: Awaited<ReturnType<typeof readSeedRegistry>>,
): void {
  const reuse = (protocol.seeds.reuse ?? []).map((r) => r.campaign);
  const overlap = findSeedOverlaps(registry, protocol.id, seedBands(protocol), reuse)[0];
  if (overlap !== undefined) {
    throw new ImepError('E_SEED_OVERLAP', describeOverlap(overlap), {
      file,
      field: 'seeds',
      hint: `pick a disjoint band, or declare \`reuse: [{ campaign: ${overlap.otherCampaignId}, reason: … }]\` if the reuse is intended`,
    });
  }
}

/** The policy runtime's context for the checks (nothing is started: batch size 1). */
const runtimeContext = (input: PrecommitCheckInput): PolicyRuntimeContext => ({
  file: input.file,
  roots: input.roots,
  checkpointRoot: input.checkpointRoot,
  campaignsDir: input.campaignsDir,
  batchSize: 1,
});

export const PRECOMMIT_CHECKS: readonly PrecommitCheck[] = [
  {
    id: 'plan-size',
    run(input) {
      const estimate: PlanEstimate = assertPlanSize(input.protocol, {
        allowLarge: input.allowLargePlan,
        file: input.file,
      });
      return { notes: estimate.rows > PLAN_ROWS_ANNOUNCE ? [`plan: ${describeEstimate(estimate)}`] : [] };
    },
  },
  {
    id: 'frozen-power',
    run(input) {
      checkFrozenPower(input.protocol.mde);
    },
  },
  {
    id: 'seed-registry',
    async run(input) {
      const registry = await readSeedRegistry(join(input.campaignsDir, 'seed-registry.json'));
      assertNoOverlapYet(input.protocol, input.file, registry);
    },
  },
  {
    id: 'checkpoint',
    async run(input) {
      if (input.protocol.checkpoint === undefined) return;
      await verifyCheckpoint(input.protocol, input.checkpointRoot, input.file);
    },
  },
  {
    id: 'policy-runtime',
    async run(input) {
      if (input.ownPolicies) return;
      const kind = policyRuntimeKindOf(input.protocol, input.file);
      return { warnings: [...(await kind.preflight(input.protocol, runtimeContext(input)))] };
    },
  },
  {
    id: 'simulator',
    run(input) {
      if (input.ownEnvs) return;
      assertSimulatorSettings(input.protocol, { file: input.file, roots: input.roots });
    },
  },
  {
    id: 'sandbox-binds',
    async run(input) {
      await checkSandboxBinds(
        input.protocol,
        { file: input.file, roots: input.roots, campaignsDir: input.campaignsDir },
        { policy: !input.ownPolicies, simulator: !input.ownEnvs },
      );
    },
  },
  {
    id: 'conditions',
    async run(input) {
      const { protocol } = input;
      const runtime = input.ownPolicies
        ? null
        : await policyRuntimeKindOf(protocol, input.file).memoryAccess(protocol, runtimeContext(input));
      // the facts of environments whose specs the simulator kind knows without a server (the lite simulators')
      const kind = simulatorKindOf(protocol, input.file);
      const knownSpec = input.ownEnvs ? undefined : kind.knownSpec?.bind(kind, protocol.simulator);
      const tasks = [...taskEntries(protocol).values()];
      const byId = new Map(protocol.conditions.map((c) => [c.id, c]));
      const ran = new Set(protocol.waves.flatMap((w) => w.conditions));
      const facts = new Map(
        knownSpec === undefined
          ? []
          : tasks.flatMap((t) => {
              const spec = knownSpec(t.envId, t.kwargs);
              return spec === undefined ? [] : [[t.task, { ...t, facts: factsOf(spec) }] as const];
            }),
      );
      for (const id of ran) {
        const condition = byId.get(id);
        if (condition === undefined) continue; // cross-check refuses a wave naming an unknown condition
        const plan =
          runtime === null ? conditionPlan(condition) : checkRuntime(condition, runtime.installable, runtime.name);
        for (const task of facts.values()) checkFacts(plan, task);
      }
    },
  },
  {
    id: 'policy-io',
    async run(input) {
      if (input.ownPolicies || input.ownEnvs) return;
      const { protocol } = input;
      const runtime = policyRuntimeKindOf(protocol, input.file);
      const kind = simulatorKindOf(protocol, input.file);
      const knownSpec = kind.knownSpec?.bind(kind, protocol.simulator);
      if (knownSpec === undefined) return; // a bridged simulator's specs: checked when its servers start (assemble.ts)
      await runtime.checkEnvironments?.(protocol, runtimeContext(input), (t) => knownSpec(t.envId, t.kwargs));
    },
  },
  {
    id: 'conventions',
    async run(input) {
      if (input.ownEnvs) return;
      const { protocol, file } = input;
      const declarations = await fileDeclarations(protocol, file, input.ownPolicies ? null : runtimeContext(input));
      if (declarations.length === 0) return;
      const kind = simulatorKindOf(protocol, file);
      const knownSpec = kind.knownSpec?.bind(kind, protocol.simulator);
      if (knownSpec === undefined) return; // a bridged simulator's specs: checked when its servers start (assemble.ts)
      for (const t of taskEntries(protocol).values()) {
        const spec = knownSpec(t.envId, t.kwargs);
        if (spec !== undefined) assertDeclaredConventions(declarations, spec, t.envId, protocol, file);
      }
    },
  },
  {
    id: 'attainable',
    run(input) {
      return { warnings: attainableWarnings(input.protocol).map((w) => w.message) };
    },
  },
];

/**
 * Runs `checks` in order: the first refusal is thrown (as precommit would), else every warning and note is returned.
 */
export async function runPrecommitChecks(
  input: PrecommitCheckInput,
  checks: readonly PrecommitCheck[] = PRECOMMIT_CHECKS,
): Promise<PrecommitCheckResult> {
  const warnings: string[] = [];
  const notes: string[] = [];
  for (const check of checks) {
    const r = (await check.run(input)) ?? {};
    warnings.push(...(r.warnings ?? []));
    notes.push(...(r.notes ?? []));
  }
  return { warnings, notes };
}
