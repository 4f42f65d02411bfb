/**
 * `imep cluster plan UNIT --shards N`: split a precommitted unit into N shards by unit, recorded in
 * UNIT/cluster/shards.json. src/cluster is imported when the command runs.
 */
import type { Command } from 'commander';
import { out, positive } from './shared.js';

export function registerPlan(group: Command): void {
  group
    .command('plan')
    .description(
      'split a precommitted unit into N shards by unit (a task–seed scope with all its conditions and attempts, never split); records cluster/shards.json',
    )
    .argument('<unit>', 'the unit folder')
    .requiredOption('--shards <n>', 'number of shards (at most the number of units)')
    .action(async (unit: string, o: { shards: string }) => {
      const { formatPlan, planCluster } = await import('../../../cluster/index.js');
      for (const line of formatPlan(await planCluster(unit, positive('--shards', o.shards)))) out(line);
    });
}
