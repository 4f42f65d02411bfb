/**
 * `imep keys …`: the key store (IMEP_KEYS_DIR, default ~/.imep/keys) — this machine's signing keys and the
 * public keys it trusts. Signing needs no command (a key is created on its operator's first signature);
 * these are for handing a public key to a reviewer and for the reviewer's side. Wires one file per subcommand:
 *
 *   imep keys list                                   every key: own (signs here) or trusted, with its fingerprint   list.ts
 *   imep keys export [NAME]                          the public key file of NAME (default: the current operator)   export.ts
 *   imep keys trust FILE [--name N|--unit U] [--fingerprint F]  trust a public key file (name: the one it carries) trust.ts
 *   imep keys trust UNIT --fingerprint F [--name N]  trust a key the unit's signatures carry (F as its owner confirmed it)
 *   imep keys revoke NAME|FINGERPRINT                stop trusting an imported key                                  revoke.ts
 */
import type { Command } from 'commander';
import { registerExport } from './export.js';
import { registerList } from './list.js';
import { registerRevoke } from './revoke.js';
import { registerTrust } from './trust.js';

export function registerKeys(group: Command): void {
  registerList(group);
  registerExport(group);
  registerTrust(group);
  registerRevoke(group);
}
