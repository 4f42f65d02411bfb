/**
 * `imep keys …`: the key store (IMEP_KEYS_DIR, default ~/.imep/keys) — this machine's signing keys and the
 * public keys it trusts. Signing needs no command (a key is created on its operator's first signature);
 * these are for handing a public key to a reviewer and for the reviewer's side:
 *
 *   imep keys list                                   every key: own (signs here) or trusted, with its fingerprint
 *   imep keys export [NAME]                          the public key (PEM) of NAME (default: the current operator)
 *   imep keys trust FILE [--name N] [--fingerprint F]   trust a public key file (name: the file's stem)
 *   imep keys trust UNIT --fingerprint F [--name N]  trust a key the unit's signatures carry (F as its owner confirmed it)
 *   imep keys revoke NAME|FINGERPRINT                stop trusting an imported key
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { ImepError } from '../core/index.js';
import { currentOperator, listKeys, revokeKey, trustKeyFile, trustKeyFromUnit } from '../evidence/index.js';
import { recordSeen, refuseSeenRollback } from './seen-guard.js';
import {
  keyFileStem,
  keysDir,
  operatorKey,
  operatorOfStem,
  fingerprintOf,
  fingerprintText,
  parseFingerprint,
} from '../signing/index.js';
import { createPublicKey } from 'node:crypto';

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function fingerprintArg(text: string, field: string): string {
  const fp = parseFingerprint(text);
  if (fp === null)
    throw new ImepError(
      'E_USAGE',
      `'${text}' is not a key fingerprint (ed25519:<64 hex digits>, as \`imep keys list\` prints it)`,
      { field },
    );
  return fp;
}

export function registerKeys(group: Command): void {
  group
    .command('list')
    .description('every key of the key store: own (signs on this machine) or trusted (imported), with its fingerprint')
    .action(async () => {
      const dir = keysDir();
      const keys = await listKeys({ dir });
      out(
        `key store: ${dir}${keys.length === 0 ? " (empty: a key is created on its operator's first signature)" : ''}`,
      );
      for (const k of keys)
        out(`${k.own ? 'own    ' : 'trusted'}  ${k.operator}  ${fingerprintText(k.fingerprint)}  ${k.file}`);
    });

  group
    .command('export')
    .description('print a public key (PEM) to hand to a reviewer; its fingerprint goes to stderr')
    .argument(
      '[name]',
      'whose key (default: the current operator, IMEP_OPERATOR or <user>@<host>; created if it has none)',
    )
    .action(async (name?: string) => {
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
      process.stdout.write(pem);
      process.stderr.write(`${who} ${fingerprintText(fingerprintOf(createPublicKey(pem)))}\n`);
    });

  group
    .command('trust')
    .description(
      "trust a public key: a PEM file from `imep keys export`, or a key a unit's signatures carry (with --fingerprint)",
    )
    .argument('<source>', 'a public key file, or a unit folder')
    .option(
      '--name <name>',
      "the operator name to trust it as (default: the file's stem, or the owner the unit's signatures name)",
    )
    .option('--fingerprint <fp>', 'the fingerprint its owner confirmed (required for a unit folder)')
    .action(async (source: string, o: { name?: string; fingerprint?: string }) => {
      const fingerprint = o.fingerprint === undefined ? undefined : fingerprintArg(o.fingerprint, '--fingerprint');
      const isDir = await stat(source).then(
        (s) => s.isDirectory(),
        () => false,
      );
      let t;
      if (isDir) {
        if (fingerprint === undefined) {
          throw new ImepError(
            'E_USAGE',
            'trusting a key from a unit needs its fingerprint, as its owner confirmed it',
            {
              field: '--fingerprint',
              hint: '`imep campaign verify UNIT` names each untrusted fingerprint; confirm it with the owner (`imep keys list` on their machine)',
            },
          );
        }
        await refuseSeenRollback(source);
        t = await trustKeyFromUnit(source, fingerprint, o.name);
        await recordSeen(source, 'trust');
      } else {
        const name = o.name ?? operatorOfStem(basename(source).replace(/\.(pub|pem)$/, ''));
        t = await trustKeyFile(source, name, fingerprint);
      }
      out(`trusted ${t.operator} ${fingerprintText(t.fingerprint)} (${t.file})`);
    });

  group
    .command('revoke')
    .description('stop trusting an imported key (by name or fingerprint): records it signed then verify as untrusted')
    .argument('<key>', 'the operator name or the fingerprint')
    .action(async (which: string) => {
      const fp = parseFingerprint(which);
      for (const k of await revokeKey(which, fp))
        out(`revoked ${k.operator} ${fingerprintText(k.fingerprint)} (removed ${k.file})`);
    });
}
