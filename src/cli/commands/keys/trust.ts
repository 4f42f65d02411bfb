/**
 * `imep keys trust FILE [--name N | --unit UNIT] [--fingerprint F]` (a public key file; name: --name, else the one the
 * file carries, else for a bare PEM the owner UNIT's signatures give the key) and
 * `imep keys trust UNIT --fingerprint F [--name N]` (a key the unit's signatures carry, F as its owner confirmed it).
 */
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { ImepError } from '../../../core/index.js';
import { trustKeyFile, trustKeyFromUnit } from '../../../evidence/index.js';
import { fingerprintText } from '../../../signing/index.js';
import { recordSeen, refuseSeenRollback } from '../../seen-guard.js';
import { fingerprintArg, out } from './shared.js';

type Trusted = Awaited<ReturnType<typeof trustKeyFromUnit>>;

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

async function trust(source: string, o: { name?: string; fingerprint?: string; unit?: string }): Promise<void> {
  const fingerprint = o.fingerprint === undefined ? undefined : fingerprintArg(o.fingerprint, '--fingerprint');
  const isDir = await stat(source).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (isDir) {
    if (o.unit !== undefined)
      throw new ImepError('E_USAGE', '--unit goes with a public key file, not with a unit folder', {
        field: '--unit',
        hint: `trust a key a unit carries with \`imep keys trust ${source} --fingerprint F\``,
      });
    const t = await trustFromUnit(source, fingerprint, o.name);
    out(`trusted ${t.operator} ${fingerprintText(t.fingerprint)} (${t.file})`);
    return;
  }
  const t = await trustKeyFile(source, {
    ...(o.name === undefined ? {} : { name: o.name }),
    ...(fingerprint === undefined ? {} : { fingerprint }),
    ...(o.unit === undefined ? {} : { unit: o.unit }),
  });
  const from =
    t.named === 'file'
      ? 'the name the file carries'
      : t.named === 'unit'
        ? "the name the unit's signatures give it"
        : '--name';
  out(`trusted ${t.operator} ${fingerprintText(t.fingerprint)} (${t.file}; name from ${from})`);
  if (t.fileNames !== null && t.fileNames !== t.operator)
    process.stderr.write(
      `warning: the file names the key's operator ${t.fileNames}; trusted as ${t.operator} (--name), units signed as ${t.fileNames} verify as untrusted here\n`,
    );
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
      "the operator name to trust it as (default: the name the file carries, or the owner the unit's signatures name)",
    )
    .option(
      '--unit <unit>',
      "for a bare public key file (no name in it): take the name from this unit's signatures made with the key",
    )
    .option('--fingerprint <fp>', 'the fingerprint its owner confirmed (required for a unit folder)')
    .action(trust);
}
