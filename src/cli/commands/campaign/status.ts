/**
 * `imep campaign status UNIT [--json]`: state, next command, rows done/planned, runs, integrity, adjudication
 * and every amendment.
 */
import type { Command } from 'commander';
import { formatStatus, unitStatus } from '../../../evidence/index.js';
import { unitFailureLines } from './failure-lines.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';

async function status(unit: string, o: { json?: boolean }): Promise<void> {
  const dir = await unitArg(unit);
  const s = await unitStatus(dir);
  out(o.json ? JSON.stringify(s, null, 2) : [formatStatus(s), ...(await unitFailureLines(dir))].join('\n'));
}

export function registerStatus(group: Command): void {
  group
    .command('status')
    .description('state, next command, rows done/planned, runs, integrity, adjudication and every amendment')
    .argument('<unit>', 'the unit folder')
    .option('--json', 'print the summary as JSON')
    .action(status);
}
