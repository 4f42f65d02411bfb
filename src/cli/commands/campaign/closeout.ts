/** `imep campaign closeout UNIT`: bind the seal, amendments and adjudication records under one closeout manifest. */
import type { Command } from 'commander';
import { closeoutStep } from '../../../app/index.js';
import { currentOperator } from '../../../evidence/index.js';
import { recordSeen, refuseSeenRollback } from '../../seen-guard.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';

async function closeout(unit: string): Promise<void> {
  const dir = await unitArg(unit);
  await refuseSeenRollback(dir);
  const r = await closeoutStep(dir, { operator: currentOperator() });
  await recordSeen(dir, 'closeout');
  out(`closed out ${dir}: Merkle root ${r.merkle.root}`);
  out(`next: imep campaign verify ${dir}`);
}

export function registerCloseout(group: Command): void {
  group
    .command('closeout')
    .description('bind the seal, amendments and adjudication records under one closeout manifest')
    .argument('<unit>', 'the unit folder')
    .action(closeout);
}
