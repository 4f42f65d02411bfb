/**
 * `imep campaign fail-run UNIT --reason TEXT`: give up a unit's formal run; its rows and traces move to
 * failed-runs/<run>/ (kept, never deleted) and the unit is precommitted again.
 */
import type { Command } from 'commander';
import { failRun, lockUnit } from '../../../evidence/index.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';

async function failTheRun(unit: string, o: { reason: string }): Promise<void> {
  const dir = await unitArg(unit);
  const lock = await lockUnit(dir);
  try {
    const target = await failRun(dir, { reason: o.reason });
    out(`failed the run of ${dir}: its rows and traces are in ${target}`);
    out(`next: imep campaign resume ${dir} (starts a new formal run from the frozen protocol)`);
  } finally {
    await lock.release();
  }
}

export function registerFailRun(group: Command): void {
  group
    .command('fail-run')
    .description(
      "give up a unit's formal run: its rows and traces move to failed-runs/<run>/ (kept, never deleted), the unit is precommitted again",
    )
    .argument('<unit>', 'the unit folder')
    .requiredOption('--reason <text>', 'why (recorded in failed-runs/<run>/failure.json)')
    .action(failTheRun);
}
