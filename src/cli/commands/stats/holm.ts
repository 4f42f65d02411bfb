/**
 * `imep stats holm P… [--json]`: Holm step-down adjusted p-values of one frozen family; 'unavailable' slots
 * enter at p = 1.
 */
import type { Command } from 'commander';
import { holm, type MaybePValue } from '../../../stats/index.js';
import { textTable } from '../../../report/index.js';
import { parseProbability } from '../../args.js';
import { emit } from './shared.js';

function holmAdjusted(ps: string[], o: { json?: boolean }): void {
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
}

export function registerHolm(group: Command): void {
  group
    .command('holm')
    .description("Holm step-down adjusted p-values of one frozen family; 'unavailable' slots enter at p = 1")
    .argument('<p...>', "p-values in family order (a slot may be 'unavailable')")
    .option('--json', 'print one JSON object')
    .action(holmAdjusted);
}
