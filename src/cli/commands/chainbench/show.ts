/**
 * `imep chainbench show UNIT [--json]`: verify a sealed decisions or replay unit and print its summary,
 * computed from its rows.
 */
import type { Command } from 'commander';
import { ImepError } from '../../../core/index.js';
import { readUnitState, loadFrozenProtocol, assertUnitIntact } from '../../../evidence/index.js';
import { readDecisionUnit, DECISIONS_UNIT_KIND } from '../../../chainbench/decision-unit.js';
import { readReplayUnit, REPLAY_UNIT_KIND } from '../../../chainbench/replay-unit.js';
import { out } from './args.js';
import { decisionSummaryOf } from './decision-summary.js';
import { replaySummaryOf } from './replay-summary.js';

async function show(dir: string, o: { json?: boolean }): Promise<void> {
  await readUnitState(dir);
  await assertUnitIntact(dir); // before anything in it is read (refuses an unsealed unit too)
  const kind = ((await loadFrozenProtocol(dir)).protocol as { kind?: unknown } | null)?.kind;
  if (kind === DECISIONS_UNIT_KIND) return out(decisionSummaryOf(await readDecisionUnit(dir, 'unit'), o.json === true));
  if (kind === REPLAY_UNIT_KIND) return out(replaySummaryOf(await readReplayUnit(dir, 'unit'), o.json === true));
  throw new ImepError('E_USAGE', `not a ChainBench unit (protocol kind ${JSON.stringify(kind ?? null)})`, {
    file: dir,
    hint: 'campaign units are shown with `imep campaign status`',
  });
}

export function registerShow(group: Command): void {
  group
    .command('show')
    .description('verify a sealed decisions or replay unit and print its summary, computed from its rows')
    .argument('<unit>', 'the unit folder')
    .option('--json', 'print one JSON object')
    .action(show);
}
