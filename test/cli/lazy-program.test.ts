/**
 * Lazy command modules (src/cli/program.ts): `imep <name> …` imports only <name>'s module; help (and an
 * unknown command) loads the top-level commands' modules only — the groups are declared with their
 * descriptions without their modules — so every command is listed; a bare --version loads none.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  buildLazyProgram,
  COMMAND_GROUPS,
  commandsToLoad,
  lazyGroup,
  selectedCommand,
  type LazyCommand,
} from '../../src/cli/program.js';
import { runCli } from '../support/run-cli.js';
import { HEAVY_PACKAGES, staticPackages } from '../support/static-imports.js';

function fakeCommands(loaded: string[]): LazyCommand[] {
  const groups = COMMAND_GROUPS.map(([name]) =>
    lazyGroup(name, async () => {
      loaded.push(name);
      return (group: Command) => {
        group
          .command('ping')
          .description(`ping ${name}`)
          .action(() => undefined);
      };
    }),
  );
  const calibrate: LazyCommand = {
    name: 'calibrate',
    load: async () => {
      loaded.push('calibrate');
      return (program: Command) => {
        program
          .command('calibrate')
          .description('a top-level command from its own module')
          .action(() => undefined);
      };
    },
  };
  return [...groups, calibrate];
}

describe('cli: lazy command modules', () => {
  it('selects the command argv names', () => {
    expect(selectedCommand(['campaign', 'run', 'p.yaml', '--shard', '0/2'])).toBe('campaign');
    expect(selectedCommand(['--batch', 'cluster'])).toBe('cluster');
    expect(selectedCommand(['help', 'stats'])).toBe('stats');
    expect(selectedCommand(['--help'])).toBeUndefined();
    const all = fakeCommands([]);
    const names = (args: string[]): string[] => commandsToLoad(args, all).map((c) => c.name);
    expect(names(['cluster', 'shard-run', 'u', '--shard', '1/4'])).toEqual(['cluster']);
    expect(names(['help', 'report'])).toEqual(['report']);
    expect(names(['calibrate'])).toEqual(['calibrate']);
    expect(names(['--version'])).toEqual([]);
    // help, no command or an unknown one: the top-level commands only (the groups are declared without modules)
    expect(names([])).toEqual(['calibrate']);
    expect(names(['--help'])).toEqual(['calibrate']);
    expect(names(['-V', '--help'])).toEqual(['calibrate']);
    expect(names(['bogus'])).toEqual(['calibrate']);
    expect(names(['help'])).toEqual(['calibrate']);
  });

  it('imports only the module of the command that runs; help lists every group and top-level command', async () => {
    const loaded: string[] = [];
    const program = await buildLazyProgram(['node', 'imep', 'stats', 'ping'], fakeCommands(loaded));
    expect(loaded).toEqual(['stats']);
    await program.parseAsync(['node', 'imep', 'stats', 'ping']);
    // every group is still declared (with its description) for the help, without its module
    expect(program.commands.map((c) => c.name())).toEqual(COMMAND_GROUPS.map(([n]) => n));
    expect(program.commands.find((c) => c.name() === 'campaign')?.commands).toEqual([]);

    const all: string[] = [];
    const help = (await buildLazyProgram(['node', 'imep', '--help'], fakeCommands(all))).helpInformation();
    expect(all).toEqual(['calibrate']);
    for (const [name, description] of COMMAND_GROUPS)
      expect(help).toMatch(new RegExp(`^\\s+${name}\\s+${description.slice(0, 12)}`, 'm'));
    expect(help).toMatch(/^\s+calibrate\s+a top-level command/m);
  });

  it('the top-level help imports no heavy package: the CLI entry and the top-level command modules it registers', () => {
    // what `imep --help` loads: main.ts's static graph, and commands/calibrate/command.ts (its runner is imported when it runs)
    for (const entry of ['cli/main.ts', 'cli/commands/calibrate/command.ts']) {
      const heavy = [...staticPackages(entry)].filter((p) => (HEAVY_PACKAGES as readonly string[]).includes(p));
      expect({ entry, heavy }).toEqual({ entry, heavy: [] });
    }
    // the walker sees them where they are imported statically
    expect(staticPackages('calibration/calibrate.ts').has('onnxruntime-node')).toBe(true);
  });

  it("the built imep: --help lists all six groups; a group's help, --version and an unknown command", () => {
    const help = runCli(['--help']);
    expect(help.code).toBe(0);
    for (const [name] of COMMAND_GROUPS) expect(help.stdout).toMatch(new RegExp(`^\\s+${name}\\b`, 'm'));
    const sub = runCli(['campaign', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toMatch(/^\s+run \[options\] <file>/m);
    expect(runCli(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const bad = runCli(['bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown command 'bogus'/);
  });
});
