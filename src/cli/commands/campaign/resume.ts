/**
 * `imep campaign resume UNIT [--through seal|closeout] [--same-operator-reason T] [--batch B] [--servers K]`:
 * continue a unit's interrupted formal run (from its frozen protocol), then seal.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { resumeThrough } from '../../../app/index.js';
import { recordSeen } from '../../seen-guard.js';
import { withInterrupts } from '../../interrupt.js';
import { batchOpt, options, parseThrough, reasonOf, reasonOpt, serversOpt } from './options.js';
import { unitArg } from './unit-arg.js';

interface ResumeOpts {
  through: string;
  batch?: string;
  servers?: string;
  sameOperatorReason?: string;
}

async function resume(unit: string, o: ResumeOpts): Promise<void> {
  const through = parseThrough(o.through);
  const dir = await unitArg(unit);
  const given = {
    ...(o.batch === undefined ? {} : { batch: o.batch }),
    ...(o.servers === undefined ? {} : { servers: o.servers }),
  };
  await withInterrupts((stop) =>
    resumeThrough(dir, { ...options({ campaignsDir: join(dir, '..'), ...given }), through, ...reasonOf(o), stop }),
  );
  await recordSeen(dir, 'run');
}

export function registerResume(group: Command): void {
  group
    .command('resume')
    .description("continue a unit's interrupted formal run (from its frozen protocol), then seal")
    .argument('<unit>', 'the unit folder')
    .option('--through <stage>', 'stop after: seal | closeout', 'seal')
    .option(...reasonOpt)
    .option(...batchOpt)
    .option(...serversOpt)
    .action(resume);
}
