/**
 * What `imep campaign probe` and `imep campaign smoke` share (probe.ts, smoke.ts register one each):
 * `imep campaign probe|smoke FILE --n K [--campaigns-dir D] [--batch B]` — a run of the first K units of
 * every condition, stored apart from the formal evidence; prints what it found, and exits non-zero when the
 * small run failed.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { smallRunCampaign } from '../../../campaign/index.js';
import { refuseFailedSmallRun, smallRunSummary } from './small-run-summary.js';
import { batchOpt, dirOpt, options, out, positiveN, type CommonOpts } from './options.js';

export type SmallRunKind = 'probe' | 'smoke';

async function smallRun(kind: SmallRunKind, file: string, o: CommonOpts & { n: string }): Promise<void> {
  const folder = await smallRunCampaign(file, kind, positiveN(o.n), options(o));
  // what it found, on stdout (descriptive: small runs are never adjudicated)
  out(await smallRunSummary(join(folder, 'rows.jsonl')));
  await refuseFailedSmallRun(join(folder, 'rows.jsonl'), kind);
}

export function registerSmallRun(group: Command, kind: SmallRunKind): void {
  group
    .command(kind)
    .description(`a ${kind} run of the first K units of every condition, stored apart from the formal evidence`)
    .argument('<file>', 'the protocol file (YAML)')
    .requiredOption('--n <k>', 'units per condition and task')
    .option(...dirOpt)
    .option(...batchOpt)
    .action((file: string, o: CommonOpts & { n: string }) => smallRun(kind, file, o));
}
