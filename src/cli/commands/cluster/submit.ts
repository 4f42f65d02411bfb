/**
 * `imep cluster submit UNIT --shards N [--partition P] [--gpus-per-task G] [--cpus-per-task C] [--time T]
 * [--batch B] [--dry-run]`: sbatch one array (one task per shard not done and not queued); --dry-run prints the
 * script. src/cluster is imported when the command runs.
 */
import type { Command } from 'commander';
import { parseCount } from '../../args.js';
import { out, positive, type ClusterDeps } from './shared.js';

interface SubmitOpts {
  shards: string;
  partition?: string;
  gpusPerTask: string;
  cpusPerTask: string;
  time?: string;
  batch?: string;
  dryRun?: boolean;
}

async function submit(unit: string, o: SubmitOpts, deps: ClusterDeps): Promise<void> {
  const { submitCluster } = await import('../../../cluster/index.js');
  await submitCluster(unit, {
    count: positive('--shards', o.shards),
    partition: o.partition ?? null,
    gpusPerTask: parseCount('--gpus-per-task', o.gpusPerTask),
    cpusPerTask: positive('--cpus-per-task', o.cpusPerTask),
    time: o.time ?? null,
    batch: o.batch === undefined ? null : positive('--batch', o.batch),
    dryRun: o.dryRun === true,
    say: out,
    ...(deps.launcher === undefined ? {} : { launcher: deps.launcher }),
  });
}

export function registerSubmit(group: Command, deps: ClusterDeps = {}): void {
  group
    .command('submit')
    .description(
      'submit the shards not done and not queued as one sbatch array (task I runs shard I/N); --dry-run prints the script',
    )
    .argument('<unit>', 'the unit folder')
    .requiredOption('--shards <n>', 'number of shards')
    .option('--partition <p>', 'SLURM partition')
    .option('--gpus-per-task <g>', 'GPUs per array task (--gres=gpu:G when G > 0)', '0')
    .option('--cpus-per-task <c>', 'CPUs per array task', '1')
    .option('--time <t>', 'time limit per task (minutes, HH:MM:SS or D-HH:MM:SS)')
    .option('--batch <n>', 'episodes stepped together through the policy in each shard (rows do not depend on it)')
    .option('--dry-run', 'print the sbatch script; write and submit nothing')
    .action((unit: string, o: SubmitOpts) => submit(unit, o, deps));
}
