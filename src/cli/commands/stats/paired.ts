/**
 * `imep stats paired --b B --c C --n N [--alpha a] [--level l] [--json]`: one seed-paired contrast — D, ρ, exact
 * McNemar p, exact decision bounds, Tango interval.
 */
import type { Command } from 'commander';
import { pairedSummary } from '../../../stats/index.js';
import { pValue, pp, signedPp, textTable } from '../../../report/index.js';
import { parseCount, parseProbability } from '../../args.js';
import { emit, formatLevel, guarded } from './shared.js';

interface PairedOpts {
  b: string;
  c: string;
  n: string;
  alpha: string;
  level: string;
  json?: boolean;
}

type Summary = ReturnType<typeof pairedSummary>;

/** The JSON object (proportions, not pp). */
function pairedJson(s: Summary): object {
  return {
    b: s.b,
    c: s.c,
    n: s.n,
    D: s.D,
    rho: s.rho,
    mcnemarP: s.mcnemarP,
    bound: {
      alphaPerComponent: s.bound.alphaPerComponent,
      lower: s.bound.lower,
      upper: s.bound.upper,
      coverage: s.bound.coverage,
      label: s.bound.label,
      intervalLabel: s.bound.intervalLabel,
    },
    tango: s.tango,
  };
}

function pairedTable(s: Summary, alpha: number, level: number): string {
  return textTable(
    [
      ['quantity', 'value', 'note'],
      ['b / c / n', `${s.b} / ${s.c} / ${s.n}`, 'b: reference succeeds, intervention fails'],
      ['D', `${signedPp(s.D)} pp`, '(b − c)/n; positive: the intervention lowers success'],
      ['ρ', `${pp(s.rho)} pp`, '(b + c)/n, outcome-change rate'],
      ['McNemar p', pValue(s.mcnemarP), 'exact, two-sided, conditional on b + c'],
      ['upper bound on D', `${signedPp(s.bound.upper)} pp`, `${s.bound.label}, α=${alpha} per component`],
      ['lower bound on D', `${signedPp(s.bound.lower)} pp`, `${s.bound.label}, α=${alpha} per component`],
      [
        `Tango ${formatLevel(level)}`,
        `[${signedPp(s.tango.lower)}, ${signedPp(s.tango.upper)}] pp`,
        'score interval for D',
      ],
    ],
    ['l', 'r', 'l'],
  );
}

function paired(o: PairedOpts): void {
  const b = parseCount('--b', o.b);
  const c = parseCount('--c', o.c);
  const n = parseCount('--n', o.n);
  const alpha = parseProbability('--alpha', o.alpha);
  const level = parseProbability('--level', o.level);
  const s = guarded({ b: '--b', c: '--c', n: '--n', alpha: '--alpha', level: '--level' }, () =>
    pairedSummary({ b, c, n, alpha, level }),
  );
  emit(Boolean(o.json), pairedJson(s), () => pairedTable(s, alpha, level));
}

export function registerPaired(group: Command): void {
  group
    .command('paired')
    .description('one seed-paired contrast: D, ρ, exact McNemar p, exact decision bounds, Tango interval')
    .requiredOption('--b <count>', 'pairs where the reference succeeds and the intervention fails')
    .requiredOption('--c <count>', 'pairs where the intervention succeeds and the reference fails')
    .requiredOption('--n <count>', 'paired units')
    .option('--alpha <a>', 'α per Clopper–Pearson component of the decision bounds', '0.05')
    .option('--level <l>', 'two-sided level of the Tango interval', '0.95')
    .option('--json', 'print one JSON object (proportions, not pp)')
    .action(paired);
}
