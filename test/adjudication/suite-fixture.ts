/**
 * A sealed lite suite unit (test/protocol/suite-protocols.ts: lite-memory's three tasks, one wave A, N_blk, C,
 * n = 8 per task, a per-task p-below criterion in a Holm family) with known counts: A succeeds on every unit, C
 * replicates A, N_blk fails the first B units of each task — B = 6 on ShellGameTouch, 5 on RememberColor3, 0 on
 * RememberColor5 (c = 0 everywhere).
 */
import { parse } from 'yaml';
import type { ProtocolInput } from '../../src/protocol/index.js';
import { liteSuiteYaml } from '../protocol/suite-protocols.js';
import type { EpisodeContext, RowSpec } from './fixtures.js';

export const SUITE_B = [6, 5, 0] as const;

export const suiteInput = (extra?: string): ProtocolInput =>
  parse(liteSuiteYaml(extra === undefined ? {} : { extra })) as ProtocolInput;

/** A hard competence gate (A at least half the time in each task; a task below it is excluded). */
export const COMPETENCE =
  'gates:\n  - { id: competence, kind: competence, condition: A, minSuccess: 0.5, hard: true, onFail: exclude }\n';

export function suiteOutcome(ctx: EpisodeContext): RowSpec {
  if (ctx.ep.condition !== 'N_blk') return { success: true };
  return { success: ctx.i >= (SUITE_B[ctx.taskIndex] ?? 0) };
}
