/**
 * The decision table: every condition's decisions on one manifest, as data (format
 * `imep-chain-decisions`, version 1). `decideAll` makes it; `replay.ts` consumes only its
 * `conditions` (name, cohort, decisions), so a sealed evidence unit holding the same rows can be
 * replayed by the same core. The ladder's per-chain choices travel with it for the record.
 */
import { z } from 'zod';
import { ImepError, PRNG_NAME, PRNG_VERSION, type Seed, canonicalPrettyJson } from '../core/index.js';
import { decisionConditions, type ConditionDecisions } from './conditions.js';
import type { FallbackMode } from './readout.js';
import { runDecisionLadder, LADDER_CONDITIONS, type LadderResult } from './ladder.js';
import type { ChainManifest } from './manifest-schema.js';
import type { ChainRecordSet } from './records.js';

export const DECISIONS_FORMAT = 'imep-chain-decisions';
export const DECISIONS_VERSION = 1;

const Name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);

export const DecisionSchema = z.strictObject({
  chainId: z.string().min(1),
  choice: z.number().int().min(0),
  path: z.enum(['readout', 'fallback', 'initial-fact', 'oracle']),
  recordId: z.string().optional(),
});

export const ConditionDecisionsSchema = z.strictObject({
  name: Name,
  label: z.string(),
  cohort: z.enum(['all', 'rewritten']),
  decisions: z.array(DecisionSchema),
});

const LadderChoiceSchema = z.strictObject({
  chainId: z.string(),
  donorChainId: z.string().nullable(),
  choice: z.number().int().min(0),
  changed: z.boolean(),
  correct: z.boolean(),
});

export const DecisionTableSchema = z.strictObject({
  format: z.literal(DECISIONS_FORMAT),
  version: z.literal(DECISIONS_VERSION),
  manifestHash: z.string().regex(/^[0-9a-f]{64}$/),
  seed: z.union([z.number().int().min(0).max(0xffffffff), z.string()]),
  prng: z.strictObject({ name: z.string(), version: z.number().int() }),
  fallback: z.enum(['uniform', 'fixed']),
  conditions: z.array(ConditionDecisionsSchema).min(1),
  ladder: z
    .strictObject({
      seed: z.string(),
      chains: z.number().int().min(0),
      excluded: z.array(z.string()),
      ulpElementsStepped: z.number().int().min(0),
      rows: z.strictObject({
        C: z.array(LadderChoiceSchema),
        U: z.array(LadderChoiceSchema),
        S: z.array(LadderChoiceSchema),
        T: z.array(LadderChoiceSchema),
      }),
    })
    .optional(),
});

export type DecisionTable = z.infer<typeof DecisionTableSchema>;
export type ConditionDecisionsEntry = z.infer<typeof ConditionDecisionsSchema>;

export interface DecideOptions {
  readonly seed: number;
  readonly fallback?: FallbackMode;
  /** Run the C/U/S/T ladder too (default true). */
  readonly ladder?: boolean;
}

export interface DecideResult {
  readonly table: DecisionTable;
  readonly ladder: LadderResult | undefined;
}

/** Runs every decision condition (and the ladder) on a manifest's records. */
export function decideAll(
  manifest: ChainManifest,
  records: ChainRecordSet,
  manifestHash: string,
  opts: DecideOptions,
): DecideResult {
  const fallback = opts.fallback ?? 'uniform';
  const seed: Seed = opts.seed;
  const specs = decisionConditions({ fallback });
  const conditions = specs.map((s) => ({
    name: s.name,
    label: s.label,
    cohort: s.cohort,
    decisions: [...s.decide(manifest, records, seed)],
  }));
  const full = conditions.find((c) => c.name === 'full-memory')?.decisions as ConditionDecisions;
  const ladder =
    opts.ladder === false
      ? undefined
      : runDecisionLadder(manifest, records, { seed: `${seed}/ladder`, archived: full });
  const table: DecisionTable = {
    format: DECISIONS_FORMAT,
    version: DECISIONS_VERSION,
    manifestHash,
    seed,
    prng: { name: PRNG_NAME, version: PRNG_VERSION },
    fallback,
    conditions,
    ...(ladder === undefined
      ? {}
      : {
          ladder: {
            seed: ladder.seed,
            chains: ladder.chains,
            excluded: [...ladder.excluded],
            ulpElementsStepped: ladder.ulpElementsStepped,
            rows: Object.fromEntries(
              LADDER_CONDITIONS.map((c) => [
                c,
                ladder.rows[c].map((r) => ({
                  chainId: r.chainId,
                  donorChainId: r.donorChainId,
                  choice: r.choice,
                  changed: r.changed,
                  correct: r.correct,
                })),
              ]),
            ) as NonNullable<DecisionTable['ladder']>['rows'],
          },
        }),
  };
  return { table, ladder };
}

/** Parses a decisions file's JSON text (E_USAGE naming the first bad field). */
export function parseDecisionTable(text: string, file?: string): DecisionTable {
  const where = file === undefined ? {} : { file };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ImepError('E_USAGE', `decisions file is not JSON: ${e instanceof Error ? e.message : String(e)}`, {
      ...where,
      cause: e,
    });
  }
  const r = DecisionTableSchema.safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ImepError('E_USAGE', `not a decisions file: ${issue?.message ?? 'invalid'}`, {
      ...where,
      field: (issue?.path ?? []).map(String).join('.') || '(root)',
    });
  }
  return r.data;
}

export function decisionTableText(table: DecisionTable): string {
  return canonicalPrettyJson(table);
}
