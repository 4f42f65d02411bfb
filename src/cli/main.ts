#!/usr/bin/env -S node --initial-old-space-size=128
import { buildLazyProgram, isCommanderExit, lazyGroup, selectedCommand, type LazyCommand } from './program.js';
import { exitCodeFor, messageFor } from './exit-codes.js';

/**
 * Every command of `imep`, each module imported only when its command runs (program.ts: LazyCommand).
 * A new group: a line here plus its entry in COMMAND_GROUPS. A new top-level command whose module exports
 * `registerX(program)`: one line, e.g.
 *   { name: 'x', load: async () => (await import('./x-command.js')).registerX },
 */
const COMMANDS: readonly LazyCommand[] = [
  lazyGroup('campaign', async () => (await import('./campaign-commands.js')).registerCampaign),
  lazyGroup('stats', async () => (await import('./stats-commands.js')).registerStats),
  lazyGroup('sim', async () => (await import('./sim-commands.js')).registerSim),
  lazyGroup('chainbench', async () => (await import('./chainbench-commands.js')).registerChainbench),
  lazyGroup('cluster', async () => (await import('./cluster-commands.js')).registerCluster),
  lazyGroup('report', async () => (await import('./report-commands.js')).registerReport),
  lazyGroup('keys', async () => (await import('./keys-commands.js')).registerKeys),
  lazyGroup('protocol', async () => (await import('./protocol-commands.js')).registerProtocol),
  { name: 'calibrate', load: async () => (await import('./calibrate-command.js')).registerCalibrateCommand },
];

async function main(argv: string[]): Promise<number> {
  try {
    const program = await buildLazyProgram(argv, COMMANDS);
    // the built-in kinds (src/kinds), before a command parses a protocol; loaded with the command it runs, like the
    // command modules, so `imep --help` and `--version` stay light
    if (selectedCommand(argv.slice(2)) !== undefined) (await import('../kinds/index.js')).registerBuiltinKinds();
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (isCommanderExit(e)) {
      // help and version exit 0; usage errors (commander already printed them) exit 2
      return e.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`${messageFor(e)}\n`);
    return exitCodeFor(e);
  }
}

main(process.argv).then((code) => {
  process.exitCode = code;
});
