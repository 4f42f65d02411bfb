/**
 * `imep cluster shard-run UNIT --shard I/N [--batch B]`: what one SLURM array task runs; resumes after the
 * shard's last durable row. The policy runtime, simulators and bridge (cluster/shard-run.ts) are imported when
 * the command runs.
 */
import type { Command } from 'commander';
import { parseShard } from '../../../protocol/index.js';
import { out, positive, type ClusterDeps } from './shared.js';

async function shardRun(unit: string, o: { shard: string; batch?: string }, deps: ClusterDeps): Promise<void> {
  const spec = parseShard(o.shard);
  const { runShardOfUnit } = await import('../../../cluster/index.js');
  await runShardOfUnit(unit, spec, {
    say: out,
    ...(o.batch === undefined ? {} : { batchSize: positive('--batch', o.batch) }),
    ...(deps.envs === undefined ? {} : { envs: deps.envs }),
  });
}

export function registerShardRun(group: Command, deps: ClusterDeps = {}): void {
  group
    .command('shard-run')
    .description(
      "run shard I of N of a unit (what each SLURM array task runs); resumes after the shard's last durable row",
    )
    .argument('<unit>', 'the unit folder')
    .requiredOption('--shard <i/N>', 'the shard (0-based), e.g. "$SLURM_ARRAY_TASK_ID/4"')
    .option('--batch <n>', 'episodes stepped together through the policy')
    .action((unit: string, o: { shard: string; batch?: string }) => shardRun(unit, o, deps));
}
