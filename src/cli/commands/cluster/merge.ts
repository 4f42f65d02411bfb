/**
 * `imep cluster merge UNIT`: every shard complete and from this campaign → the rows in seq order into the formal
 * run → seal. src/cluster is imported when the command runs.
 */
import type { Command } from 'commander';
import { out } from './shared.js';

export function registerMerge(group: Command): void {
  group
    .command('merge')
    .description(
      'refused until every shard is complete and from this campaign; then the rows in seq order into the formal run, and seal',
    )
    .argument('<unit>', 'the unit folder')
    .action(async (unit: string) => {
      const { mergeCluster } = await import('../../../cluster/index.js');
      await mergeCluster(unit, { say: out });
    });
}
