import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

/** The command groups, in the order `imep --help` lists them. */
export const COMMAND_GROUPS = [
  ['campaign', 'plan, run, seal, adjudicate and close out evidence units from protocol files'],
  ['stats', 'exact paired-binary statistics: McNemar, Clopper–Pearson, decision bounds, Tango, Holm'],
  ['sim', 'simulators: serve the lite simulators over the bridge, probe a sim-bridge'],
  ['chainbench', 'ChainBench chain manifests, decision readouts and decision replay'],
  ['cluster', 'shard campaigns as SLURM batch jobs, submit, watch and merge'],
  ['report', 'HTML / Markdown / CSV reports generated from sealed rows'],
] as const;

export type GroupName = (typeof COMMAND_GROUPS)[number][0];

/** A registrar adds subcommands to its group. Each lives next to the module it drives. */
export type GroupRegistrar = (group: Command) => void;

export function buildProgram(registrars: Partial<Record<GroupName, GroupRegistrar>>): Command {
  const program = new Command('imep')
    .description('IMEP — does a VLA policy\'s memory help, and does it use the task-relevant fact?')
    .version(pkg.version)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const [name, description] of COMMAND_GROUPS) {
    const group = program.command(name).description(description).exitOverride();
    registrars[name]?.(group);
  }
  return program;
}

export function isCommanderExit(e: unknown): e is CommanderError {
  return e instanceof CommanderError;
}
