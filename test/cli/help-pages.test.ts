/**
 * Every help text of `imep` is pinned (help-pages.snap.txt): the split of src/cli into one file per subcommand
 * (issue 29) kept every description, argument, option and default byte for byte, and a later change to a help
 * text shows up in review as a change to this file. The in-process pages are the built CLI's (checked on two).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { helpPages } from './help-pages.js';

describe('imep help pages', () => {
  it('every help page, from the top-level one down to each subcommand, is as pinned', async () => {
    const pages = await helpPages();
    expect(pages.length).toBeGreaterThanOrEqual(48);
    const text = pages.map(([path, help]) => `$ ${path} --help\n${help}`).join('\n');
    await expect(text).toMatchFileSnapshot('./help-pages.snap.txt');
  });

  it('the built CLI prints the same pages (top level, a group, a nested subcommand)', async () => {
    const pages = new Map(await helpPages());
    for (const args of [[], ['campaign'], ['report'], ['sim', 'serve', 'lite']]) {
      const r = runCli([...args, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(pages.get(['imep', ...args].join(' ')));
    }
  });
});
