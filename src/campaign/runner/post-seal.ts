/**
 * The post-seal steps the CLI chains after a run (`--through closeout`) or runs one by one:
 * adjudicate → cross-check → closeout → report, from src/campaign/adjudication (adjudicateUnit,
 * crossCheckUnit, closeoutUnit) and src/report (writeReport). The report goes next to the unit, never
 * inside it (a closed unit accepts no file).
 */
import { basename, dirname, join } from 'node:path';
import { adjudicateUnit, closeoutUnit, crossCheckUnit, type AdjudicateUnitResult, type CrossCheckUnitResult } from '../adjudication/index.js';
import { writeReport, type WrittenReport } from '../../report/index.js';
import type { SameOperatorOverride } from '../operator.js';
import type { CloseoutRecord } from '../post-seal-records.js';
import type { Operator } from '../unit-layout.js';

/** The same-operator override the quick start records (one operator runs and adjudicates). */
export const QUICK_START_OVERRIDE: SameOperatorOverride = { reason: 'single-operator quick start' };

export function adjudicateStep(unitDir: string, opts: { operator?: Operator; allowSameOperator?: SameOperatorOverride }): Promise<AdjudicateUnitResult> {
  return adjudicateUnit(unitDir, { ...(opts.operator ? { operator: opts.operator } : {}), ...(opts.allowSameOperator ? { allowSameOperator: opts.allowSameOperator } : {}) });
}

export function crossCheckStep(unitDir: string, opts: { operator?: Operator } = {}): Promise<CrossCheckUnitResult> {
  return crossCheckUnit(unitDir, opts.operator ? { operator: opts.operator } : {});
}

export function closeoutStep(unitDir: string, opts: { operator?: Operator } = {}): Promise<CloseoutRecord> {
  return closeoutUnit(unitDir, opts.operator ? { operator: opts.operator } : {});
}

/** Default report folder: `<campaigns dir>/reports/<unit folder>/` (never inside the closed unit). */
export function defaultReportDir(unitDir: string): string {
  return join(dirname(unitDir), 'reports', basename(unitDir));
}

export function reportStep(unitDir: string, outDir = defaultReportDir(unitDir)): Promise<WrittenReport> {
  return writeReport(unitDir, { outDir });
}
