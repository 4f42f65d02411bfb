/** `imep campaign cross-check UNIT`: independent re-computation of the adjudication. */
import type { Command } from 'commander';
import { crossCheckStep } from '../../../app/index.js';
import { currentOperator } from '../../../evidence/index.js';
import { refuseSeenRollback } from '../../seen-guard.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';

async function crossCheck(unit: string): Promise<void> {
  const dir = await unitArg(unit);
  await refuseSeenRollback(dir);
  const x = await crossCheckStep(dir, { operator: currentOperator() });
  out(`cross-checked ${dir}: ${x.outcome}`);
  out(`next: imep campaign closeout ${dir}`);
}

export function registerCrossCheck(group: Command): void {
  group
    .command('cross-check')
    .description('independent re-computation of the adjudication')
    .argument('<unit>', 'the unit folder')
    .action(crossCheck);
}
