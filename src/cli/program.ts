/**
 * The `imep` program: the command groups (COMMAND_GROUPS, declared with their descriptions so `imep --help` loads
 * no group module) and the lazy loading of each command's module (LazyCommand); main.ts lists the commands.
 */
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
  ['keys', 'signing keys and trusted public keys: list, export, trust, revoke'],
  ['protocol', 'check a protocol file (listing every problem), or copy a shipped one out to edit'],
] as const;

export type GroupName = (typeof COMMAND_GROUPS)[number][0];

/** A registrar adds subcommands to its group. Each lives next to the module it drives. */
export type GroupRegistrar = (group: Command) => void;

/** A registrar of a top-level command: adds `imep <name> …` (with its description) to the program. */
export type ProgramRegistrar = (program: Command) => void;

export function buildProgram(registrars: Partial<Record<GroupName, GroupRegistrar>>): Command {
  const program = new Command('imep')
    .description("IMEP — does a VLA policy's memory help, and does it use the task-relevant fact?")
    .version(pkg.version)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const [name, description] of COMMAND_GROUPS) {
    const group = program.command(name).description(description).exitOverride();
    registrars[name]?.(group);
  }
  return program;
}

/**
 * A command whose module is imported only when it is needed: `imep <name> …` loads that one module and no
 * other (start-up is most of a short command's time, and every SLURM array task pays it). Groups are
 * declared by buildProgram with their descriptions, so `imep --help` lists them without loading anything;
 * a top-level command's module is loaded for the top-level help (and for anything that names no known
 * command, so commander's "unknown command" suggestions see every command: the groups are declared already).
 */
export interface LazyCommand {
  /** `imep <name> …` selects it. */
  readonly name: string;
  /** Imports the module; returns what registers the command on the program. */
  readonly load: () => Promise<ProgramRegistrar>;
  /** A group of COMMAND_GROUPS (declared without its module); absent for a top-level command. */
  readonly group?: true;
}

/** A group whose subcommands live in a lazily imported module. */
export function lazyGroup(name: GroupName, load: () => Promise<GroupRegistrar>): LazyCommand {
  return {
    name,
    group: true,
    load: async () => {
      const register = await load();
      return (program) => {
        const group = program.commands.find((c) => c.name() === name);
        if (group === undefined) throw new Error(`command group '${name}' is not declared in COMMAND_GROUPS`);
        register(group);
      };
    },
  };
}

/** The command argv selects: the first argument that is not an option (`imep help NAME` → NAME). */
export function selectedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * What argv needs loaded: the command it names; nothing for a bare `--version`; else (help, no command, an
 * unknown one) every top-level command — the groups are declared with their descriptions already, so the
 * top-level help lists them without importing their modules (`imep --help` would otherwise load every
 * runtime, the report's plotting library included).
 */
export function commandsToLoad(args: readonly string[], commands: readonly LazyCommand[]): LazyCommand[] {
  const name = selectedCommand(args);
  const hit = commands.filter((c) => c.name === name);
  if (hit.length > 0) return hit;
  const versionOnly =
    name === undefined &&
    args.some((a) => a === '-V' || a === '--version') &&
    !args.some((a) => a === '-h' || a === '--help');
  return versionOnly ? [] : commands.filter((c) => c.group !== true);
}

/** The program for `argv` (node, script, args…), with only the modules that argv needs imported. */
export async function buildLazyProgram(argv: readonly string[], commands: readonly LazyCommand[]): Promise<Command> {
  const program = buildProgram({});
  const wanted = commandsToLoad(argv.slice(2), commands);
  const registrars = await Promise.all(wanted.map((c) => c.load()));
  for (const register of registrars) register(program);
  return program;
}

export function isCommanderExit(e: unknown): e is CommanderError {
  return e instanceof CommanderError;
}
