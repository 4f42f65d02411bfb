/**
 * `imep stats proportion --x X --n N [--level l] [--sided two|upper|lower] [--json]`: one proportion x/n with
 * exact Clopper–Pearson and Wilson score bounds.
 */
import type { Command } from 'commander';
import { clopperPearson, clopperPearsonLower, clopperPearsonUpper, wilson } from '../../../stats/index.js';
import { textTable } from '../../../report/index.js';
import { parseChoice, parseCount, parseProbability } from '../../args.js';
import { emit, formatLevel, guarded } from './shared.js';

type Sided = 'two' | 'upper' | 'lower';

interface ProportionOpts {
  x: string;
  n: string;
  level: string;
  sided: string;
  json?: boolean;
}

/** The Clopper–Pearson bounds of x/n, two- or one-sided. */
function clopperPearsonBounds(x: number, n: number, level: number, sided: Sided): readonly [number, number] {
  return sided === 'two'
    ? clopperPearson(x, n, level)
    : sided === 'upper'
      ? [0, clopperPearsonUpper(x, n, 1 - level)]
      : [clopperPearsonLower(x, n, 1 - level), 1];
}

function proportion(o: ProportionOpts): void {
  const x = parseCount('--x', o.x);
  const n = parseCount('--n', o.n);
  const level = parseProbability('--level', o.level);
  const sided = parseChoice('--sided', o.sided, ['two', 'upper', 'lower'] as const);
  const flags = { x: '--x', n: '--n', level: '--level', sided: '--sided' };
  const { cp, w } = guarded(flags, () => {
    const w = wilson(x, n, level, sided);
    return { cp: clopperPearsonBounds(x, n, level, sided), w };
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
}

export function registerProportion(group: Command): void {
  group
    .command('proportion')
    .description('one proportion x/n: exact Clopper–Pearson and Wilson score bounds')
    .requiredOption('--x <count>', 'successes')
    .requiredOption('--n <count>', 'trials')
    .option('--level <l>', 'confidence level', '0.95')
    .option('--sided <s>', 'two | upper | lower', 'two')
    .option('--json', 'print one JSON object')
    .action(proportion);
}
