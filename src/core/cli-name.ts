/**
 * How the user invoked IMEP's command line, for the commands hints print ("next: …", "trust it: …"): `npx imep`
 * when it runs through npm's exec (`npx imep …` sets npm_command=exec), else `imep` (a global install or
 * `npm link`, docs/campaigns.md). A hint then prints a command that works as typed.
 */
export function cliName(env: NodeJS.ProcessEnv = process.env): string {
  return env['npm_command'] === 'exec' ? 'npx imep' : 'imep';
}

/**
 * A line IMEP prints, with each command it names (`imep …` after "next: ", or in backquotes) written as the user
 * can type it (cliName). Applied where lines leave the CLI (stdout results, the one-line error), so the library's
 * messages and the runner's "next:" lines need not know how IMEP was started.
 */
export function asTyped(line: string, env: NodeJS.ProcessEnv = process.env): string {
  const cli = cliName(env);
  if (cli === 'imep') return line;
  return line.replace(/(^|next: |`|then: |&& )imep (?=[a-z])/g, (_m, before: string) => `${before}${cli} `);
}
