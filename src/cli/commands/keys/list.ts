/** `imep keys list`: every key of the key store — own (signs here) or trusted — with its fingerprint. */
import type { Command } from 'commander';
import { listKeys } from '../../../evidence/index.js';
import { fingerprintText, keysDir } from '../../../signing/index.js';
import { out } from './shared.js';

async function list(): Promise<void> {
  const dir = keysDir();
  const keys = await listKeys({ dir });
  out(`key store: ${dir}${keys.length === 0 ? " (empty: a key is created on its operator's first signature)" : ''}`);
  for (const k of keys)
    out(`${k.own ? 'own    ' : 'trusted'}  ${k.operator}  ${fingerprintText(k.fingerprint)}  ${k.file}`);
}

export function registerList(group: Command): void {
  group
    .command('list')
    .description('every key of the key store: own (signs on this machine) or trusted (imported), with its fingerprint')
    .action(list);
}
