/**
 * `imep campaign precommit FILE [--campaigns-dir D] [--allow-large-plan]`: verify the checkpoint, freeze the
 * protocol and plan, register the seed bands.
 */
import type { Command } from 'commander';
import { precommitCampaign } from '../../../campaign/index.js';
import { dirOpt, largeOpt, options, type CommonOpts } from './options.js';

export function registerPrecommit(group: Command): void {
  group
    .command('precommit')
    .description('verify the checkpoint, freeze the protocol and plan, register the seed bands')
    .argument('<file>', 'the protocol file (YAML)')
    .option(...dirOpt)
    .option(...largeOpt)
    .action(async (file: string, o: CommonOpts) => {
      await precommitCampaign(file, options(o));
    });
}
