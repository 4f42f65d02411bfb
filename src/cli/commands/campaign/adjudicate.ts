/**
 * `imep campaign adjudicate UNIT [--allow-same-operator REASON]`: apply the frozen decision rules to the sealed
 * rows (by a session other than the one that ran them).
 */
import type { Command } from 'commander';
import { adjudicateStep } from '../../../app/index.js';
import { adjudicationLines, foundLine } from '../../../adjudication/index.js';
import { currentOperator } from '../../../evidence/index.js';
import { recordSeen, refuseSeenRollback } from '../../seen-guard.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';

async function adjudicate(unit: string, o: { allowSameOperator?: string }): Promise<void> {
  const dir = await unitArg(unit);
  await refuseSeenRollback(dir);
  const a = await adjudicateStep(dir, {
    operator: currentOperator(),
    ...(o.allowSameOperator === undefined ? {} : { allowSameOperator: { reason: o.allowSameOperator } }),
  });
  await recordSeen(dir, 'adjudicate');
  out(`adjudicated ${dir}: ${a.file} (${a.adjudication.goNoGo.status})`);
  for (const l of adjudicationLines(a.adjudication, a.protocol)) out(l);
  out(foundLine(a.adjudication));
  out(`next: imep campaign cross-check ${dir}`);
}

export function registerAdjudicate(group: Command): void {
  group
    .command('adjudicate')
    .description('apply the frozen decision rules to the sealed rows (by a session other than the one that ran them)')
    .argument('<unit>', 'the unit folder')
    .option(
      '--allow-same-operator <reason>',
      'allow the operator who ran the conditions to adjudicate; the reason is recorded',
    )
    .action(adjudicate);
}
