/**
 * Every help page of `imep`, built in process the way main.ts builds it with every module loaded: the top-level
 * help, each group's and each subcommand's (nested ones too), at commander's default width of 80 columns and
 * without colour — what `imep … --help` prints when its stdout is not a terminal.
 */
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import { registerCalibrateCommand } from '../../src/cli/commands/calibrate/command.js';
import { registerExportCommand } from '../../src/cli/commands/export/command.js';
import { registerCampaign } from '../../src/cli/commands/campaign/group.js';
import { registerChainbench } from '../../src/cli/commands/chainbench/group.js';
import { registerCluster } from '../../src/cli/commands/cluster/group.js';
import { registerKeys } from '../../src/cli/commands/keys/group.js';
import { registerProtocol } from '../../src/cli/commands/protocol/group.js';
import { registerReport } from '../../src/cli/commands/report/group.js';
import { registerSim } from '../../src/cli/commands/sim/group.js';
import { registerStats } from '../../src/cli/commands/stats/group.js';

/** The program with every group's subcommands and every top-level command registered. */
export async function allCommandsProgram(): Promise<Command> {
  const program = buildProgram({
    campaign: registerCampaign,
    stats: registerStats,
    sim: registerSim,
    chainbench: registerChainbench,
    cluster: (group) => registerCluster(group),
    report: registerReport,
    keys: registerKeys,
    protocol: registerProtocol,
  });
  registerCalibrateCommand(program);
  registerExportCommand(program);
  return program;
}

/** The program `imep --help` builds: the groups declared without their modules, the top-level commands loaded. */
export function topLevelProgram(): Command {
  const program = buildProgram({});
  registerCalibrateCommand(program);
  registerExportCommand(program);
  return program;
}

function helpOf(cmd: Command): string {
  cmd.configureOutput({ getOutHelpWidth: () => 80, getOutHasColors: () => false });
  return cmd.helpInformation();
}

/**
 * `[path, help text]` for the top-level help (as main.ts builds it for `imep --help`) and for every command under
 * it (with its group's module loaded), depth first in registration order.
 */
export async function helpPages(): Promise<[string, string][]> {
  const pages: [string, string][] = [['imep', helpOf(topLevelProgram())]];
  const walk = (cmd: Command, path: string[]): void => {
    pages.push([['imep', ...path].join(' '), helpOf(cmd)]);
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  for (const cmd of (await allCommandsProgram()).commands) walk(cmd, [cmd.name()]);
  return pages;
}
