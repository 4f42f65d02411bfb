/**
 * A replay as its own sealed evidence unit (`imep chainbench replay MANIFEST --decisions UNIT --out DIR`;
 * layout in unit-io.ts). The decisions unit is verified first; the replay unit's frozen protocol (kind
 * `imep.chainbench-replay`) names it by id, seal Merkle root, seal SHA-256 and protocol hash, and holds
 * the manifest (hash-bound to the decisions unit's), the conditions replayed, whether the replay floor R
 * runs, the executor's identity (lite, or the bridge endpoint and the server's hello), and the summary's
 * chain-bootstrap settings. plan.json lists every planned execution key per chain, fixed from the
 * decisions before anything runs.
 *
 * One row per chain, in manifest order: its executions in execution order (key, choice, slot, executor
 * seed, executed, success) and, per condition (R included), the outcome — choice, correct and the key of
 * the execution it shares. Task success lives only in the execution, so conditions that reached the same
 * decision cannot differ in success: constructive pairing is in the row format, and `readReplayUnit`
 * checks from the rows that every chain's executions are exactly its planned keys, each referenced, each
 * once (executions = distinct (chain, decision) pairs + one R per chain). Decision accuracy and task
 * success are separate fields of every outcome and separate columns of the summary.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ImepError, sha256Hex } from '../core/index.js';
import { unitPaths, type Operator } from '../evidence/index.js';
import type { ChainExecutor, ExecutorIdentity } from './executor.js';
import { freezeManifest, parseManifestData } from './manifest-io.js';
import type { ChainManifest } from './manifest-schema.js';
import {
  planReplay,
  REPLAY_FLOOR_CONDITION,
  replayDecisions,
  type ExecutionRecord,
  type ReplayConditionInput,
  type ReplayResult,
  type ReplayRow,
} from './replay.js';
import { buildSealedUnit, openSealedUnit, parseRow, type BuiltUnit, type SealedUnitRead } from './unit-io.js';
import type { DecisionUnitRead } from './decision-unit.js';

export const REPLAY_UNIT_KIND = 'imep.chainbench-replay';

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const Name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);

export const ReplayProtocolSchema = z.strictObject({
  kind: z.literal(REPLAY_UNIT_KIND),
  version: z.literal(1),
  decisions: z.strictObject({ unitId: z.string(), sealRoot: Hex64, sealSha256: Hex64, protocolHash: Hex64 }),
  manifestHash: Hex64,
  manifest: z.unknown(),
  conditions: z.array(Name).min(1),
  replayFloor: z.boolean(),
  executor: z.looseObject({ kind: z.enum(['lite', 'bridge']) }),
  summary: z.strictObject({ bootstrapSeed: z.number().int().min(0), replicates: z.number().int().min(1) }),
});
export type ReplayProtocol = z.infer<typeof ReplayProtocolSchema>;

const PlanSchema = z.strictObject({
  kind: z.literal('imep.chainbench-replay-plan'),
  version: z.literal(1),
  chains: z.array(z.strictObject({ chainId: z.string(), executions: z.array(z.string()) })),
});

const ExecutionSchema = z.strictObject({
  key: z.string(),
  choice: z.number().int().min(0),
  slot: z.enum(['primary', 'replay']),
  executorSeed: z.number().int().min(0),
  executed: z.boolean(),
  success: z.boolean(),
});
const OutcomeSchema = z.strictObject({
  choice: z.number().int().min(0),
  correct: z.boolean(),
  executionKey: z.string(),
});

export const ReplayRowSchema = z.strictObject({
  seq: z.number().int().min(0),
  status: z.literal('ok'),
  chainId: z.string().min(1),
  K: z.number().int().min(2),
  finalDrawer: z.number().int().min(0),
  executions: z.array(ExecutionSchema),
  outcomes: z.record(Name, OutcomeSchema),
});
export type ReplayUnitRow = z.infer<typeof ReplayRowSchema>;

export interface WriteReplayUnitInput {
  readonly dir: string;
  readonly decisions: DecisionUnitRead;
  readonly executor: ChainExecutor;
  readonly executorIdentity: ExecutorIdentity;
  readonly replayFloor?: boolean;
  readonly bootstrapSeed?: number;
  readonly replicates?: number;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

export interface WrittenReplayUnit {
  readonly unit: BuiltUnit;
  /** What the executor did in this process (the unit's rows rebuild exactly this). */
  readonly replay: ReplayResult;
}

/** Replays a verified decisions unit through an executor and writes the replay as a sealed unit. */
export async function writeReplayUnit(input: WriteReplayUnitInput): Promise<WrittenReplayUnit> {
  const d = input.decisions;
  const conditions: ReplayConditionInput[] = d.table.conditions;
  const replayFloor = input.replayFloor ?? true;
  const plan = planReplay(d.manifest, conditions, replayFloor); // refuses bad decisions before the unit exists
  const protocol: ReplayProtocol = {
    kind: REPLAY_UNIT_KIND,
    version: 1,
    decisions: {
      unitId: d.unit.unitId,
      sealRoot: d.unit.seal.merkle.root,
      sealSha256: sha256Hex(await readFile(unitPaths(d.unit.dir).seal)),
      protocolHash: d.unit.protocolHash,
    },
    manifestHash: d.manifestHash,
    manifest: d.manifest,
    conditions: conditions.map((c) => c.name),
    replayFloor,
    executor: input.executorIdentity,
    summary: { bootstrapSeed: input.bootstrapSeed ?? 0, replicates: input.replicates ?? 10_000 },
  };
  const planRecord: z.infer<typeof PlanSchema> = {
    kind: 'imep.chainbench-replay-plan',
    version: 1,
    chains: plan.chains.map((c) => ({ chainId: c.chainId, executions: c.executions.map((e) => e.key) })),
  };
  let replay: ReplayResult | undefined;
  const unit = await buildSealedUnit({
    dir: input.dir,
    protocol,
    plan: planRecord,
    plannedRows: d.manifest.chains.length,
    ...(input.operator ? { operator: input.operator } : {}),
    ...(input.now ? { now: input.now } : {}),
    produce: async (append) => {
      replay = await replayDecisions({
        manifest: d.manifest,
        conditions,
        executor: input.executor,
        replayFloor,
        onChain: async ({ chain, executions, rows }) => {
          await append({
            status: 'ok',
            chainId: chain.id,
            K: chain.K,
            finalDrawer: chain.finalFact.drawer,
            executions: executions.map((e) => ({
              key: e.key,
              choice: e.choice,
              slot: e.slot,
              executorSeed: e.executorSeed,
              executed: e.executed,
              success: e.success,
            })),
            outcomes: Object.fromEntries(
              rows.map((r) => [r.condition, { choice: r.choice, correct: r.correct, executionKey: r.executionKey }]),
            ),
          });
        },
      });
    },
  });
  return { unit, replay: replay! };
}

/** Counts proved from a replay unit's rows alone. */
export interface PairingProof {
  readonly chains: number;
  /** Execution entries in the rows (each is one executor call). */
  readonly executions: number;
  /** Distinct (chain, choice) among the non-R outcomes. */
  readonly distinctDecisionPairs: number;
  /** R executions (one per chain when the floor ran). */
  readonly floorExecutions: number;
  readonly outcomes: number;
}

export interface ReplayUnitRead {
  readonly unit: SealedUnitRead;
  readonly protocol: ReplayProtocol;
  readonly manifest: ChainManifest;
  readonly rows: readonly ReplayUnitRow[];
  /** The replay rebuilt from the rows (conditions in order, R last; rows condition-major). */
  readonly replay: ReplayResult;
  readonly proof: PairingProof;
}

function tampered(file: string, field: string, message: string): ImepError {
  return new ImepError('E_UNIT_TAMPERED', message, { file, field });
}

/** Verifies a sealed replay unit, checks constructive pairing from its rows, and rebuilds the replay. */
export async function readReplayUnit(dir: string, what = 'unit'): Promise<ReplayUnitRead> {
  const unit = await openSealedUnit(dir, REPLAY_UNIT_KIND, what);
  const paths = unitPaths(unit.dir);
  const protocol = parseRow(ReplayProtocolSchema, unit.protocol, paths.protocol, -1);
  const { manifest, hash } = freezeManifest(parseManifestData(protocol.manifest, paths.protocol));
  if (hash !== protocol.manifestHash)
    throw tampered(
      paths.protocol,
      'manifestHash',
      `the frozen manifest hashes to ${hash.slice(0, 12)}…, not the recorded one`,
    );
  const plan = parseRow(PlanSchema, JSON.parse(await readFile(paths.plan, 'utf8')) as unknown, paths.plan, -1);
  if (unit.rows.length !== manifest.chains.length || plan.chains.length !== manifest.chains.length) {
    throw tampered(
      paths.rows,
      '(rows)',
      `${unit.rows.length} rows and ${plan.chains.length} planned chains for ${manifest.chains.length} chains`,
    );
  }
  const conditions = protocol.replayFloor ? [...protocol.conditions, REPLAY_FLOOR_CONDITION] : [...protocol.conditions];
  const executions: ExecutionRecord[] = [];
  const byCondition = new Map<string, ReplayRow[]>(conditions.map((c) => [c, []]));
  const pairs = new Set<string>();
  let floorExecutions = 0;
  let outcomes = 0;
  const rows = unit.rows.map((raw, i) => {
    const row = parseRow(ReplayRowSchema, raw, paths.rows, i);
    const chain = manifest.chains[i]!;
    if (row.chainId !== chain.id || row.K !== chain.K || row.finalDrawer !== chain.finalFact.drawer) {
      throw tampered(
        paths.rows,
        `${i}.chainId`,
        `row ${i} (${row.chainId}) does not describe chain ${chain.id} of the frozen manifest`,
      );
    }
    const planned = plan.chains[i]!;
    const keys = row.executions.map((e) => e.key);
    if (planned.chainId !== chain.id || keys.join('\n') !== planned.executions.join('\n')) {
      throw tampered(
        paths.rows,
        `${i}.executions`,
        `chain ${chain.id}: executions [${keys.join(', ')}] are not the planned [${planned.executions.join(', ')}]`,
      );
    }
    const own = new Map(row.executions.map((e) => [e.key, e]));
    if (own.size !== keys.length)
      throw tampered(paths.rows, `${i}.executions`, `chain ${chain.id}: an execution is recorded twice`);
    const referenced = new Set<string>();
    for (const e of row.executions) {
      const seed = e.slot === 'primary' ? chain.executorSeeds.primary : chain.executorSeeds.replay;
      if (e.executorSeed !== seed || (e.success && !e.executed))
        throw tampered(paths.rows, `${i}.executions`, `chain ${chain.id}: execution ${e.key} is inconsistent`);
      executions.push({
        key: e.key,
        chainId: chain.id,
        choice: e.choice,
        slot: e.slot,
        executorSeed: e.executorSeed,
        executed: e.executed,
        success: e.success,
      });
      if (e.slot === 'replay') floorExecutions++;
    }
    for (const [name, o] of Object.entries(row.outcomes)) {
      const list = byCondition.get(name);
      const ex = own.get(o.executionKey);
      const slot = name === REPLAY_FLOOR_CONDITION && protocol.replayFloor ? 'replay' : 'primary';
      if (list === undefined)
        throw tampered(paths.rows, `${i}.outcomes.${name}`, `condition ${name} is not in the frozen protocol`);
      if (
        ex === undefined ||
        ex.choice !== o.choice ||
        ex.slot !== slot ||
        o.correct !== (o.choice === chain.finalFact.drawer)
      ) {
        throw tampered(
          paths.rows,
          `${i}.outcomes.${name}`,
          `chain ${chain.id}: ${name} does not look up its own execution of choice ${o.choice}`,
        );
      }
      referenced.add(ex.key);
      if (slot === 'primary') pairs.add(`${chain.id}#${o.choice}`);
      list.push({
        chainId: chain.id,
        condition: name,
        choice: o.choice,
        correct: o.correct,
        executionKey: ex.key,
        executed: ex.executed,
        success: ex.success,
      });
      outcomes++;
    }
    if (referenced.size !== own.size)
      throw tampered(
        paths.rows,
        `${i}.executions`,
        `chain ${chain.id}: ${own.size - referenced.size} execution(s) no condition looks up (an extra execution)`,
      );
    return row;
  });
  const replayRows = conditions.flatMap((c) => byCondition.get(c)!);
  const distinctKeys = new Set(executions.map((e) => e.key)).size;
  const replay: ReplayResult = {
    conditions,
    rows: replayRows,
    executions,
    verification: {
      rows: replayRows.length,
      distinctDecisionPairs: pairs.size,
      distinctExecutionKeys: distinctKeys,
      executions: executions.length,
      extraExecutions: executions.length - distinctKeys,
    },
  };
  const proof: PairingProof = {
    chains: rows.length,
    executions: executions.length,
    distinctDecisionPairs: pairs.size,
    floorExecutions,
    outcomes,
  };
  return { unit, protocol, manifest, rows, replay, proof };
}
