import type { KeyObject } from 'node:crypto';
import { ImepError } from '../core/index.js';
import { sslibPublicKey } from './dsse.js';
import { minisignPublicKey } from './minisign.js';

/**
 * An operator's public key in the formats stock tools read (`imep keys export --format F`; without it, the IMEP key
 * file `imep keys trust` reads):
 *   pem       the bare SPKI PEM
 *   minisign  minisign's `.pub` file, for `minisign -V -p KEY -m FILE -x SIG` (minisign.ts)
 *   sslib     securesystemslib's key JSON (keyid, keytype, scheme, keyval.public), for the in-toto/DSSE check (dsse.ts)
 */
export const KEY_FORMATS = ['pem', 'minisign', 'sslib'] as const;
export type KeyFormat = (typeof KEY_FORMATS)[number];

export function parseKeyFormat(text: string): KeyFormat {
  const f = text.trim().toLowerCase();
  if ((KEY_FORMATS as readonly string[]).includes(f)) return f as KeyFormat;
  throw new ImepError('E_USAGE', `unknown key format '${text}'`, {
    field: '--format',
    hint: `use one of ${KEY_FORMATS.join(', ')}`,
  });
}

/** A public key in `format`; `operator` names it in the minisign file's untrusted comment. */
export function formatPublicKey(publicKey: KeyObject, operator: string, format: KeyFormat): string {
  switch (format) {
    case 'pem':
      return publicKey.export({ type: 'spki', format: 'pem' }).toString();
    case 'minisign':
      return minisignPublicKey(publicKey, operator);
    case 'sslib':
      return `${JSON.stringify(sslibPublicKey(publicKey), null, 2)}\n`;
  }
}
