/**
 * A unit's rows against its frozen plan: every line in the canonical form imep writes, and each row the planned
 * episode at its seq (seq, wave, condition, task, seed, attempt, scope, episode id). Resume and completion check
 * the whole rows file with it before a run goes on or is sealed, so a row edited, swapped or appended by hand
 * (canonical or not) is refused rather than adjudicated; the merge of shards checks each shard the same way.
 * Units whose plan lists no episodes (ChainBench decision units) are not campaign rows and are not checked here.
 */
import { readFile } from 'node:fs/promises';
import { canonicalJson, ImepError } from '../core/index.js';
import type { PlannedEpisode } from '../protocol/index.js';
import { ioError } from './io/atomic-write.js';
import { unitPaths } from './unit-layout.js';

/** The fields a row repeats from its planned episode. */
export const PLAN_FIELDS = ['seq', 'wave', 'condition', 'task', 'seed', 'attempt', 'scopeId', 'episodeId'] as const;

/** The first field in which `row` is not `planned` (no planned episode at its seq: 'seq'), or undefined. */
export function planMismatch(
  row: Readonly<Record<string, unknown>>,
  planned: PlannedEpisode | undefined,
): (typeof PLAN_FIELDS)[number] | undefined {
  if (planned === undefined) return 'seq';
  const p = planned as unknown as Readonly<Record<string, unknown>>;
  return PLAN_FIELDS.find((f) => row[f] !== p[f]);
}

/** The refusal for line `line` (1-based) of `file`, whose row is not its planned episode. */
export function notPlannedError(
  file: string,
  line: number,
  row: Readonly<Record<string, unknown>>,
  planned: PlannedEpisode | undefined,
  field: string,
): ImepError {
  const p = planned as unknown as Readonly<Record<string, unknown>> | undefined;
  return new ImepError(
    'E_UNIT_TAMPERED',
    `line ${line} (seq ${JSON.stringify(row['seq'])}) is not the planned episode: its ${field} is ${JSON.stringify(row[field])}, the plan's ${JSON.stringify(p?.[field])}`,
    {
      file,
      hint: 'rows are written by the runner only; restore the file from a copy, or fail the run (imep campaign fail-run) and run it again',
    },
  );
}

/**
 * The episodes of the unit's frozen plan (plan.json, whose hash the precommit record holds), or null when the
 * plan lists none: a unit of another kind (ChainBench's decision units) whose rows are not planned episodes.
 */
export async function frozenPlanEpisodes(dir: string): Promise<readonly PlannedEpisode[] | null> {
  const file = unitPaths(dir).plan;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw ioError(file, 'read the frozen plan', e, 'restore plan.json; it is frozen at precommit');
  }
  const plan = JSON.parse(text) as { episodes?: unknown } | null;
  const episodes = plan !== null && typeof plan === 'object' ? plan.episodes : undefined;
  return Array.isArray(episodes) ? (episodes as PlannedEpisode[]) : null;
}

/**
 * Checks every complete line of a unit's rows file (a torn tail, already repaired or refused by the caller, is
 * ignored): canonical form, then the planned episode at its seq. Throws E_UNIT_TAMPERED naming the file and line.
 */
export async function checkRowsAgainstPlan(file: string, episodes: readonly PlannedEpisode[] | null): Promise<void> {
  if (episodes === null) return;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return;
    throw ioError(file, 'read the rows', e);
  }
  const end = text.lastIndexOf('\n');
  if (end < 0) return;
  const lines = text.slice(0, end).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new ImepError('E_UNIT_TAMPERED', `line ${i + 1} is not valid JSON`, { file });
    }
    if (canonicalJson(row) !== line)
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `line ${i + 1} (seq ${JSON.stringify(row['seq'])}) is not in the canonical form imep writes`,
        { file },
      );
    const seq = row['seq'];
    const planned = typeof seq === 'number' && Number.isSafeInteger(seq) ? episodes[seq] : undefined;
    const off = planMismatch(row, planned);
    if (off !== undefined) throw notPlannedError(file, i + 1, row, planned, off);
  }
}
