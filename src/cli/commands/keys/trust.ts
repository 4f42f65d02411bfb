/**
 * `imep keys trust FILE [--name N] [--fingerprint F]` (a public key file; name: the file's stem) and
 * `imep keys trust UNIT --fingerprint F [--name N]` (a key the unit's signatures carry, F as its owner confirmed it).
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { ImepError } from '../../../core/index.js';
import { trustKeyFile, trustKeyFromUnit } from '../../../evidence/index.js';
import { fingerprintText, operatorOfStem } from '../../../signing/index.js';
import { recordSeen, refuseSeenRollback } from '../../seen-guard.js';
import { fingerprintArg, out } from './shared.js';

type Trusted = Awaited<ReturnType<typeof trustKeyFile>>;

async function trustFromUnit(source: string, fingerprint: string | undefined, name?: string): Promise<Trusted> {
  if (fingerprint === undefined) {
    throw new ImepError('E_USAGE', 'trusting a key from a unit needs its fingerprint, as its owner confirmed it', {
      field: '--fingerprint',
      hint: '`imep campaign verify UNIT` names each untrusted fingerprint; confirm it with the owner (`imep keys list` on their machine)',
    });
  }
  await refuseSeenRollback(source);
  const t = await trustKeyFromUnit(source, fingerprint, name);
  await recordSeen(source, 'trust');
  return t;
}

async function trust(source: string, o: { name?: string; fingerprint?: string }): Promise<void> {
  const fingerprint = o.fingerprint === undefined ? undefined : fingerprintArg(o.fingerprint, '--fingerprint');
  const isDir = await stat(source).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const t = isDir
    ? await trustFromUnit(source, fingerprint, o.name)
    : await trustKeyFile(source, o.name ?? operatorOfStem(basename(source).replace(/\.(pub|pem)$/, '')), fingerprint);
  out(`trusted ${t.operator} ${fingerprintText(t.fingerprint)} (${t.file})`);
}

export function registerTrust(group: Command): void {
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
    .action(trust);
}
