/** `imep keys revoke NAME|FINGERPRINT`: stop trusting an imported key (recorded signed; its units then verify as untrusted). */
import type { Command } from 'commander';
import { revokeKey } from '../../../evidence/index.js';
import { fingerprintText, parseFingerprint } from '../../../signing/index.js';
import { out } from './shared.js';

async function revoke(which: string): Promise<void> {
  const fp = parseFingerprint(which);
  for (const k of await revokeKey(which, fp))
    out(`revoked ${k.operator} ${fingerprintText(k.fingerprint)} (removed ${k.file})`);
}

export function registerRevoke(group: Command): void {
  group
    .command('revoke')
    .description('stop trusting an imported key (by name or fingerprint): records it signed then verify as untrusted')
    .argument('<key>', 'the operator name or the fingerprint')
    .action(revoke);
}
