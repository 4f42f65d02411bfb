/**
 * `imep keys export [NAME]`: the public key file of NAME (default: the current operator, whose key is created
 * if it has none) on stdout — the operator's name, the fingerprint and the SPKI PEM (public-key-file.ts), so
 * `imep keys trust FILE` on a reviewer's machine trusts it under the name the unit's signatures give; the name and
 * fingerprint also go to stderr. `--format minisign|sslib|pem`: the key alone, for stock tools (key-formats.ts).
 */
import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ImepError } from '../../../core/index.js';
import { currentOperator } from '../../../evidence/index.js';
import {
  fingerprintOf,
  fingerprintText,
  formatPublicKey,
  formatPublicKeyFile,
  keyFileStem,
  keysDir,
  operatorKey,
  parseKeyFormat,
} from '../../../signing/index.js';

async function exportKey(name: string | undefined, o: { format?: string }): Promise<void> {
  const format = o.format === undefined ? undefined : parseKeyFormat(o.format);
  const dir = keysDir();
  const who = name ?? currentOperator().id;
  const pub = join(dir, `${keyFileStem(who)}.pub`);
  let pem = await readFile(pub, 'utf8').catch(() => null);
  if (pem === null) {
    if (name !== undefined && name !== currentOperator().id) {
      throw new ImepError('E_USAGE', `no key for ${name} in the key store`, {
        file: dir,
        hint: '`imep keys list` shows the keys it holds',
      });
    }
    pem = (await operatorKey(who, { dir })).publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }
  process.stdout.write(
    format === undefined
      ? formatPublicKeyFile(who, createPublicKey(pem))
      : formatPublicKey(createPublicKey(pem), who, format),
  );
  process.stderr.write(`${who} ${fingerprintText(fingerprintOf(createPublicKey(pem)))}\n`);
}

export function registerExport(group: Command): void {
  group
    .command('export')
    .description(
      "print a public key file to hand to a reviewer (the operator's name, its fingerprint, the PEM); name and fingerprint also go to stderr",
    )
    .argument(
      '[name]',
      'whose key (default: the current operator, IMEP_OPERATOR or <user>@<host>; created if it has none)',
    )
    .option(
      '--format <format>',
      'another format, for stock tools: minisign (`minisign -V -p`), sslib (securesystemslib JSON, for in-toto) or pem (the bare SPKI PEM)',
    )
    .action(exportKey);
}
