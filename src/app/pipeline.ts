/**
 * The product's pipeline: run → seal → adjudicate → cross-check → closeout → report. The runner (src/campaign)
 * stops at the seal; `--through closeout` hands it the post-seal steps here, which chain src/adjudication
 * (adjudicateUnit), src/crosscheck (crossCheckUnit), the closeout (./closeout.ts) and src/report (writeReport).
 * The report goes next to the unit, never inside it (a closed unit accepts no file). The post-seal modules are
 * imported when a step runs, not with the runner: a run or a shard that stops at the seal never loads the
 * statistics, report and chart (vega) modules.
 */
import { basename, dirname, join } from 'node:path';
import { adjudicationLines, foundLine, type AdjudicateUnitResult } from '../adjudication/index.js';
import { resumeCampaign, runCampaign } from '../campaign/index.js';
import { type RunCampaignOptions } from '../campaign/index.js';
import type { CrossCheckUnitResult } from '../crosscheck/index.js';
import { terminalText } from '../core/index.js';
import { currentOperator, sameOperatorOverride, type SameOperatorOverride, readUnitState } from '../evidence/index.js';
import type { CloseoutRecord, Operator } from '../evidence/index.js';
import type { WrittenReport } from '../report/index.js';

export async function adjudicateStep(
  unitDir: string,
  opts: { operator?: Operator; allowSameOperator?: SameOperatorOverride },
): Promise<AdjudicateUnitResult> {
  const { adjudicateUnit } = await import('../adjudication/index.js');
  return adjudicateUnit(unitDir, {
    ...(opts.operator ? { operator: opts.operator } : {}),
    ...(opts.allowSameOperator ? { allowSameOperator: opts.allowSameOperator } : {}),
  });
}

export async function crossCheckStep(
  unitDir: string,
  opts: { operator?: Operator } = {},
): Promise<CrossCheckUnitResult> {
  const { crossCheckUnit } = await import('../crosscheck/index.js');
  return crossCheckUnit(unitDir, opts.operator ? { operator: opts.operator } : {});
}

export async function closeoutStep(unitDir: string, opts: { operator?: Operator } = {}): Promise<CloseoutRecord> {
  const { closeoutUnit } = await import('./closeout.js');
  return closeoutUnit(unitDir, opts.operator ? { operator: opts.operator } : {});
}

/** Default report folder: `<campaigns dir>/reports/<unit folder>/` (never inside the closed unit). */
export function defaultReportDir(unitDir: string): string {
  return join(dirname(unitDir), 'reports', basename(unitDir));
}

export async function reportStep(unitDir: string, outDir = defaultReportDir(unitDir)): Promise<WrittenReport> {
  const { writeReport } = await import('../report/write-report.js');
  return writeReport(unitDir, { outDir });
}

const say = (opts: RunCampaignOptions, line: string): void =>
  (opts.say ?? ((l: string) => process.stdout.write(`${terminalText(l)}\n`)))(line);

/** What a post-seal step is doing while it runs (seconds on a large unit), on the progress stream (stderr). */
const doing = (opts: RunCampaignOptions, what: string): void => {
  opts.progress?.write(`${what} …\n`);
};

/**
 * The post-seal steps on a sealed unit, each from the state the last one left, through the report. Returns the
 * "found:" line (src/adjudication/verdict-words.ts) when it adjudicated, for the run to end with; null otherwise.
 */
export async function postSeal(unitDir: string, opts: RunCampaignOptions): Promise<string | null> {
  const operator = opts.operator ?? currentOperator();
  // the run ends with one line of what was found (runThrough prints it last, when this run adjudicated)
  let found: string | null = null;
  for (;;) {
    const { state } = await readUnitState(unitDir);
    if (state === 'sealed') {
      doing(opts, `adjudicating ${unitDir} against the frozen criteria`);
      const override = sameOperatorOverride(opts.sameOperatorReason);
      const a = await adjudicateStep(unitDir, {
        operator,
        ...(override === undefined ? {} : { allowSameOperator: override }),
      });
      const recorded = a.record.sameOperatorOverride;
      say(
        opts,
        `adjudicated ${unitDir}: ${a.file} (${a.adjudication.goNoGo.status}${recorded ? `; same-operator override recorded: "${recorded.reason}"` : ''})`,
      );
      for (const l of adjudicationLines(a.adjudication, a.protocol)) say(opts, l);
      found = foundLine(a.adjudication);
    } else if (state === 'adjudicated') {
      doing(opts, `cross-checking ${unitDir}: recomputing every number from the sealed inputs`);
      const x = await crossCheckStep(unitDir, { operator });
      say(opts, `cross-checked ${unitDir}: ${x.outcome}`);
    } else if (state === 'cross-checked') {
      doing(opts, `closing out ${unitDir}: hashing and signing the final manifest`);
      const r = await closeoutStep(unitDir, { operator });
      say(opts, `closed out ${unitDir}: Merkle root ${r.merkle.root}`);
    } else if (state === 'closed') {
      doing(opts, `writing the report of ${unitDir} (figures rendered to SVG)`);
      const w = await reportStep(unitDir, defaultReportDir(unitDir));
      say(opts, `report: ${w.html}`);
      say(opts, w.sizeLine);
      return found;
    } else {
      return found;
    }
  }
}

/** A runner whose afterSeal runs the post-seal steps and whose last line is what they found. */
async function endingWithFound(
  run: (afterSeal: RunCampaignOptions['afterSeal']) => Promise<string>,
  opts: RunCampaignOptions,
): Promise<string> {
  let found: string | null = null;
  const dir = await run(async (unitDir, o) => {
    found = await postSeal(unitDir, o);
  });
  if (found !== null) say(opts, found);
  return dir;
}

/** `imep campaign run FILE [--through seal|closeout]`: the runner, with the post-seal steps when asked for. */
export function runThrough(file: string, opts: RunCampaignOptions): Promise<string> {
  return endingWithFound((afterSeal) => runCampaign(file, { ...opts, ...(afterSeal ? { afterSeal } : {}) }), opts);
}

/** `imep campaign resume UNIT [--through …]`: as runThrough, from an interrupted unit. */
export function resumeThrough(unitDir: string, opts: RunCampaignOptions): Promise<string> {
  return endingWithFound(
    (afterSeal) => resumeCampaign(unitDir, { ...opts, ...(afterSeal ? { afterSeal } : {}) }),
    opts,
  );
}
