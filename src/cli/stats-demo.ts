import { paperReproductionRows, textTable } from '../report/index.js';

/** Prints the paper-reproduction table; returns false when any row differs without an explanation. */
export function runStatsDemo(json: boolean): boolean {
  const rows = paperReproductionRows();
  const matched = rows.filter((r) => r.status === 'match').length;
  const known = rows.filter((r) => r.status === 'known-difference');
  const ok = rows.every((r) => r.status !== 'differs');
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ matched, knownDifferences: known.length, total: rows.length, rows }, null, 2)}\n`,
    );
    return ok;
  }
  const mark = { match: 'ok', 'known-difference': 'known (see below)', differs: 'DIFFERS' } as const;
  const notes = known.map(
    (r) => `  * ${r.study}, ${r.quantity}: paper ${r.printed}, IMEP ${r.computed} — ${r.note ?? ''}`,
  );
  process.stdout.write(
    `${textTable(
      [
        ['study', 'quantity', 'paper', 'IMEP', ''],
        ...rows.map((r) => [r.study, r.quantity, r.printed, r.computed, mark[r.status]]),
      ],
      ['l', 'l', 'r', 'r', 'l'],
    )}\n\n${matched}/${rows.length} published values reproduced from their published counts` +
      (known.length > 0 ? `; ${known.length} known difference(s):\n${notes.join('\n')}\n` : '.\n'),
  );
  return ok;
}
