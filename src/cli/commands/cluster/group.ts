/**
 * `imep cluster …`: a precommitted unit → N shards as one SLURM array job → merged, sealed unit. Wires one file
 * per subcommand, in the order `imep cluster --help` lists them:
 *
 *   imep cluster plan UNIT --shards N          the split by unit, recorded in UNIT/cluster/shards.json   plan.ts
 *   imep cluster submit UNIT --shards N [--partition P] [--gpus-per-task G] [--cpus-per-task C]          submit.ts
 *                        [--time T] [--batch B] [--dry-run]
 *                                              sbatch an array (one task per shard not done and not queued)
 *   imep cluster status UNIT [--json]          per shard: pending / running / done / failed, rows        status.ts
 *   imep cluster merge UNIT                    every shard complete → formal run in seq order → seal     merge.ts
 *   imep cluster shard-run UNIT --shard I/N [--batch B]   what one array task runs                        shard-run.ts
 *
 * UNIT is a unit folder made by `imep campaign precommit FILE`. Thin: parses, calls src/cluster, prints.
 * Refusals: one line, non-zero exit.
 *
 * Each subcommand imports its module when it runs: every array task and the merge is a fresh process, and
 * `merge`, `status`, `plan` and `submit` need none of the policy runtime, simulators and bridge modules
 * that `shard-run` loads (hundreds of files, a few tenths of a second of start-up each time).
 */
import type { Command } from 'commander';
import { registerMerge } from './merge.js';
import { registerPlan } from './plan.js';
import { registerShardRun } from './shard-run.js';
import type { ClusterDeps } from './shared.js';
import { registerStatus } from './status.js';
import { registerSubmit } from './submit.js';

export type { ClusterDeps } from './shared.js';

export function registerCluster(group: Command, deps: ClusterDeps = {}): void {
  registerPlan(group);
  registerSubmit(group, deps);
  registerStatus(group);
  registerMerge(group);
  registerShardRun(group, deps);
}
