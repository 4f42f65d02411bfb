/**
 * The layout of src/cli (issue 29, "Functions a reader can hold"): every subcommand is registered by its own
 * file, src/cli/commands/<group>/<subcommand>.ts, that a group.ts wires; every file opens with a caption saying
 * what it registers or holds; and no function in src/cli is longer than MAX_FUNCTION_LINES.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { allCommandsProgram } from './help-pages.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/cli');
const MAX_FUNCTION_LINES = 100;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith('.ts') ? [p] : [];
  });
}

/** Every function (declaration, expression, arrow, method) with a body, and its length in lines. */
function functionLengths(file: string, text = readFileSync(file, 'utf8')): { at: string; lines: number }[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { at: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ at: `${relative(CLI, file)}:${first + 1}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('src/cli layout', () => {
  it('every subcommand of every group is registered by commands/<group>/<subcommand>.ts, wired by its group.ts', async () => {
    const program = await allCommandsProgram();
    const missing: string[] = [];
    let subcommands = 0;
    for (const group of program.commands) {
      if (group.commands.length === 0) {
        // a group that is itself the command (report) or a top-level command (calibrate)
        const own = ['group.ts', 'command.ts'].map((f) => join(CLI, 'commands', group.name(), f));
        if (!own.some((f) => existsSync(f))) missing.push(`commands/${group.name()}/group.ts`);
        continue;
      }
      if (!existsSync(join(CLI, 'commands', group.name(), 'group.ts')))
        missing.push(`commands/${group.name()}/group.ts`);
      for (const sub of group.commands) {
        subcommands++;
        const file = join(CLI, 'commands', group.name(), `${sub.name()}.ts`);
        if (!existsSync(file)) missing.push(relative(CLI, file));
      }
    }
    expect(missing).toEqual([]);
    expect(subcommands).toBeGreaterThanOrEqual(35);
  });

  it(`no function in src/cli is over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = tsFiles(CLI)
      .flatMap((f) => functionLengths(f))
      .filter((f) => f.lines > MAX_FUNCTION_LINES);
    expect(long).toEqual([]);
  });

  it('the length measure counts every kind of function, nested ones too (the check can fail)', () => {
    const body = (n: number): string => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `export function f(): void {\n${body(3)}\n}`,
      `const g = async (x: number): Promise<void> => {\n${body(120)}\n  const h = () => {\n${body(2)}\n  };\n};`,
      `class C {\n  m(): void {\n${body(5)}\n  }\n}`,
    ].join('\n');
    const lengths = functionLengths(join(CLI, 'synthetic.ts'), text).map((f) => [f.at, f.lines]);
    expect(lengths).toEqual([
      ['synthetic.ts:1', 5],
      ['synthetic.ts:6', 126],
      ['synthetic.ts:127', 4],
      ['synthetic.ts:133', 7],
    ]);
  });

  it('every file opens with a caption (a comment saying what it registers or holds)', () => {
    const uncaptioned = tsFiles(CLI).filter((f) => {
      const lines = readFileSync(f, 'utf8').split('\n');
      const first = lines[0]?.startsWith('#!') ? lines[1] : lines[0];
      return !(first?.startsWith('/**') || first?.startsWith('//'));
    });
    expect(uncaptioned.map((f) => relative(CLI, f))).toEqual([]);
  });
});
