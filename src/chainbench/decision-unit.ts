/**
 * Decisions as a sealed evidence unit (`imep chainbench decide MANIFEST --out DIR`; layout in unit-io.ts).
 *
 * Frozen at precommit (protocol.json, kind `imep.chainbench-decisions`): the whole chain manifest and
 * its SHA-256, the decision conditions (name, label, cohort), the decision seed, PRNG, fallback mode,
 * the ladder's seed, and the chain-bootstrap settings of the summary. One row per chain, in manifest
 * order: the chain's K, final drawer and rewrite flag; every condition's decision on it (choice, path,
 * the record read, correct); and its C/U/S/T ladder entry (null when the chain's archived decision did
 * not go through the readout; a rung null when no donor was eligible).
 *
 * `readDecisionUnit` verifies the unit, re-reads the frozen manifest (its hash must be the frozen one)
 * and rebuilds the decision table from the rows alone — equal to what `decideAll` produced, which the
 * tests check — so every number the summary shows comes from sealed rows by code.
 */
import { z } from 'zod';
import { ImepError, PRNG_NAME, PRNG_VERSION } from '../core/index.js';
import { unitPaths, type Operator } from '../evidence/index.js';
import { decideAll, DECISIONS_FORMAT, DECISIONS_VERSION, type DecisionTable } from './decisions.js';
import { decisionConditions } from './conditions.js';
import { LADDER_CONDITIONS, type LadderCondition, type LadderRow } from './ladder.js';
import { freezeManifest, parseManifestData } from './manifest-io.js';
import type { ChainManifest } from './manifest-schema.js';
import type { FallbackMode } from './readout.js';
import { buildSealedUnit, openSealedUnit, parseRow, type BuiltUnit, type SealedUnitRead } from './unit-io.js';
import { chainEvents, type ChainRecordSet } from './records.js';

export const DECISIONS_UNIT_KIND = 'imep.chainbench-decisions';

const Name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);
const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const DecisionsProtocolSchema = z.strictObject({
  kind: z.literal(DECISIONS_UNIT_KIND),
  version: z.literal(1),
  manifestHash: Hex64,
  manifest: z.unknown(),
  seed: z.number().int().min(0).max(0xffffffff),
  prng: z.strictObject({ name: z.string(), version: z.number().int() }),
  fallback: z.enum(['uniform', 'fixed']),
  conditions: z.array(z.strictObject({ name: Name, label: z.string(), cohort: z.enum(['all', 'rewritten']) })).min(1),
  ladder: z.strictObject({ seed: z.string(), conditions: z.array(z.enum(LADDER_CONDITIONS)) }),
  summary: z.strictObject({ bootstrapSeed: z.number().int().min(0), replicates: z.number().int().min(1) }),
});
export type DecisionsProtocol = z.infer<typeof DecisionsProtocolSchema>;

const CellSchema = z.strictObject({
  choice: z.number().int().min(0),
  path: z.enum(['readout', 'fallback', 'initial-fact', 'oracle']),
  recordId: z.string().nullable(),
  correct: z.boolean(),
});
const RungSchema = z.strictObject({
  choice: z.number().int().min(0),
  donorChainId: z.string().nullable(),
  changed: z.boolean(),
  correct: z.boolean(),
});
const LadderEntrySchema = z.strictObject({
  recordId: z.string(),
  centroidDigest: z.string(),
  archivedChoice: z.number().int().min(0),
  ulpElements: z.number().int().min(0),
  C: RungSchema,
  U: RungSchema,
  S: RungSchema.nullable(),
  T: RungSchema.nullable(),
});

export const DecisionRowSchema = z.strictObject({
  seq: z.number().int().min(0),
  status: z.literal('ok'),
  chainId: z.string().min(1),
  K: z.number().int().min(2),
  finalDrawer: z.number().int().min(0),
  rewrite: z.boolean(),
  decisions: z.record(Name, CellSchema),
  ladder: LadderEntrySchema.nullable(),
});
export type DecisionRow = z.infer<typeof DecisionRowSchema>;

export interface WriteDecisionUnitInput {
  readonly dir: string;
  readonly manifest: ChainManifest;
  readonly manifestHash: string;
  readonly records: ChainRecordSet;
  readonly seed: number;
  readonly fallback?: FallbackMode;
  /** Chain-bootstrap replicates of the summary (frozen with the decisions). */
  readonly replicates?: number;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

export interface WrittenDecisionUnit {
  readonly unit: BuiltUnit;
  /** The table decideAll produced (the unit's rows rebuild exactly this). */
  readonly table: DecisionTable;
}

function rung(r: LadderRow | undefined): z.infer<typeof RungSchema> | null {
  return r === undefined
    ? null
    : { choice: r.choice, donorChainId: r.donorChainId, changed: r.changed, correct: r.correct };
}

/** Decides every chain under every condition, runs the ladder, and writes it all as a sealed unit. */
export async function writeDecisionUnit(input: WriteDecisionUnitInput): Promise<WrittenDecisionUnit> {
  const { manifest, records, seed } = input;
  const fallback = input.fallback ?? 'uniform';
  const specs = decisionConditions({ fallback });
  const { table, ladder } = decideAll(manifest, records, input.manifestHash, { seed, fallback });
  if (ladder === undefined) throw new ImepError('E_INTERNAL', 'decideAll ran no ladder');
  const protocol: DecisionsProtocol = {
    kind: DECISIONS_UNIT_KIND,
    version: 1,
    manifestHash: input.manifestHash,
    manifest,
    seed,
    prng: { name: PRNG_NAME, version: PRNG_VERSION },
    fallback,
    conditions: specs.map((s) => ({ name: s.name, label: s.label, cohort: s.cohort })),
    ladder: { seed: ladder.seed, conditions: [...LADDER_CONDITIONS] },
    summary: { bootstrapSeed: seed, replicates: input.replicates ?? 10_000 },
  };
  const plan = {
    kind: 'imep.chainbench-decisions-plan',
    version: 1,
    chains: manifest.chains.map((c) => ({
      chainId: c.id,
      conditions: specs.filter((s) => s.cohort === 'all' || c.rewrite).map((s) => s.name),
    })),
  };
  const cells = new Map(table.conditions.map((c) => [c.name, new Map(c.decisions.map((d) => [d.chainId, d]))]));
  const ladderRows = Object.fromEntries(
    LADDER_CONDITIONS.map((c) => [c, new Map(ladder.rows[c].map((r) => [r.chainId, r]))]),
  ) as Record<LadderCondition, Map<string, LadderRow>>;
  const unit = await buildSealedUnit({
    dir: input.dir,
    protocol,
    plan,
    plannedRows: manifest.chains.length,
    ...(input.operator ? { operator: input.operator } : {}),
    ...(input.now ? { now: input.now } : {}),
    produce: async (append) => {
      for (const chain of manifest.chains) {
        const decisions: Record<string, z.infer<typeof CellSchema>> = {};
        for (const s of specs) {
          const d = cells.get(s.name)?.get(chain.id);
          if (d !== undefined)
            decisions[s.name] = {
              choice: d.choice,
              path: d.path,
              recordId: d.recordId ?? null,
              correct: d.choice === chain.finalFact.drawer,
            };
        }
        const C = ladderRows.C.get(chain.id);
        const U = ladderRows.U.get(chain.id);
        let entry: z.infer<typeof LadderEntrySchema> | null = null;
        if (C !== undefined && U !== undefined) {
          const feature = chainEvents(records, chain.id).find((e) => e.record.id === C.recordId)?.feature;
          if (feature === undefined)
            throw new ImepError('E_INTERNAL', `ladder: chain ${chain.id}: record ${C.recordId} not found`);
          entry = {
            recordId: C.recordId,
            centroidDigest: C.centroidDigest,
            archivedChoice: C.archivedChoice,
            ulpElements: feature.length,
            C: rung(C)!,
            U: rung(U)!,
            S: rung(ladderRows.S.get(chain.id)),
            T: rung(ladderRows.T.get(chain.id)),
          };
        }
        await append({
          status: 'ok',
          chainId: chain.id,
          K: chain.K,
          finalDrawer: chain.finalFact.drawer,
          rewrite: chain.rewrite,
          decisions,
          ladder: entry,
        });
      }
    },
  });
  return { unit, table };
}

export interface DecisionUnitRead {
  readonly unit: SealedUnitRead;
  readonly protocol: DecisionsProtocol;
  readonly manifest: ChainManifest;
  readonly manifestHash: string;
  readonly rows: readonly DecisionRow[];
  /** The decision table rebuilt from the rows. */
  readonly table: DecisionTable;
}

/** Verifies a sealed decisions unit and rebuilds its manifest and decision table from what is sealed. */
export async function readDecisionUnit(dir: string, what = '--decisions'): Promise<DecisionUnitRead> {
  const unit = await openSealedUnit(dir, DECISIONS_UNIT_KIND, what);
  const protoFile = `${unit.dir}/protocol.json`;
  const protocol = parseRow(DecisionsProtocolSchema, unit.protocol, protoFile, -1);
  const { manifest, hash } = freezeManifest(parseManifestData(protocol.manifest, protoFile));
  if (hash !== protocol.manifestHash) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `the frozen manifest hashes to ${hash.slice(0, 12)}…, not the recorded ${protocol.manifestHash.slice(0, 12)}…`,
      { file: protoFile, field: 'manifestHash' },
    );
  }
  const rowsFile = unitPaths(unit.dir).rows;
  if (unit.rows.length !== manifest.chains.length) {
    throw new ImepError('E_UNIT_TAMPERED', `${unit.rows.length} rows for ${manifest.chains.length} chains`, {
      file: rowsFile,
    });
  }
  const rows = unit.rows.map((r, i) => {
    const row = parseRow(DecisionRowSchema, r, rowsFile, i);
    const chain = manifest.chains[i]!;
    if (
      row.chainId !== chain.id ||
      row.K !== chain.K ||
      row.finalDrawer !== chain.finalFact.drawer ||
      row.rewrite !== chain.rewrite
    ) {
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `row ${i} (${row.chainId}) does not describe chain ${chain.id} of the frozen manifest`,
        { file: rowsFile, field: `${i}.chainId` },
      );
    }
    for (const [name, cell] of Object.entries(row.decisions)) {
      if (cell.choice >= chain.K || cell.correct !== (cell.choice === chain.finalFact.drawer)) {
        throw new ImepError(
          'E_UNIT_TAMPERED',
          `row ${i}: ${name}: choice ${cell.choice} / correct ${cell.correct} inconsistent with chain ${chain.id}`,
          { file: rowsFile, field: `${i}.decisions.${name}` },
        );
      }
    }
    return row;
  });
  const table: DecisionTable = {
    format: DECISIONS_FORMAT,
    version: DECISIONS_VERSION,
    manifestHash: hash,
    seed: protocol.seed,
    prng: protocol.prng,
    fallback: protocol.fallback,
    conditions: protocol.conditions.map((c) => ({
      ...c,
      decisions: rows.flatMap((r) => {
        const cell = r.decisions[c.name];
        return cell === undefined
          ? []
          : [
              {
                chainId: r.chainId,
                choice: cell.choice,
                path: cell.path,
                ...(cell.recordId === null ? {} : { recordId: cell.recordId }),
              },
            ];
      }),
    })),
    ladder: {
      seed: protocol.ladder.seed,
      chains: rows.filter((r) => r.ladder !== null).length,
      excluded: rows.filter((r) => r.ladder === null).map((r) => r.chainId),
      ulpElementsStepped: rows.reduce((s, r) => s + (r.ladder?.ulpElements ?? 0), 0),
      rows: Object.fromEntries(
        LADDER_CONDITIONS.map((c) => [
          c,
          rows.flatMap((r) => {
            const g = r.ladder?.[c];
            return g === undefined || g === null
              ? []
              : [
                  {
                    chainId: r.chainId,
                    donorChainId: g.donorChainId,
                    choice: g.choice,
                    changed: g.changed,
                    correct: g.correct,
                  },
                ];
          }),
        ]),
      ) as NonNullable<DecisionTable['ladder']>['rows'],
    },
  };
  return { unit, protocol, manifest, manifestHash: hash, rows, table };
}
