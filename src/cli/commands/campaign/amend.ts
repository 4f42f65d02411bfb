/** `imep campaign amend UNIT --text T [--affects F,…]`: append an amendment (never edits the frozen protocol). */
import type { Command } from 'commander';
import { amend } from '../../../evidence/index.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';

async function amendUnit(unit: string, o: { text: string; affects: string }): Promise<void> {
  const dir = await unitArg(unit);
  const a = await amend(dir, {
    text: o.text,
    affects: o.affects
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f !== ''),
  });
  out(`amendment ${a.id} [${a.classification}] recorded in ${dir}`);
}

export function registerAmend(group: Command): void {
  group
    .command('amend')
    .description('append an amendment to the unit (never edits the frozen protocol)')
    .argument('<unit>', 'the unit folder')
    .requiredOption('--text <text>', 'what changes and why')
    .option('--affects <fields>', 'comma-separated protocol fields the amendment affects', 'protocol')
    .action(amendUnit);
}
