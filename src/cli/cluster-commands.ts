/**
 * `imep cluster …`: a precommitted unit → N shards as one SLURM array job → merged, sealed unit.
 * Thin: parses, calls src/cluster, prints.
 *
 *   imep cluster plan UNIT --shards N          the split by unit, recorded in UNIT/cluster/shards.json
 *   imep cluster submit UNIT --shards N [--partition P] [--gpus-per-task G] [--cpus-per-task C]
 *                        [--time T] [--batch B] [--dry-run]
 *                                              sbatch an array (one task per shard not done and not queued)
 *   imep cluster status UNIT [--json]          per shard: pending / running / done / failed, rows
 *   imep cluster merge UNIT                    every shard complete → formal run in seq order → seal
 *   imep cluster shard-run UNIT --shard I/N [--batch B]   what one array task runs
 *
 * UNIT is a unit folder made by `imep campaign precommit FILE`. Refusals: one line, non-zero exit.
 *
 * Each subcommand imports its module when it runs: every array task and the merge is a fresh process, and
 * `merge`, `status`, `plan` and `submit` need none of the policy runtime, simulators and bridge modules
 * that `shard-run` loads (hundreds of files, a few tenths of a second of start-up each time).
 */
import { asTyped, ImepError } from '../core/index.js';
import type { Command } from 'commander';
import { parseShard } from '../protocol/index.js';
import type { EnvProvider } from '../campaign/index.js';
import { parseCount } from './args.js';

/** What tests may inject (the production CLI passes nothing). */
export interface ClusterDeps {
  /** Environments of shard runs (tests slow episodes down to catch a task mid-run). */
  readonly envs?: EnvProvider;
  /** argv prefix SLURM tasks run the CLI with (default: this node + this package's CLI). */
  readonly launcher?: readonly string[];
}

function out(line: string): void {
  process.stdout.write(`${asTyped(line)}\n`);
}

function positive(flag: string, raw: string): number {
  const n = parseCount(flag, raw);
  if (n < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: flag });
  return n;
}

export function registerCluster(group: Command, deps: ClusterDeps = {}): void {
  group
    .command('plan')
    .description(
      'split a precommitted unit into N shards by unit (a task–seed scope with all its conditions and attempts, never split); records cluster/shards.json',
    )
    .argument('<unit>', 'the unit folder')
    .requiredOption('--shards <n>', 'number of shards (at most the number of units)')
    .action(async (unit: string, o: { shards: string }) => {
      const { formatPlan, planCluster } = await import('../cluster/index.js');
      for (const line of formatPlan(await planCluster(unit, positive('--shards', o.shards)))) out(line);
    });

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
    .action(
      async (
        unit: string,
        o: {
          shards: string;
          partition?: string;
          gpusPerTask: string;
          cpusPerTask: string;
          time?: string;
          batch?: string;
          dryRun?: boolean;
        },
      ) => {
        const { submitCluster } = await import('../cluster/index.js');
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
      },
    );

  group
    .command('status')
    .description(
      'per shard: pending / running / done / failed and its durable rows (squeue, sacct where accounting exists, and the shard files)',
    )
    .argument('<unit>', 'the unit folder')
    .option('--json', 'print the status as JSON')
    .action(async (unit: string, o: { json?: boolean }) => {
      const { clusterStatus, formatClusterStatus } = await import('../cluster/index.js');
      const s = await clusterStatus(unit);
      if (o.json) out(JSON.stringify(s, null, 2));
      else for (const line of formatClusterStatus(s)) out(line);
    });

  group
    .command('merge')
    .description(
      'refused until every shard is complete and from this campaign; then the rows in seq order into the formal run, and seal',
    )
    .argument('<unit>', 'the unit folder')
    .action(async (unit: string) => {
      const { mergeCluster } = await import('../cluster/index.js');
      await mergeCluster(unit, { say: out });
    });

  group
    .command('shard-run')
    .description(
      "run shard I of N of a unit (what each SLURM array task runs); resumes after the shard's last durable row",
    )
    .argument('<unit>', 'the unit folder')
    .requiredOption('--shard <i/N>', 'the shard (0-based), e.g. "$SLURM_ARRAY_TASK_ID/4"')
    .option('--batch <n>', 'episodes stepped together through the policy')
    .action(async (unit: string, o: { shard: string; batch?: string }) => {
      const spec = parseShard(o.shard);
      const { runShardOfUnit } = await import('../cluster/shard-run.js');
      await runShardOfUnit(unit, spec, {
        say: out,
        ...(o.batch === undefined ? {} : { batchSize: positive('--batch', o.batch) }),
        ...(deps.envs === undefined ? {} : { envs: deps.envs }),
      });
    });
}
