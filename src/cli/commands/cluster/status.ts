/**
 * `imep cluster status UNIT [--json]`: per shard pending / running / done / failed and its durable rows.
 * src/cluster is imported when the command runs.
 */
import type { Command } from 'commander';
import { out } from './shared.js';

export function registerStatus(group: Command): void {
  group
    .command('status')
    .description(
      'per shard: pending / running / done / failed and its durable rows (squeue, sacct where accounting exists, and the shard files)',
    )
    .argument('<unit>', 'the unit folder')
    .option('--json', 'print the status as JSON')
    .action(async (unit: string, o: { json?: boolean }) => {
      const { clusterStatus, formatClusterStatus } = await import('../../../cluster/index.js');
      const s = await clusterStatus(unit);
      if (o.json) out(JSON.stringify(s, null, 2));
      else for (const line of formatClusterStatus(s)) out(line);
    });
}
