/**
 * The paper's published numbers, recomputed: each row names the study, the quantity, the value as
 * printed in the paper, and the value IMEP computes from the published counts, formatted to the same
 * precision. `imep stats demo` prints these rows; a row matches when the two strings agree.
 * Pure (no I/O); the CLI prints.
 */
import {
  clopperPearson,
  conditionalThetaBound,
  decisionBound,
  holm,
  mcnemarExact,
  tango,
  wilson,
} from '../stats/index.js';

export type ReproductionStatus = 'match' | 'known-difference' | 'differs';

export interface ReproductionRow {
  readonly study: string;
  readonly quantity: string;
  readonly printed: string;
  readonly computed: string;
  readonly status: ReproductionStatus;
  /** Why a known difference differs (checked against an independent implementation). */
  readonly note?: string;
}

/**
 * Printed values that IMEP does not reproduce, each investigated and explained. A row is only
 * 'known-difference' when its computed value equals the one recorded here; any other value is 'differs'.
 */
const KNOWN_DIFFERENCES: Readonly<Record<string, { computed: string; note: string }>> = {
  'version conflict, structured − comparator|Tango 90% (pp)': {
    computed: '[-6.90, -0.95]',
    note:
      'raw lower end −6.8955 pp; an independent Python implementation (scripts/reference/tango_reference.py) agrees to 1e-14. ' +
      'The 95% interval and the 90% upper end reproduce exactly; z = 1.645 moves the end only to −6.8957. Unexplained in the paper.',
  },
};

const fixed = (digits: number) => (x: number) => x.toFixed(digits);
const ppFixed = (digits: number) => (x: number) => (100 * x).toFixed(digits);
const ppInterval = (digits: number) => (lo: number, hi: number) =>
  `[${(100 * lo).toFixed(digits)}, ${(100 * hi).toFixed(digits)}]`;
const interval = (digits: number) => (lo: number, hi: number) => `[${lo.toFixed(digits)}, ${hi.toFixed(digits)}]`;
const sig4 = (x: number) => String(Number(x.toPrecision(3)) === x ? x : Number(x.toFixed(4)));

function row(study: string, quantity: string, printed: string, computed: string): ReproductionRow {
  if (printed === computed) return { study, quantity, printed, computed, status: 'match' };
  const known = KNOWN_DIFFERENCES[`${study}|${quantity}`];
  if (known && known.computed === computed)
    return { study, quantity, printed, computed, status: 'known-difference', note: known.note };
  return { study, quantity, printed, computed, status: 'differs' };
}

export function paperReproductionRows(): ReproductionRow[] {
  const ub = (b: number, c: number, n: number, alpha = 0.05) => decisionBound(b, c, n, alpha);
  const rows: ReproductionRow[] = [
    row('Shell Game blackout, reads (b=9, c=1)', 'exact McNemar p', '0.0215', fixed(4)(mcnemarExact(9, 1))),
    row(
      'Shell Game blackout, reads (b=9, c=1, n=200)',
      'decision UB on D (pp, ≥90%)',
      '7.70',
      ppFixed(2)(ub(9, 1, 200).upper),
    ),
    row(
      'Q2-XA read ablation, attempt 1 (b=3, c=4, n=200)',
      'decision UB on D (pp)',
      '3.14',
      ppFixed(2)(ub(3, 4, 200).upper),
    ),
    row(
      'Q2-XA read ablation, attempt 2 (b=3, c=2, n=200)',
      'decision UB on D (pp)',
      '3.65',
      ppFixed(2)(ub(3, 2, 200).upper),
    ),
    row(
      'E0 full view, records kept vs cleared (b=3, c=3, n=200)',
      'decision UB on D (pp)',
      '3.42',
      ppFixed(2)(ub(3, 3, 200).upper),
    ),
    row('E2-W0 persistent path (b=2, c=2, n=200)', 'decision UB on D (pp)', '2.94', ppFixed(2)(ub(2, 2, 200).upper)),
    row(
      'bootstrap collapse example (b=0, c=0, n=200)',
      'decision UB on D (pp)',
      '1.49',
      ppFixed(2)(ub(0, 0, 200).upper),
    ),
    row(
      'E2-W0 persistent path (b=2, c=2, n=200)',
      'Tango 95% (pp)',
      '[-2.69, 2.69]',
      ppInterval(2)(...tango(2, 2, 200, 0.95).interval),
    ),
    row(
      'GRID-1a, α=0.025 per component (b=13, c=6, n=72)',
      'decision interval on D (pp)',
      '[-7.28, 25.77]',
      ppInterval(2)(ub(13, 6, 72, 0.025).lower, ub(13, 6, 72, 0.025).upper),
    ),
    row(
      'GRID-1a, α=0.025 per component (b=13, c=6, n=96)',
      'decision interval on D (pp)',
      '[-5.70, 19.72]',
      ppInterval(2)(ub(13, 6, 96, 0.025).lower, ub(13, 6, 96, 0.025).upper),
    ),
    row('GRID-1a (b=13, c=6)', 'exact McNemar p', '0.1671', fixed(4)(mcnemarExact(13, 6))),
    row('version conflict, 690 pairs (91 vs 64)', 'exact McNemar p', '0.036', fixed(3)(mcnemarExact(91, 64))),
    row(
      'version conflict, structured − comparator',
      'Tango 90% (pp)',
      '[-6.91, -0.95]',
      ppInterval(2)(...negate(tango(91, 64, 690, 0.9).interval)),
    ),
    row(
      'version conflict, structured − comparator',
      'Tango 95% (pp)',
      '[-7.48, -0.38]',
      ppInterval(2)(...negate(tango(91, 64, 690, 0.95).interval)),
    ),
    row('E0 (b=3, c=3)', 'exact McNemar p', '1.0', fixed(1)(mcnemarExact(3, 3))),
    row(
      'blackout ladder, released (b′=7, c′=5)',
      'exact one-sided McNemar p',
      '0.387',
      fixed(3)(mcnemarExact(7, 5, 'greater')),
    ),
    row(
      'blackout ladder, structured (b′=6, c′=2)',
      'exact one-sided McNemar p',
      '0.145',
      fixed(3)(mcnemarExact(6, 2, 'greater')),
    ),
    row(
      'blackout ladder, released (b′=7, c′=5, n=400)',
      'θ̂ (pp)',
      '0.50',
      ppFixed(2)(conditionalThetaBound(7, 5, 400).estimate),
    ),
    row(
      'view removal 2×2, view visible + reads',
      'Wilson 95%',
      '[0.898, 0.965]',
      interval(3)(...wilson(188, 200, 0.95)),
    ),
    row('view removal 2×2, blackout + reads', 'Wilson 95%', '[0.670, 0.791]', interval(3)(...wilson(147, 200, 0.95))),
    row(
      'Fractal payload substitution (21/200)',
      'Clopper–Pearson 95% upper (%)',
      '15.6',
      ppFixed(1)(clopperPearson(21, 200, 0.95)[1]),
    ),
    row(
      'first-visit diagnostic A_W0 (78/172)',
      'Clopper–Pearson 95%',
      '[0.378, 0.531]',
      interval(3)(...clopperPearson(78, 172, 0.95)),
    ),
    row(
      'ChainBench full memory (202/202)',
      'Clopper–Pearson 95%',
      '[0.982, 1.000]',
      interval(3)(...clopperPearson(202, 202, 0.95)),
    ),
    row(
      'Fractal 12 cells, ρ (21/300)',
      'Clopper–Pearson 95% (%)',
      '[4.4, 10.5]',
      ppInterval(1)(...clopperPearson(21, 300, 0.95)),
    ),
    row(
      'Holm example',
      'adjusted (0.01, 0.04, 0.03, 0.005)',
      '0.03, 0.06, 0.06, 0.02',
      holm([0.01, 0.04, 0.03, 0.005]).map(sig4).join(', '),
    ),
  ];
  return rows;
}

function negate(iv: readonly [number, number]): [number, number] {
  return [-iv[1], -iv[0]];
}
