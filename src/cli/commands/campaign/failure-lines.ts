/**
 * The Failures section of a unit's formal rows for `imep campaign status` (nothing when no row failed, or before the
 * formal run wrote any): the error text of failed rows on the terminal, not only inside rows/rows.jsonl.
 */
import { failureSectionLines, failureSummary, readRows, unitPaths } from '../../../evidence/index.js';

export async function unitFailureLines(unitDir: string): Promise<string[]> {
  const rows = await readRows(unitPaths(unitDir).rows).then(
    (r) => r.rows,
    () => [],
  );
  return failureSectionLines(failureSummary(rows));
}
