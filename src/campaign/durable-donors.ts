/** Resume and the donor pre-pass: the durable donor-assignment lines, and the check a resumed segment must pass. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson, ImepError } from '../core/index.js';
import { readJsonLines } from '../evidence/index.js';

/**
 * The donor-assignment trace lines of a resumed run or shard (`traces/donors.jsonl` in `tracesDir`), canonical JSON
 * by seq; complete lines only (a torn tail is cut before the run resumes).
 */
export async function readDurableDonors(tracesDir: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const file = join(tracesDir, 'donors.jsonl');
  if (!existsSync(file)) return out;
  for (const line of (await readJsonLines(file)).lines) {
    const seq = (line as { seq?: unknown } | null)?.seq;
    if (typeof seq === 'number') out.set(seq, canonicalJson(line));
  }
  return out;
}

/** Refuses a resumed segment whose recomputed donor assignment is not the one its durable rows were run with. */
export function assertSameDonors(
  durable: string | undefined,
  entry: Readonly<Record<string, unknown>>,
  seg: { wave: number; condition: string; task: string },
): void {
  if (durable === canonicalJson(entry)) return;
  const what = `the donor assignment of wave ${seg.wave} × ${seg.condition} × ${seg.task} (first row ${String(entry['seq'])})`;
  throw new ImepError(
    'E_OUT_OF_ORDER',
    durable === undefined
      ? `${what} is missing from traces/donors.jsonl although the segment's first row is durable`
      : `${what}, recomputed by this run's donor pre-pass, differs from the one in traces/donors.jsonl that the durable rows were run with (a unit's pre-pass failed in one of the two runs): resuming would build the later rows on another assignment; nothing was written`,
    {
      file: 'traces/donors.jsonl',
      hint: 'start the run again: `imep campaign fail-run UNIT --reason …` for a formal run (a shard: remove its folder UNIT.shards/shard-I-of-N), then run it',
    },
  );
}
