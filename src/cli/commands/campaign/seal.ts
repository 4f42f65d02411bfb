/** `imep campaign seal UNIT`: seal a run-complete unit (SHA-256 manifest of every file and its Merkle root). */
import type { Command } from 'commander';
import { seal } from '../../../evidence/index.js';
import { recordSeen } from '../../seen-guard.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';

async function sealUnit(unit: string): Promise<void> {
  const dir = await unitArg(unit);
  const r = await seal(dir);
  await recordSeen(dir, 'seal');
  out(`sealed ${dir}: ${r.record.files.length} files, Merkle root ${r.record.merkle.root}`);
  out(`next: imep campaign adjudicate ${dir}`);
}

export function registerSeal(group: Command): void {
  group
    .command('seal')
    .description('seal a run-complete unit: SHA-256 manifest of every file and its Merkle root')
    .argument('<unit>', 'the unit folder')
    .action(sealUnit);
}
