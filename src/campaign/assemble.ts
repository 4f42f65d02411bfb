/**
 * The one assembly step: a campaign's frozen protocol → { plan, simulators, policy }, every part opened and checked
 * once, before anything is written — the runner that follows only runs.
 *
 *   campaign     the frozen protocol, its hash and plan (openCampaign / openUnit, campaign-setup.ts)
 *   simulators   through the protocol's simulator kind (bridge-envs.ts openSimulators): servers started or attached,
 *                every environment made once and checked against the allowlists and seeds; a precommitted unit's
 *                simulator inputs (replay files) checked against the precommit first
 *   policy       through the protocol's registered policy runtime (policy-runtime-kind.ts), or the caller's own
 *                (CampaignOptions.policies); a hosted policy's identity checked against the precommit's; the
 *                runtime's declared I/O checked against every environment's known spec (checkEnvironments: a
 *                checkpoint's observation inputs and action output, src/policies/env-contract.ts)
 *   conditions   every registered condition on every task checked against what the policy runtime and the
 *                environments' declared facts offer (run-plan.ts preflightPlan)
 *   conventions  a few policy calls on a seed outside every band, what it returns and is given checked against each
 *                environment's declared conventions (convention-preflight.ts); nothing recorded; not for a caller's
 *                own policies or environments (CampaignOptions.policies / envs)
 *
 * Nothing here switches on a kind's name: the kinds decide. `close()` closes the simulators (their summary line)
 * and releases the policy, once.
 */
import { resolve } from 'node:path';
import { readPrecommit, unitPaths } from '../evidence/index.js';
import type { PolicyProvider, SpecSource } from './types.js';
import { openSimulators, simulatorKindOf, type Simulators } from './bridge-envs.js';
import { inProcessSimulators } from '../runtime/index.js';
import {
  batchOf,
  checkpointRoot,
  createAndPrecommit,
  say,
  simulatorContext,
  type Campaign,
  type CampaignOptions,
} from './campaign-setup.js';
import { policyRuntimeKindOf, type PolicyRuntimeContext } from './policy-runtime-kind.js';
import { assertHostedPolicyUnchanged } from './remote-policy-provider.js';
import { assertPolicyServerUnchanged } from './server-policy-record.js';
import { preflightPlan } from './run-plan.js';
import { allDeclarations } from './convention-check.js';
import { runConventionPreflight } from './convention-preflight.js';
import { assertSimulatorInputsUnchanged } from './simulator-inputs.js';
import { exists } from './unit-dir.js';

export interface Assembly {
  readonly campaign: Campaign;
  readonly simulators: Simulators;
  readonly policy: PolicyProvider;
  /**
   * Closes the simulators and releases the policy; later calls do nothing. After a run it says the simulators'
   * summary (restarts, failed calls); `quiet` (a precommit alone, a refusal) says nothing.
   */
  close(opts?: { readonly quiet?: boolean }): Promise<void>;
}

/** The policy runtime's context for campaign `c`. */
export function policyRuntimeContext(c: Campaign, opts: CampaignOptions): PolicyRuntimeContext {
  const sim = simulatorContext(c, opts);
  return {
    file: c.file,
    roots: sim.roots,
    checkpointRoot: checkpointRoot(c.protocol, opts, c.file),
    ...(sim.campaignsDir === undefined ? {} : { campaignsDir: sim.campaignsDir }),
    batchSize: batchOf(opts),
  };
}

/** The campaign's simulators, opened through its simulator kind (or the caller's own environments). */
async function assembleSimulators(c: Campaign, opts: CampaignOptions, precommitted: boolean): Promise<Simulators> {
  // a caller's own environments (CampaignOptions.envs): nothing to start, nothing to say, specs declared when made
  if (opts.envs !== undefined) return inProcessSimulators(opts.envs);
  const ctx = simulatorContext(c, opts);
  if (precommitted) await assertSimulatorInputsUnchanged(c.protocol, ctx, (await readPrecommit(c.dir)).simulatorHashes);
  const slots = Math.max(1, Math.min(batchOf(opts), c.plan.episodes.length));
  return openSimulators(c.protocol, ctx, { ...opts.simulators, slots });
}

/** The campaign's policy, opened through its registered runtime (or the caller's own), its frozen identity checked. */
async function assemblePolicy(c: Campaign, opts: CampaignOptions, precommitted: boolean): Promise<PolicyProvider> {
  const ctx = policyRuntimeContext(c, opts);
  const provider =
    opts.policies !== undefined
      ? await opts.policies(
          c.protocol,
          c.protocol.checkpoint === undefined
            ? ctx.checkpointRoot
            : resolve(ctx.checkpointRoot, c.protocol.checkpoint.path),
        )
      : await policyRuntimeKindOf(c.protocol, c.file).open(c.protocol, ctx);
  try {
    opts.onPolicy?.(provider);
    if (provider.record !== undefined) {
      if (precommitted) assertHostedPolicyUnchanged(provider.record, (await readPrecommit(c.dir)).hostedPolicy, c.file);
      say(opts, `policy: ${provider.description}`);
    }
    if (provider.serverRecord !== undefined) {
      if (precommitted)
        assertPolicyServerUnchanged(provider.serverRecord, (await readPrecommit(c.dir)).policyServer, c.file);
      say(opts, `policy: ${provider.description}; metadata sha256 ${provider.serverRecord.digest}`);
    }
  } catch (e) {
    await provider.release();
    throw e;
  }
  return provider;
}

/**
 * The specs known before the run: those the simulator kind knows without a server (SimulatorKind.knownSpec: the lite
 * simulators', in process or over the bridge), else those its opened servers declared when each environment was
 * checked; none for a caller's own environments (they declare theirs when made, and the runner checks them before
 * any row, run-plan.ts).
 */
function knownSpecs(c: Campaign, opts: CampaignOptions, simulators: Simulators): SpecSource {
  if (opts.envs !== undefined) return () => undefined;
  const kind = simulatorKindOf(c.protocol, c.file);
  const known = kind.knownSpec?.bind(kind, c.protocol.simulator);
  if (known === undefined) return simulators.specOf;
  const specs = new Map<string, ReturnType<SpecSource>>();
  return (task) => {
    let spec = specs.get(task.task);
    if (spec === undefined) specs.set(task.task, (spec = known(task.envId, task.kwargs)));
    return spec;
  };
}

/**
 * Waits for a cleanup after a refusal, whatever it does: the refusal is what the user must read, and a release or a
 * close that fails after it must neither hide it nor stop the next cleanup (the simulators still close).
 */
async function settle(cleanup: Promise<void>): Promise<void> {
  await cleanup.catch(() => undefined);
}

/**
 * Assembles campaign `c`: its simulators, then its policy, then every condition checked on every task against both.
 * Throws (after closing whatever it opened) on the first refusal; writes nothing.
 */
export async function assemble(c: Campaign, opts: CampaignOptions): Promise<Assembly> {
  const precommitted = await exists(unitPaths(c.dir).precommit);
  const simulators = await assembleSimulators(c, opts, precommitted);
  let policy: PolicyProvider;
  try {
    policy = await assemblePolicy(c, opts, precommitted);
  } catch (e) {
    await settle(simulators.close());
    throw e;
  }
  const specs = knownSpecs(c, opts, simulators);
  try {
    // the registered runtime's I/O against every environment's spec known now (a caller's own policies: theirs to check)
    if (opts.policies === undefined)
      await policyRuntimeKindOf(c.protocol, c.file).checkEnvironments?.(
        c.protocol,
        policyRuntimeContext(c, opts),
        specs,
      );
    await preflightPlan(c.protocol, c.plan.episodes, policy, batchOf(opts), specs);
    // a few steps of the policy on a seed outside every band, against each environment's declared conventions (a
    // caller's own policies or environments: theirs to check, as precommit-checks.ts leaves them)
    if (opts.policies === undefined && opts.envs === undefined) {
      const sim = simulatorContext(c, opts);
      const reports = await runConventionPreflight({
        protocol: c.protocol,
        file: c.file,
        declarations: await allDeclarations(c.protocol, c.file, policyRuntimeContext(c, opts), policy),
        policy,
        envs: simulators.envs,
        specs,
        batchSize: batchOf(opts),
        ...(sim.campaignsDir === undefined ? {} : { campaignsDir: sim.campaignsDir }),
      });
      for (const r of reports)
        if (r.stopped !== undefined)
          say(
            opts,
            `convention preflight: ${r.task} stopped after ${r.calls} call${r.calls === 1 ? '' : 's'} (${r.stopped}); its declarations were checked, the run records such failures under the failure budget`,
          );
    }
  } catch (e) {
    await settle(policy.release());
    await settle(simulators.close());
    throw e;
  }
  let closed: Promise<void> | null = null;
  return {
    campaign: c,
    simulators,
    policy,
    close: (how = {}) =>
      (closed ??= (async () => {
        try {
          const summary = simulators.summary();
          await simulators.close();
          if (summary !== null && how.quiet !== true) say(opts, `simulator: ${summary}`);
        } finally {
          await policy.release();
        }
      })()),
  };
}

/**
 * A new unit: assembled — simulators and policy opened, every condition checked — then precommitted, so nothing is
 * written before everything that can refuse was asked; the run that follows uses (and closes) the assembly.
 */
export async function assembleAndPrecommit(c: Campaign, opts: CampaignOptions): Promise<Assembly> {
  const a = await assemble(c, opts);
  try {
    await createAndPrecommit(c, a, opts);
  } catch (e) {
    await a.close({ quiet: true });
    throw e;
  }
  say(opts, `precommitted ${c.dir} (protocol ${c.hash.slice(0, 12)}…, ${c.plan.episodes.length} planned rows)`);
  return a;
}

/** Says which simulators a run is on (nothing for in-process ones), as each run starts. */
export function announceSimulators(a: Assembly, opts: CampaignOptions): void {
  const sims = a.simulators;
  if (sims.description !== null)
    say(
      opts,
      `simulator: ${sims.description}${sims.isolation === null ? '' : `; ${sims.isolation}`}${sims.limits === null ? '' : `; ${sims.limits}`}`,
    );
}

/** Runs `fn` with campaign `c` assembled (no run: a precommit), closing the assembly quietly after it, whatever happens. */
export async function withAssembly<T>(c: Campaign, opts: CampaignOptions, fn: (a: Assembly) => Promise<T>): Promise<T> {
  const a = await assemble(c, opts);
  try {
    return await fn(a);
  } finally {
    await a.close({ quiet: true });
  }
}
