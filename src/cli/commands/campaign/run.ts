/**
 * `imep campaign run FILE [--through seal|closeout] [--same-operator-reason T] [--campaigns-dir D] [--batch B]
 * [--servers K] [--shard i/N] [--allow-large-plan]`: precommit (if new), run every planned episode, seal;
 * resumes an interrupted run; a sealed unit prints its status. Ctrl-C (SIGINT) or SIGTERM stops the run cleanly: it
 * prints the rows durable and the command that resumes (exit 130; src/cli/interrupt.ts).
 */
import type { Command } from 'commander';
import { runThrough } from '../../../app/index.js';
import { parseShard } from '../../../campaign/index.js';
import { recordSeen } from '../../seen-guard.js';
import { withInterrupts } from '../../interrupt.js';
import {
  batchOpt,
  dirOpt,
  largeOpt,
  options,
  parseThrough,
  reasonOf,
  reasonOpt,
  serversOpt,
  type CommonOpts,
} from './options.js';

type RunOpts = CommonOpts & { through: string; shard?: string; sameOperatorReason?: string };

async function run(file: string, o: RunOpts): Promise<void> {
  const through = parseThrough(o.through);
  const dir = await withInterrupts((stop) =>
    runThrough(file, {
      ...options(o),
      through,
      ...reasonOf(o),
      ...(o.shard === undefined ? {} : { shard: parseShard(o.shard) }),
      stop,
    }),
  );
  await recordSeen(dir, 'run');
}

export function registerRun(group: Command): void {
  group
    .command('run')
    .description(
      'precommit (if new), run every planned episode, seal; resumes an interrupted run; a sealed unit prints its status',
    )
    .argument('<file>', 'the protocol file (YAML)')
    .option(
      '--through <stage>',
      'stop after: seal | closeout (adjudicate as this operator with --same-operator-reason, cross-check, close out, report)',
      'seal',
    )
    .option(...reasonOpt)
    .option(...dirOpt)
    .option(...batchOpt)
    .option(...serversOpt)
    .option(
      '--shard <i/N>',
      'run only shard i of N (0-based; by unit) into <unit>.shards/ — merged by the cluster layer',
    )
    .option(...largeOpt)
    .action(run);
}
