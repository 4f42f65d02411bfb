/**
 * The post-seal steps the CLI chains after a run (`--through closeout`) or runs one by one:
 * adjudicate → cross-check → closeout → report, from src/campaign/adjudication (adjudicateUnit,
 * crossCheckUnit, closeoutUnit) and src/report (writeReport). The report goes next to the unit, never
 * inside it (a closed unit accepts no file). Both are imported when a step runs, not with the runner: a run
 * or a shard that stops at the seal never loads the statistics, report and chart (vega) modules.
 */
import { basename, dirname, join } from 'node:path';
import type { AdjudicateUnitResult, CrossCheckUnitResult } from '../adjudication/index.js';
import type { WrittenReport } from '../report/index.js';
import type { SameOperatorOverride } from '../evidence/operator.js';
import type { CloseoutRecord } from '../evidence/records/post-seal-records.js';
import type { Operator } from '../evidence/unit-layout.js';

/**
 * The same-operator override of `--through closeout`, which adjudicates as the operator who ran the conditions:
 * the reason is the user's (`--same-operator-reason TEXT`), recorded in the adjudication — never a fixed text.
 */
export function sameOperatorOverride(reason: string | undefined): SameOperatorOverride | undefined {
  return reason === undefined || reason.trim() === '' ? undefined : { reason: reason.trim() };
}

export async function adjudicateStep(unitDir: string, opts: { operator?: Operator; allowSameOperator?: SameOperatorOverride }): Promise<AdjudicateUnitResult> {
  const { adjudicateUnit } = await import('../adjudication/index.js');
  return adjudicateUnit(unitDir, { ...(opts.operator ? { operator: opts.operator } : {}), ...(opts.allowSameOperator ? { allowSameOperator: opts.allowSameOperator } : {}) });
}

export async function crossCheckStep(unitDir: string, opts: { operator?: Operator } = {}): Promise<CrossCheckUnitResult> {
  const { crossCheckUnit } = await import('../adjudication/index.js');
  return crossCheckUnit(unitDir, opts.operator ? { operator: opts.operator } : {});
}

export async function closeoutStep(unitDir: string, opts: { operator?: Operator } = {}): Promise<CloseoutRecord> {
  const { closeoutUnit } = await import('../adjudication/index.js');
  return closeoutUnit(unitDir, opts.operator ? { operator: opts.operator } : {});
}

/** Default report folder: `<campaigns dir>/reports/<unit folder>/` (never inside the closed unit). */
export function defaultReportDir(unitDir: string): string {
  return join(dirname(unitDir), 'reports', basename(unitDir));
}

export async function reportStep(unitDir: string, outDir = defaultReportDir(unitDir)): Promise<WrittenReport> {
  const { writeReport } = await import('../report/index.js');
  return writeReport(unitDir, { outDir });
}
