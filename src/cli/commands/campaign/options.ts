/**
 * What the `imep campaign …` subcommands share: their common options (as commander `.option(...)` argument
 * tuples), the parse of those options into CampaignOptions, `--through`, `--n`, and the stdout line printer.
 */
import { PLAN_ROWS_CONFIRM, PLAN_ROWS_MAX } from '../../../protocol/index.js';
import { ImepError, asTyped, terminalText } from '../../../core/index.js';
import { DEFAULT_BATCH } from '../../../campaign/index.js';
import type { CampaignOptions, Through } from '../../../campaign/index.js';
import { parseChoice, parseCount } from '../../args.js';

/** The options several subcommands take, as commander gives them. */
export interface CommonOpts {
  campaignsDir: string;
  batch?: string;
  servers?: string;
  allowLargePlan?: boolean;
}

export const dirOpt = ['--campaigns-dir <dir>', 'where evidence units live', 'campaigns'] as const;

export const batchOpt = [
  '--batch <n>',
  `episodes stepped together through the policy (rows do not depend on it; default ${DEFAULT_BATCH})`,
] as const;

export const largeOpt = [
  '--allow-large-plan',
  `build a plan above ${PLAN_ROWS_CONFIRM.toLocaleString('en-US')} rows (the estimate is printed; above ${PLAN_ROWS_MAX.toLocaleString('en-US')} rows a plan is always refused)`,
] as const;

export const reasonOpt = [
  '--same-operator-reason <text>',
  'with --through closeout: why the operator who runs the conditions may also adjudicate them (recorded in the adjudication, and shown by verify and the report)',
] as const;

export const serversOpt = [
  '--servers <k>',
  'simulator servers IMEP starts for a bridged simulator; slot s steps on server s mod k, all k at once (rows do not depend on it; default 1)',
] as const;

/** `--same-operator-reason`, as the pipeline takes it (absent when not given). */
export function reasonOf(o: { sameOperatorReason?: string }): { sameOperatorReason?: string } {
  return o.sameOperatorReason === undefined ? {} : { sameOperatorReason: o.sameOperatorReason };
}

/** `--through seal|closeout`. */
export function parseThrough(raw: string): Through {
  return parseChoice<Through>('--through', raw, ['seal', 'closeout']);
}

/** One line on stdout, with terminal control characters made visible. */
export function out(line: string): void {
  process.stdout.write(`${terminalText(asTyped(line))}\n`);
}

/** The common options → the runner's options (progress on stderr, results through `out`). */
export function options(o: CommonOpts): CampaignOptions {
  const batchSize = o.batch === undefined ? DEFAULT_BATCH : parseCount('--batch', o.batch);
  if (batchSize < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--batch' });
  const servers = o.servers === undefined ? undefined : parseCount('--servers', o.servers);
  if (servers !== undefined && servers < 1)
    throw new ImepError('E_USAGE', 'must be at least 1', { field: '--servers' });
  return {
    campaignsDir: o.campaignsDir,
    batchSize,
    progress: process.stderr,
    say: out,
    ...(servers === undefined ? {} : { simulators: { servers } }),
    ...(o.allowLargePlan === true ? { allowLargePlan: true } : {}),
  };
}

/** `--n K`, at least 1. */
export function positiveN(raw: string): number {
  const n = parseCount('--n', raw);
  if (n < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--n' });
  return n;
}
