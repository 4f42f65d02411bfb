/**
 * `imep stats demo [--json]`: recompute the paper's published numbers and show them beside the printed values;
 * exit 1 when a row differs without an explanation.
 */
import type { Command } from 'commander';
import { paperReproductionRows, textTable } from '../../../report/index.js';

type Row = ReturnType<typeof paperReproductionRows>[number];

const MARK = { match: 'ok', 'known-difference': 'known (see below)', differs: 'DIFFERS' } as const;

function demoText(rows: readonly Row[], matched: number, known: readonly Row[]): string {
  const notes = known.map(
    (r) => `  * ${r.study}, ${r.quantity}: paper ${r.printed}, IMEP ${r.computed} — ${r.note ?? ''}`,
  );
  return (
    `${textTable(
      [
        ['study', 'quantity', 'paper', 'IMEP', ''],
        ...rows.map((r) => [r.study, r.quantity, r.printed, r.computed, MARK[r.status]]),
      ],
      ['l', 'l', 'r', 'r', 'l'],
    )}\n\n${matched}/${rows.length} published values reproduced from their published counts` +
    (known.length > 0 ? `; ${known.length} known difference(s):\n${notes.join('\n')}\n` : '.\n')
  );
}

/** Prints the paper-reproduction table; returns false when any row differs without an explanation. */
export function runStatsDemo(json: boolean): boolean {
  const rows = paperReproductionRows();
  const matched = rows.filter((r) => r.status === 'match').length;
  const known = rows.filter((r) => r.status === 'known-difference');
  const ok = rows.every((r) => r.status !== 'differs');
  process.stdout.write(
    json
      ? `${JSON.stringify({ matched, knownDifferences: known.length, total: rows.length, rows }, null, 2)}\n`
      : demoText(rows, matched, known),
  );
  return ok;
}

export function registerDemo(group: Command): void {
  group
    .command('demo')
    .description("recompute the paper's published numbers and show them beside the printed values")
    .option('--json', 'print the rows as JSON')
    .action((o: { json?: boolean }) => {
      const ok = runStatsDemo(Boolean(o.json));
      if (!ok) process.exitCode = 1;
    });
}
