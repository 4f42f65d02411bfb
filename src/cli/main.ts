#!/usr/bin/env -S node --initial-old-space-size=128
/** `imep`: the CLI entry — builds the program with the command argv names, runs it, and maps a refusal to its exit code (exit-codes.ts). */
import { buildLazyProgram, isCommanderExit, lazyGroup, type LazyCommand } from './program.js';
import { exitCodeFor, messageFor } from './exit-codes.js';

/**
 * Every command of `imep`, each module imported only when its command runs (program.ts: LazyCommand). Each group
 * lives in commands/<group>/: its group.ts wires one file per subcommand (commands/campaign/run.ts, …).
 * A new group: a folder, a line here and its entry in COMMAND_GROUPS. A new top-level command whose module
 * exports `registerX(program)`: one line, e.g.
 *   { name: 'x', load: async () => (await import('./commands/x/command.js')).registerX },
 */
const COMMANDS: readonly LazyCommand[] = [
  lazyGroup(
    'campaign',
    withKinds(async () => (await import('./commands/campaign/group.js')).registerCampaign),
  ),
  lazyGroup('stats', async () => (await import('./commands/stats/group.js')).registerStats),
  lazyGroup('sim', async () => (await import('./commands/sim/group.js')).registerSim),
  lazyGroup(
    'chainbench',
    withKinds(async () => (await import('./commands/chainbench/group.js')).registerChainbench),
  ),
  lazyGroup(
    'cluster',
    withKinds(async () => (await import('./commands/cluster/group.js')).registerCluster),
  ),
  lazyGroup(
    'report',
    withKinds(async () => (await import('./commands/report/group.js')).registerReport),
  ),
  lazyGroup('keys', async () => (await import('./commands/keys/group.js')).registerKeys),
  lazyGroup(
    'protocol',
    withKinds(async () => (await import('./commands/protocol/group.js')).registerProtocol),
  ),
  {
    name: 'calibrate',
    load: withKinds(async () => (await import('./commands/calibrate/command.js')).registerCalibrateCommand),
  },
  { name: 'export', load: async () => (await import('./commands/export/command.js')).registerExportCommand },
];

/**
 * A command module that reads protocols, loaded after the built-in simulator, policy runtime and condition kinds
 * are registered (src/kinds) — only for the commands that need them, so `imep --help`, `keys` and `stats` stay light.
 */
function withKinds<T>(load: () => Promise<T>): () => Promise<T> {
  return async () => {
    (await import('../kinds/index.js')).registerBuiltinKinds();
    return load();
  };
}

async function main(argv: string[]): Promise<number> {
  try {
    const program = await buildLazyProgram(argv, COMMANDS);
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
