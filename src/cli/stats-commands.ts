import type { Command } from 'commander';
import {
  clopperPearson,
  clopperPearsonLower,
  clopperPearsonUpper,
  holm,
  type MaybePValue,
  pairedSummary,
  wilson,
} from '../stats/index.js';
import { pValue, pp, signedPp, textTable } from '../report/index.js';
import { asUsageError, parseChoice, parseCount, parseProbability } from './args.js';
import { runStatsDemo } from './stats-demo.js';

/** Prints JSON (proportions, full precision) or a short human table (percentage points). */
function emit(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

function guarded<T>(flags: Readonly<Record<string, string>>, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw asUsageError(e, flags);
  }
}

export function registerStats(group: Command): void {
  group
    .command('paired')
    .description('one seed-paired contrast: D, ρ, exact McNemar p, exact decision bounds, Tango interval')
    .requiredOption('--b <count>', 'pairs where the reference succeeds and the intervention fails')
    .requiredOption('--c <count>', 'pairs where the intervention succeeds and the reference fails')
    .requiredOption('--n <count>', 'paired units')
    .option('--alpha <a>', 'α per Clopper–Pearson component of the decision bounds', '0.05')
    .option('--level <l>', 'two-sided level of the Tango interval', '0.95')
    .option('--json', 'print one JSON object (proportions, not pp)')
    .action((o: { b: string; c: string; n: string; alpha: string; level: string; json?: boolean }) => {
      const b = parseCount('--b', o.b);
      const c = parseCount('--c', o.c);
      const n = parseCount('--n', o.n);
      const alpha = parseProbability('--alpha', o.alpha);
      const level = parseProbability('--level', o.level);
      const s = guarded({ b: '--b', c: '--c', n: '--n', alpha: '--alpha', level: '--level' }, () =>
        pairedSummary({ b, c, n, alpha, level }),
      );
      const json = {
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
      emit(Boolean(o.json), json, () =>
        textTable(
          [
            ['quantity', 'value', 'note'],
            ['b / c / n', `${b} / ${c} / ${n}`, 'b: reference succeeds, intervention fails'],
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
        ),
      );
    });

  group
    .command('proportion')
    .description('one proportion x/n: exact Clopper–Pearson and Wilson score bounds')
    .requiredOption('--x <count>', 'successes')
    .requiredOption('--n <count>', 'trials')
    .option('--level <l>', 'confidence level', '0.95')
    .option('--sided <s>', 'two | upper | lower', 'two')
    .option('--json', 'print one JSON object')
    .action((o: { x: string; n: string; level: string; sided: string; json?: boolean }) => {
      const x = parseCount('--x', o.x);
      const n = parseCount('--n', o.n);
      const level = parseProbability('--level', o.level);
      const sided = parseChoice('--sided', o.sided, ['two', 'upper', 'lower'] as const);
      const flags = { x: '--x', n: '--n', level: '--level', sided: '--sided' };
      const { cp, w } = guarded(flags, () => {
        const w = wilson(x, n, level, sided);
        const cp: readonly [number, number] =
          sided === 'two'
            ? clopperPearson(x, n, level)
            : sided === 'upper'
              ? [0, clopperPearsonUpper(x, n, 1 - level)]
              : [clopperPearsonLower(x, n, 1 - level), 1];
        return { cp, w };
      });
      emit(Boolean(o.json), { x, n, level, sided, clopperPearson: cp, wilson: w }, () =>
        textTable(
          [
            ['method', 'lower', 'upper'],
            ['estimate x/n', (x / n).toFixed(4), ''],
            [`Clopper–Pearson (${sided}, ${formatLevel(level)})`, cp[0].toFixed(4), cp[1].toFixed(4)],
            [`Wilson (${sided}, ${formatLevel(level)})`, w[0].toFixed(4), w[1].toFixed(4)],
          ],
          ['l', 'r', 'r'],
        ),
      );
    });

  group
    .command('holm')
    .description("Holm step-down adjusted p-values of one frozen family; 'unavailable' slots enter at p = 1")
    .argument('<p...>', "p-values in family order (a slot may be 'unavailable')")
    .option('--json', 'print one JSON object')
    .action((ps: string[], o: { json?: boolean }) => {
      const values: MaybePValue[] = ps.map((raw, i) =>
        raw === 'unavailable' ? 'unavailable' : parseProbability(`p[${i + 1}]`, raw, { open: false }),
      );
      const adjusted = holm(values);
      emit(Boolean(o.json), { adjusted }, () =>
        textTable(
          [['slot', 'p', 'Holm-adjusted'], ...values.map((p, i) => [String(i + 1), String(p), String(adjusted[i])])],
          ['r', 'r', 'r'],
        ),
      );
    });

  group
    .command('demo')
    .description("recompute the paper's published numbers and show them beside the printed values")
    .option('--json', 'print the rows as JSON')
    .action((o: { json?: boolean }) => {
      const ok = runStatsDemo(Boolean(o.json));
      if (!ok) process.exitCode = 1;
    });
}

function formatLevel(level: number): string {
  return `${Number((100 * level).toPrecision(6))}%`;
}
