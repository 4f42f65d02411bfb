/**
 * What every campaign command shares: options, opening a campaign from its protocol file (or a unit from
 * its frozen protocol), the policy runtime checked against every condition, and the creation + precommit
 * of a new unit — everything that can refuse is checked before anything is written, and the unit is
 * built in a hidden temporary folder renamed into place.
 */
import { makeDirs, ImepError, terminalText } from '../core/index.js';
import {
  ioError,
  fsyncDir,
  detectCodeIdentity,
  detectPackageVersions,
  createUnitDir,
  currentOperator,
  loadFrozenProtocol,
  precommit,
  readPrecommit,
  readSeedRegistry,
  unitPaths,
  type Operator,
  ARRIVAL_ORDER_FILE,
  newArrivalKey,
  readArrivalKey,
  processAlive,
} from '../evidence/index.js';
import { precommitFolder, precommittedElsewhere, stalePrecommitFolders, targetTaken } from './precommit-folder.js';
import { existsSync } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildPlan,
  type Plan,
  type PlannedEpisode,
  checkpointFile,
  verifyCheckpoint,
  loadProtocol,
  ProtocolSchema,
  type Protocol,
} from '../protocol/index.js';
import type { Assembly } from './assemble.js';
import { inProcessLiteEnvs, type SimulatorContext, type SimulatorOptions, type Simulators } from './bridge-envs.js';
import type { HostedPolicyRecord, SimulatorEnvironment } from '../evidence/index.js';
import { hostedPolicyKey, type RemotePolicyProvider } from './remote-policy-provider.js';
import { policyServerKey } from './server-policy-record.js';
import { simulatorInputHashes } from './simulator-inputs.js';
import { ProgressDisplay, type ProgressStream } from './progress.js';
import type { RunStop } from './run-stop.js';
import type { EnvProvider, PolicyProvider, RunnerSubscriber, SpecSource } from './types.js';
import { exists, unitDirFor } from './unit-dir.js';
import { assertNoOverlapYet, runPrecommitChecks, seedBands, type PrecommitCheckInput } from './precommit-checks.js';

/** Default lockstep batch (episodes per inferBatch call). Rows do not depend on it. */
export const DEFAULT_BATCH = 32;

/** The package root (checkpoints and protocols ship with it). */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

export interface CampaignOptions {
  readonly campaignsDir: string;
  readonly batchSize?: number;
  /** The one root a protocol's relative paths resolve against (default: protocolRoots, in order). */
  readonly root?: string;
  /** Progress display target (null: none). */
  readonly progress?: ProgressStream | null;
  /** Lines for the user (stdout). */
  readonly say?: (line: string) => void;
  readonly operator?: Operator;
  /** The policy runtime of a protocol (default: its checkpoint through the external-memory runtime). */
  readonly policies?: (protocol: Protocol, checkpointDir: string) => Promise<PolicyProvider>;
  /** Told each policy runtime once it is made (`policies` or the default), e.g. to record its description. */
  readonly onPolicy?: (provider: PolicyProvider) => void;
  /** The environments (default: chosen by the protocol's `simulator`, see withSimulators). */
  readonly envs?: EnvProvider;
  /** Execution details of bridged simulators: servers started, deadlines (rows never depend on them). */
  readonly simulators?: SimulatorOptions;
  readonly now?: () => Date;
  /** The user confirmed a plan above PLAN_ROWS_CONFIRM rows (`--allow-large-plan`). */
  readonly allowLargePlan?: boolean;
  /** A clean stop of the formal run on request (the CLI's SIGINT/SIGTERM; run-stop.ts). */
  readonly stop?: RunStop;
}

export interface Campaign {
  readonly file: string;
  readonly protocol: Protocol;
  readonly hash: string;
  readonly plan: Plan;
  readonly dir: string;
}

export const say = (opts: CampaignOptions, line: string): void =>
  (opts.say ?? ((l: string) => process.stdout.write(`${terminalText(l)}\n`)))(line);

export function batchOf(opts: CampaignOptions): number {
  const b = opts.batchSize ?? DEFAULT_BATCH;
  if (!Number.isSafeInteger(b) || b < 1)
    throw new ImepError('E_USAGE', `batch size must be a positive integer, got ${b}`, { field: '--batch' });
  return b;
}

/**
 * Where a protocol's relative paths (checkpoint.path, policy.pythonPath, simulator.replayDir) resolve, in order
 * (docs/install.md, "Where a protocol's paths resolve"): `opts.root` alone when given; else the working folder, the
 * protocol file's folder, then the package root (the shipped checkpoints/ of an installed imep).
 */
export function protocolRoots(file: string | undefined, opts: Pick<CampaignOptions, 'root'>): string[] {
  if (opts.root !== undefined) return [opts.root];
  const roots = [process.cwd(), ...(file === undefined ? [] : [dirname(resolve(file))]), PACKAGE_ROOT];
  return [...new Set(roots)];
}

/** The root the protocol's checkpoint path resolves against: the first of protocolRoots holding its file. */
export function checkpointRoot(protocol: Protocol, opts: Pick<CampaignOptions, 'root'>, file?: string): string {
  if (opts.root !== undefined) return opts.root;
  if (protocol.checkpoint === undefined) return process.cwd();
  return protocolRoots(file, opts).find((root) => existsSync(checkpointFile(protocol, root))) ?? process.cwd();
}

/**
 * The line saying which checkpoint file a protocol uses when it is not the working folder's (the protocol's folder's,
 * or the one installed with imep); null when it resolved in the working folder (or under an explicit root).
 */
export function checkpointSource(protocol: Protocol, opts: Pick<CampaignOptions, 'root'>, file: string): string | null {
  const root = checkpointRoot(protocol, opts, file);
  if (opts.root !== undefined || protocol.checkpoint === undefined || root === process.cwd()) return null;
  const where =
    root === PACKAGE_ROOT
      ? 'the one shipped with imep (none in the working folder or next to the protocol)'
      : 'next to the protocol (none in the working folder)';
  const { path, file: name } = protocol.checkpoint;
  return `checkpoint ${path}/${name}: ${checkpointFile(protocol, root)}, ${where}`;
}

/** In-process lite simulators (what `simulator: { kind: lite }` runs on). */
export const defaultEnvs: EnvProvider = inProcessLiteEnvs;

/**
 * Runs `fn` with the campaign's environments: `opts.envs` when given, else those the frozen protocol's
 * `simulator` names (bridge-envs.ts) — servers started or attached and every environment checked before
 * `fn` runs, stopped after it; a bridged run says what it ran on and its restarts / failed calls.
 */
export function simulatorContext(c: Campaign, opts: CampaignOptions): SimulatorContext {
  return {
    file: c.file,
    roots: protocolRoots(c.file, opts),
    campaignsDir: dirname(resolve(c.dir)), // the folder the unit lives in (a resumed unit's, wherever it is)
  };
}

/** What a session records of the simulators it ran on: how their servers were isolated, what stack they reported. */
export interface SessionSimulators {
  readonly isolation: string | null;
  readonly limits: string | null;
  readonly environment: SimulatorEnvironment | undefined;
}

/**
 * Loads a campaign. For a new unit every check that writes nothing and starts nothing comes first, before the plan
 * is built (precommit-checks.ts, the list `imep protocol check` runs too): its size (refused above the limits with
 * its estimate; a large one needs `allowLargePlan`), the seed registry's overlap check, the checkpoint (file, hash,
 * manifest), a hosted policy's module and name, the simulator settings, the conditions against the runtime; its
 * warnings (a criterion that cannot hold at the registered n) are printed. An existing unit was checked when it
 * was precommitted.
 */
export async function openCampaign(file: string, opts: CampaignOptions): Promise<Campaign> {
  const loaded = await loadProtocol(file);
  const { dir, exists: known } = await unitDirFor(opts.campaignsDir, loaded.protocol.id, loaded.hash, file);
  if (!known) {
    const r = await runPrecommitChecks(precommitCheckInput(loaded.protocol, file, opts));
    const source = checkpointSource(loaded.protocol, opts, file);
    if (source !== null) say(opts, source);
    for (const line of r.notes) say(opts, line);
    for (const line of r.warnings) say(opts, `warning: ${line}`);
  }
  const plan = buildPlan(loaded.protocol);
  return { file, protocol: loaded.protocol, hash: loaded.hash, plan, dir };
}

/** What the precommit checks of `protocol` (from `file`) need from the campaign options. */
export function precommitCheckInput(protocol: Protocol, file: string, opts: CampaignOptions): PrecommitCheckInput {
  return {
    file,
    protocol,
    roots: protocolRoots(file, opts),
    checkpointRoot: checkpointRoot(protocol, opts, file),
    campaignsDir: opts.campaignsDir,
    allowLargePlan: opts.allowLargePlan === true,
    ownPolicies: opts.policies !== undefined,
    ownEnvs: opts.envs !== undefined,
  };
}

/** The unit's arrival-order key (arrival-order.ts), checked against its precommit; null when it committed none. */
export async function arrivalKeyOf(dir: string): Promise<string | null> {
  return readArrivalKey(join(dir, ARRIVAL_ORDER_FILE), (await readPrecommit(dir)).arrivalOrder);
}

/** Loads a unit's frozen protocol (re-hashed against the precommit) and its plan (plan hash checked). */
export async function openUnit(dir: string): Promise<Campaign> {
  const frozen = await loadFrozenProtocol(dir);
  const protocol = ProtocolSchema.parse(frozen.protocol);
  const plan = buildPlan(protocol);
  if (plan.planHash !== frozen.precommit.planHash) {
    throw new ImepError(
      'E_PROTOCOL_FROZEN',
      `the plan this code builds (${plan.planHash.slice(0, 12)}…) is not the precommitted plan (${frozen.precommit.planHash.slice(0, 12)}…)`,
      {
        file: unitPaths(dir).plan,
        hint: 'run the unit with the code that precommitted it (see unit.json spec.code)',
      },
    );
  }
  return { file: unitPaths(dir).protocol, protocol, hash: frozen.protocolHash, plan, dir };
}

/**
 * Creates and precommits the unit of a campaign whose folder does not exist yet, from its assembly (assemble.ts:
 * simulators and policy opened and checked, so everything that can refuse was checked first); the unit is built in
 * a temporary folder and renamed into place, so a refusal or a crash never leaves a half-made unit under the real
 * name.
 */
export async function createAndPrecommit(c: Campaign, a: Assembly, opts: CampaignOptions): Promise<void> {
  const root = checkpointRoot(c.protocol, opts, c.file);
  const digest = c.protocol.checkpoint === undefined ? null : await verifyCheckpoint(c.protocol, root, c.file);
  const hosted = a.policy.record;
  const server = a.policy.serverRecord;
  const checkpoint = c.protocol.checkpoint;
  {
    const registryFile = join(opts.campaignsDir, 'seed-registry.json');
    const bands = seedBands(c.protocol);
    const reuse = (c.protocol.seeds.reuse ?? []).map((r) => r.campaign);
    // again just before writing: another campaign may have registered its seeds since openCampaign looked
    assertNoOverlapYet(c.protocol, c.file, await readSeedRegistry(registryFile));
    await makeDirs(opts.campaignsDir).catch((e: unknown) => {
      throw ioError(opts.campaignsDir, 'create the campaigns folder (--campaigns-dir)', e);
    });
    const folder = basename(c.dir);
    // a precommit killed mid-way leaves only a hidden temporary folder: remove it (never one whose process still runs)
    for (const name of stalePrecommitFolders(await readdir(opts.campaignsDir), folder, processAlive)) {
      await rm(join(opts.campaignsDir, name), { recursive: true, force: true });
    }
    const tmp = precommitFolder(opts.campaignsDir, folder);
    const operator = opts.operator ?? currentOperator();
    try {
      await createUnitDir(tmp, { id: c.protocol.id, operator, ...(opts.now ? { now: opts.now } : {}) });
      await precommit(tmp, {
        protocol: c.protocol,
        plan: c.plan,
        planHash: c.plan.planHash,
        plannedRows: c.plan.episodes.length,
        code: await detectCodeIdentity(PACKAGE_ROOT),
        checkpointHashes:
          checkpoint !== undefined && digest !== null
            ? { [`${checkpoint.path}/${checkpoint.file}`]: digest }
            : hosted !== undefined
              ? { [hostedPolicyKey(hosted.name)]: hosted.digest }
              : server !== undefined
                ? { [policyServerKey(server.endpoint)]: server.digest }
                : {},
        ...(hosted === undefined ? {} : { hostedPolicy: hosted, arrivalKey: newArrivalKey() }),
        ...(server === undefined ? {} : { policyServer: server }),
        simulatorHashes: await simulatorInputHashes(c.protocol, simulatorContext(c, opts)),
        seeds: bands,
        reuse,
        packageVersions: await detectPackageVersions(PACKAGE_ROOT, [
          'commander',
          'msgpackr',
          'onnxruntime-node',
          'yaml',
          'zod',
        ]),
        seedRegistry: registryFile,
        operator,
        ...(opts.now ? { now: opts.now } : {}),
      });
      await rename(tmp, c.dir).catch((e: unknown) => {
        throw targetTaken(e) ? precommittedElsewhere(c.dir, e) : e;
      });
      await fsyncDir(opts.campaignsDir);
    } catch (e) {
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      throw e;
    }
  }
}

export function progressFor(
  opts: CampaignOptions,
  episodes: readonly PlannedEpisode[],
  label: string,
  durable?: () => number,
  plainAfterSec = 0,
): RunnerSubscriber[] {
  return opts.progress ? [new ProgressDisplay(opts.progress, episodes, label, durable, plainAfterSec)] : [];
}
