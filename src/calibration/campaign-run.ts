/**
 * One campaign-level calibration unit through IMEP's own path, in a fresh folder:
 *   derived protocol written → runCampaign (create + precommit → formal run → run-complete → seal) under
 *   the suite's runner identity → adjudicateUnit under the suite's adjudicator identity, WITHOUT a
 *   same-operator override (the lifecycle refuses an adjudicator who ran the conditions) → the registered
 *   criterion's verdict word read from the stored adjudication.
 *
 * What the result keeps is deterministic (same suite, checkpoints and code → same bytes): the verdict,
 * its routed bound and reason, the θ counts, the gates, and the hashes the adjudication records of its
 * sealed inputs (protocol, plan, rows.jsonl). NOT kept: unit folders, time stamps, the seal's Merkle root
 * and the precommit/seal hashes — unit.json, precommit.json, seal.json and rows/timings.jsonl carry
 * wall-clock times, so two runs of one band seal identical rows under different roots.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError } from '../core/index.js';
import { explicitOperator } from '../evidence/index.js';
import { adjudicateUnit } from '../adjudication/index.js';
import { hasRole } from '../protocol/index.js';
import { runCampaign } from '../campaign/index.js';
import type { AvailableEstimand, EstimandResult } from '../adjudication/index.js';
import type { CampaignTemplate, DerivedProtocol } from './campaign-protocol.js';

export interface CampaignUnitInput {
  readonly derived: DerivedProtocol;
  readonly template: CampaignTemplate;
  /** A fresh folder for this unit's protocol file and campaigns dir (its own seed registry). */
  readonly dir: string;
  readonly root: string;
  readonly operators: { readonly runner: string; readonly adjudicator: string };
  readonly batchSize?: number;
}

export interface CampaignUnitResult {
  readonly protocolId: string;
  readonly protocolHash: string;
  readonly planHash: string;
  readonly rowsSha256: string;
  readonly rowCount: number;
  readonly goNoGo: string;
  readonly gates: readonly { readonly gate: string; readonly passed: boolean }[];
  /** The registered criterion's verdict word ('holds' = detected). */
  readonly verdict: string;
  readonly reason: string;
  readonly bound: {
    readonly interval: string;
    readonly lower: number;
    readonly upper: number;
    readonly threshold: number;
  } | null;
  /** θ's counts from the adjudication: b′ (only T flips), c′ (only S flips), n paired units. */
  readonly bOnlyT: number;
  readonly cOnlyS: number;
  readonly n: number;
  readonly theta: number;
  /** Units removed from the θ cohort (fail-closed rows, e.g. E_DONOR_SHORT). */
  readonly removed: number;
  readonly ranBy: readonly string[];
  readonly adjudicatedBy: string;
  /** The verdict word of EVERY registered criterion of the unit, by criterion id. */
  readonly criteria: Readonly<Record<string, string>>;
  /**
   * The exact-repeat floor: the counts of the unit's ρ estimand against its kind-C condition (b: A succeeds and C
   * fails, c: the reverse) and its upper bound; null when the template registers none. 0/0 without execution noise.
   */
  readonly replicateFloor: {
    readonly estimand: string;
    readonly b: number;
    readonly c: number;
    readonly n: number;
    readonly upper: number | null;
  } | null;
}

function floorOf(derived: DerivedProtocol, estimands: readonly EstimandResult[]): CampaignUnitResult['replicateFloor'] {
  const replicates = new Set(derived.protocol.conditions.filter((c) => hasRole(c, 'replicate')).map((c) => c.id));
  const spec = derived.protocol.estimands.find((e) => e.kind === 'rho' && replicates.has(e.intervention));
  const est = spec === undefined ? undefined : estimands.find((e) => e.id === spec.id);
  if (spec === undefined || est === undefined || est.status !== 'available') return null;
  const upper = est.intervals[0]?.upper ?? null;
  return { estimand: spec.id, b: est.counts.b ?? 0, c: est.counts.c ?? 0, n: est.counts.n, upper };
}

export async function runCampaignUnit(
  input: CampaignUnitInput,
): Promise<{ result: CampaignUnitResult; unitDir: string }> {
  const { derived, template } = input;
  await mkdir(input.dir, { recursive: true });
  const file = join(input.dir, `${derived.id}.yaml`);
  await writeFile(file, derived.text);
  const unitDir = await runCampaign(file, {
    campaignsDir: join(input.dir, 'campaigns'),
    root: input.root,
    through: 'seal',
    operator: explicitOperator(input.operators.runner),
    progress: null,
    say: () => undefined,
    ...(input.batchSize === undefined ? {} : { batchSize: input.batchSize }),
  });
  const { adjudication: adj } = await adjudicateUnit(unitDir, {
    operator: explicitOperator(input.operators.adjudicator),
  });
  const internal = (message: string): ImepError => new ImepError('E_INTERNAL', message, { file: unitDir });
  if (adj.sameOperatorOverride !== null)
    throw internal('a calibration unit was adjudicated under a same-operator override');
  if (adj.provenance.protocolHash !== derived.protocolHash || adj.provenance.planHash !== derived.planHash) {
    throw internal(
      `the unit's frozen protocol/plan (${adj.provenance.protocolHash.slice(0, 12)}…/${adj.provenance.planHash.slice(0, 12)}…) is not the derived one`,
    );
  }
  const v = adj.verdicts.find((x) => x.criterion === template.criterion.id);
  if (v === undefined) throw internal(`the adjudication has no verdict for ${template.criterion.id}`);
  const est = adj.estimands.find((e) => e.id === template.criterion.estimand);
  if (est === undefined) throw internal(`the adjudication has no estimand ${template.criterion.estimand}`);
  const available = est.status === 'available' ? (est as AvailableEstimand) : null;
  const bPrime = available?.counts.bPrime ?? 0;
  const cPrime = available?.counts.cPrime ?? 0;
  const n = available?.counts.n ?? 0;
  const result: CampaignUnitResult = {
    protocolId: adj.provenance.protocolId,
    protocolHash: adj.provenance.protocolHash,
    planHash: adj.provenance.planHash,
    rowsSha256: adj.provenance.rowsSha256,
    rowCount: adj.provenance.rowCount,
    goNoGo: adj.goNoGo.status,
    gates: adj.gates.map((g) => ({ gate: g.gate, passed: g.passed })),
    verdict: v.verdict,
    reason: v.reason,
    bound: v.bound
      ? { interval: v.bound.interval, lower: v.bound.lower, upper: v.bound.upper, threshold: v.bound.threshold }
      : null,
    bOnlyT: bPrime,
    cOnlyS: cPrime,
    n,
    theta: available?.estimate ?? 0,
    removed: est.cohort.removed.total,
    ranBy: [...adj.ranBy],
    adjudicatedBy: adj.operator.id,
    criteria: Object.fromEntries(adj.verdicts.map((x) => [x.criterion, x.verdict])),
    replicateFloor: floorOf(derived, adj.estimands),
  };
  return { result, unitDir };
}
