import { dirname, join, resolve } from 'node:path';
import type { HeldAs, SignatureReport } from './chain.js';
import { keyFileStem } from './key-store.js';
import { fingerprintText } from './signature-block.js';

/**
 * Trust, as distinct from integrity. A signed record carries its signer's public key, so whether it is
 * INTACT (its signature verifies, its chain links hold) can be checked anywhere; whether its signer is
 * TRUSTED is this verifier's decision: its key store (`imep keys trust`) or the folder given by
 * `--trusted-keys`. A unit is
 *   trusted    every record of its chain is signed, by keys the trust store holds under the names they give;
 *   untrusted  intact, but some key is unknown here (or held under another name): `untrusted` says which,
 *              for which records, and the command that trusts it once its owner has confirmed the fingerprint;
 *   unsigned   no record is signed (IMEP_SIGNING=off, or a downgrade: signatures stripped and the unit rebuilt).
 * Pure.
 */

export type TrustStatus = 'trusted' | 'untrusted' | 'unsigned';

export interface UntrustedSigner {
  /** The owner the signature block names. */
  readonly keyOwner: string;
  /** The key's fingerprint (hex). */
  readonly fingerprint: string;
  /** Unit-relative paths of the records it signed (amendments.jsonl for post-seal lines). */
  readonly paths: string[];
  /** Why it is not trusted (the first finding's detail). */
  readonly detail: string;
  /** The key is trusted here, but under these other names (a wrong-key finding); absent: the key is unknown here. */
  readonly heldAs?: readonly HeldAs[];
}

export interface TrustReport {
  readonly status: TrustStatus;
  readonly untrusted: UntrustedSigner[];
}

export function trustOf(report: SignatureReport): TrustReport {
  const bySigner = new Map<string, UntrustedSigner>();
  for (const f of report.findings) {
    if (f.trust !== true || f.signer === undefined) continue;
    const key = `${f.signer.fingerprint}\u0000${f.signer.keyOwner}`;
    const known = bySigner.get(key);
    if (known === undefined)
      bySigner.set(key, {
        keyOwner: f.signer.keyOwner,
        fingerprint: f.signer.fingerprint,
        paths: [f.path],
        detail: f.detail,
        ...(f.signer.heldAs === undefined ? {} : { heldAs: f.signer.heldAs }),
      });
    else if (!known.paths.includes(f.path)) known.paths.push(f.path);
  }
  const untrusted = [...bySigner.values()];
  const status: TrustStatus =
    untrusted.length > 0 ? 'untrusted' : report.status === 'unsigned' ? 'unsigned' : 'trusted';
  return { status, untrusted };
}

/** The command that trusts an untrusted signer's key as carried by the unit (after its owner confirmed the fingerprint). */
export function trustCommand(
  cli: string,
  unitDir: string,
  signer: Pick<UntrustedSigner, 'fingerprint' | 'keyOwner'>,
): string {
  return `${cli} keys trust ${quoteArg(unitDir)} --fingerprint ${fingerprintText(signer.fingerprint)} --name ${quoteArg(signer.keyOwner)}`;
}

/**
 * One line: who is not trusted, for which records, and how to trust them. A key the trust store holds under
 * another name than the one it signs with (trusted from a bare key file named after something else) is said in
 * words, with the commands that trust it under its signing name (in the key store `storeDir`) or the file to rename
 * (in a `--trusted-keys` folder).
 */
export function describeUntrusted(
  cli: string,
  unitDir: string,
  untrusted: readonly UntrustedSigner[],
  storeDir?: string,
): string {
  const unknown = untrusted.filter((u) => u.heldAs === undefined || u.heldAs.length === 0);
  const parts: string[] = [];
  if (unknown.length > 0) {
    const who = unknown
      .map((u) => `${u.keyOwner} ${fingerprintText(u.fingerprint)} (${u.paths.join(', ')})`)
      .join('; ');
    const how = unknown.map((u) => trustCommand(cli, unitDir, u)).join(' && ');
    parts.push(
      `intact, but signed by keys this verifier does not trust: ${who} — confirm each fingerprint with its owner (\`imep keys list\` on their machine), then: ${how}`,
    );
  }
  for (const u of untrusted)
    if (u.heldAs !== undefined && u.heldAs.length > 0) parts.push(describeRenamed(cli, unitDir, u, u.heldAs, storeDir));
  return parts.join('; and ');
}

/** A key trusted here under other names than the one its signatures give, and the fix. */
function describeRenamed(
  cli: string,
  unitDir: string,
  u: UntrustedSigner,
  heldAs: readonly HeldAs[],
  storeDir: string | undefined,
): string {
  const names = heldAs.map((h) => `'${h.operator}' (${h.file})`).join(', ');
  const inStore = storeDir === undefined ? [] : heldAs.filter((h) => resolve(dirname(h.file)) === resolve(storeDir));
  const fix =
    inStore.length === heldAs.length
      ? `trust it under the name it signs with: ${trustCommand(cli, unitDir, u)}${heldAs.map((h) => ` && ${cli} keys revoke ${quoteArg(h.operator)}`).join('')}`
      : `give the key file the name it signs with: ${heldAs.map((h) => `mv ${quoteArg(h.file)} ${quoteArg(join(dirname(h.file), `${keyFileStem(u.keyOwner)}.pub`))}`).join(' && ')} (or use the file \`imep keys export\` writes, which carries the name)`;
  return `intact, but ${u.keyOwner}'s key ${fingerprintText(u.fingerprint)} (${u.paths.join(', ')}) is trusted here under another name, ${names}, while the unit's signatures name '${u.keyOwner}': a key vouches only for the name it is trusted under — ${fix}`;
}

/** A shell word: as is when it is plain, else single-quoted. */
export function quoteArg(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
