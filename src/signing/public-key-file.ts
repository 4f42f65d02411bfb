import { createPublicKey, type KeyObject } from 'node:crypto';
import { ImepError } from '../core/index.js';
import { fingerprintOf, fingerprintText } from './signature-block.js';

/**
 * The public key file `imep keys export` writes: explanatory lines naming the operator who signs with the key and
 * its fingerprint, then the key as an SPKI PEM block (RFC 7468 §5.2 lets text precede a PEM block, so openssl, Node
 * and minisign-free tooling read the file as a plain public key):
 *
 *   IMEP public key: hand this file to a reviewer; `imep keys trust FILE` trusts it under the operator below
 *   operator: "alice@lab"
 *   fingerprint: ed25519:<64 hex digits>
 *   -----BEGIN PUBLIC KEY-----
 *   …
 *
 * The operator is a JSON string (any id, unambiguous). A bare PEM (what earlier versions exported, or any SPKI PEM
 * file) still reads, with no operator. Pure.
 */

export interface PublicKeyFile {
  /** The operator the file names (null: a bare PEM, no name). */
  readonly operator: string | null;
  readonly key: KeyObject;
  /** The key's fingerprint (hex). */
  readonly fingerprint: string;
  /** The key as bare SPKI PEM. */
  readonly pem: string;
}

const OPERATOR_LINE = /^operator:\s*(.+?)\s*$/;
const FINGERPRINT_LINE = /^fingerprint:\s*(\S+)\s*$/;

/** The text of a public key file for `operator`'s key. */
export function formatPublicKeyFile(operator: string, key: KeyObject): string {
  const pem = key.export({ type: 'spki', format: 'pem' }).toString();
  return [
    'IMEP public key: hand this file to a reviewer; `imep keys trust FILE` trusts it under the operator below',
    `operator: ${JSON.stringify(operator)}`,
    `fingerprint: ${fingerprintText(fingerprintOf(key))}`,
    pem,
  ].join('\n');
}

function refuse(file: string, message: string, hint?: string, cause?: unknown): ImepError {
  return new ImepError('E_USAGE', message, {
    file,
    ...(hint === undefined ? {} : { hint }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Reads a public key file (with or without the header); E_USAGE naming `file` when it is not one. */
export function parsePublicKeyFile(text: string, file: string): PublicKeyFile {
  const begin = text.indexOf('-----BEGIN');
  const header = begin < 0 ? [] : text.slice(0, begin).split(/\r?\n/);
  let key: KeyObject;
  try {
    key = createPublicKey(begin < 0 ? text : text.slice(begin));
  } catch (e) {
    throw refuse(
      file,
      'not a public key (a file as `imep keys export` writes it, or an SPKI PEM, expected)',
      undefined,
      e,
    );
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw refuse(file, `not an Ed25519 public key (${String(key.asymmetricKeyType)})`);
  const fingerprint = fingerprintOf(key);
  let operator: string | null = null;
  for (const line of header) {
    const op = OPERATOR_LINE.exec(line);
    if (op !== null) {
      let name: unknown;
      try {
        name = JSON.parse(op[1]!);
      } catch (e) {
        throw refuse(file, `its operator line is not a quoted name: ${line.trim()}`, 'export the key again', e);
      }
      if (typeof name !== 'string' || name === '')
        throw refuse(file, `its operator line names no operator: ${line.trim()}`, 'export the key again');
      operator = name;
    }
    const fp = FINGERPRINT_LINE.exec(line);
    if (fp !== null && fp[1] !== fingerprintText(fingerprint))
      throw refuse(
        file,
        `its fingerprint line says ${fp[1]!}, but the key in it is ${fingerprintText(fingerprint)}: the file was edited`,
        'ask the key owner for the file `imep keys export` writes; nothing was trusted',
      );
  }
  return { operator, key, fingerprint, pem: key.export({ type: 'spki', format: 'pem' }).toString() };
}
