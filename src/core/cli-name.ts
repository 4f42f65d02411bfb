/**
 * How the user invoked IMEP's command line, for the commands hints print ("next: …", "trust it: …"): `npx imep`
 * when it runs through npm's exec (`npx imep …` sets npm_command=exec), else `imep` (a global install or
 * `npm link`, README "Development"). A hint then prints a command that works as typed.
 */
export function cliName(env: NodeJS.ProcessEnv = process.env): string {
  return env['npm_command'] === 'exec' ? 'npx imep' : 'imep';
}
