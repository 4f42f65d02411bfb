/** What the `imep keys …` subcommands share: the stdout printer and the fingerprint argument parser. */
import { ImepError } from '../../../core/index.js';
import { parseFingerprint } from '../../../signing/index.js';

export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** `ed25519:<64 hex digits>`, as `imep keys list` prints it. */
export function fingerprintArg(text: string, field: string): string {
  const fp = parseFingerprint(text);
  if (fp === null)
    throw new ImepError(
      'E_USAGE',
      `'${text}' is not a key fingerprint (ed25519:<64 hex digits>, as \`imep keys list\` prints it)`,
      { field },
    );
  return fp;
}
