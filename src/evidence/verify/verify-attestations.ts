import { createHash, verify as edVerify, type KeyObject } from 'node:crypto';
import { basename } from 'node:path';
import { sha256Hex } from '../../core/index.js';
import { attestationPaths, attestedFile } from '../attestation/index.js';
import { IMEP_PREDICATE_TYPE, IN_TOTO_STATEMENT_TYPE } from '../attestation/index.js';
import { decodePublicKey, dsseKeyId, dssePae, IN_TOTO_PAYLOAD_TYPE, minisignKeyId } from '../../signing/index.js';
import type { VerifyIssue } from './verify-types.js';

/**
 * verify's check of the unit's attestations/ (attestation/write.ts), which no manifest binds (each signs a record
 * written after the manifest that could): every attestation file present must verify against the record it names
 * — its current bytes, and the key that record's own signature carries — and each record's pair must be complete.
 * Damage is reported as 'modified' (bytes that do not verify) or 'missing' (one of a pair gone). An attestation of a
 * record that is gone is left alone (a rollback reads as the earlier stage, as before); a stage whose two files are
 * both gone is not detected — the stock-tool recipe (docs/verify.md) then finds no signature of that stage.
 */
export function attestationIssues(present: readonly string[], bytesOf: (path: string) => Buffer | null): VerifyIssue[] {
  const issues: VerifyIssue[] = [];
  const seen = new Set(present);
  const records = new Set<string>();
  for (const path of present) {
    const record = attestedFile(path);
    if (record === null) continue;
    const recordBytes = bytesOf(record);
    if (recordBytes === null) continue;
    records.add(record);
    const bytes = bytesOf(path);
    const key = signerKey(recordBytes);
    const why =
      bytes === null
        ? 'it cannot be read'
        : key === null
          ? `${record} carries no signature key to check it with (imep attests signed records only)`
          : path.endsWith('.minisig')
            ? minisigProblem(bytes, recordBytes, key)
            : envelopeProblem(bytes, recordBytes, basename(record), key);
    if (why !== null) issues.push({ path, kind: 'modified', detail: `attestation of ${record}: ${why}` });
  }
  for (const record of records) {
    const pair = attestationPaths(record);
    for (const p of [pair.minisig, pair.statement])
      if (!seen.has(p))
        issues.push({
          path: p,
          kind: 'missing',
          detail: `the other attestation of ${record} is here; imep writes both`,
        });
  }
  return issues;
}

function signerKey(recordBytes: Buffer): KeyObject | null {
  try {
    const r = JSON.parse(recordBytes.toString('utf8')) as { signature?: { publicKey?: unknown } };
    const b64 = r.signature?.publicKey;
    return typeof b64 === 'string' ? decodePublicKey(b64) : null;
  } catch {
    return null;
  }
}

function minisigProblem(bytes: Buffer, file: Buffer, key: KeyObject): string | null {
  const lines = bytes.toString('utf8').split('\n');
  if (lines.length !== 5 || lines[4] !== '' || !lines[0]!.startsWith('untrusted comment: '))
    return 'not a minisign signature file (4 lines)';
  if (!lines[2]!.startsWith('trusted comment: ')) return "its third line is not minisign's trusted comment";
  const sig = Buffer.from(lines[1]!, 'base64');
  if (sig.length !== 74 || sig.subarray(0, 2).toString('latin1') !== 'ED' || lines[1] !== sig.toString('base64'))
    return 'its signature line is not a prehashed minisign signature';
  if (!sig.subarray(2, 10).equals(minisignKeyId(key)))
    return 'its key id is not the one of the key that signed the record';
  const digest = createHash('blake2b512').update(file).digest();
  if (!edVerify(null, digest, key, sig.subarray(10))) return 'its signature does not verify against the record';
  const global = Buffer.from(lines[3]!, 'base64');
  const trusted = Buffer.from(lines[2]!.slice('trusted comment: '.length), 'utf8');
  if (
    global.toString('base64') !== lines[3] ||
    !edVerify(null, Buffer.concat([sig.subarray(10), trusted]), key, global)
  )
    return 'its trusted comment is not the one signed';
  return null;
}

function envelopeProblem(bytes: Buffer, file: Buffer, name: string, key: KeyObject): string | null {
  let env: { payload?: unknown; payloadType?: unknown; signatures?: unknown };
  try {
    env = JSON.parse(bytes.toString('utf8')) as typeof env;
  } catch {
    return 'not JSON (a DSSE envelope)';
  }
  if (typeof env.payload !== 'string' || env.payloadType !== IN_TOTO_PAYLOAD_TYPE || !Array.isArray(env.signatures))
    return `not a DSSE envelope of type ${IN_TOTO_PAYLOAD_TYPE}`;
  const payload = Buffer.from(env.payload, 'base64');
  const sigs = env.signatures as { keyid?: unknown; sig?: unknown }[];
  const mine = sigs.find((s) => s.keyid === dsseKeyId(key));
  if (mine === undefined || typeof mine.sig !== 'string') return 'no signature by the key that signed the record';
  if (!edVerify(null, dssePae(IN_TOTO_PAYLOAD_TYPE, payload), key, Buffer.from(mine.sig, 'base64')))
    return 'its signature does not verify';
  let statement: { _type?: unknown; predicateType?: unknown; subject?: unknown };
  try {
    statement = JSON.parse(payload.toString('utf8')) as typeof statement;
  } catch {
    return 'its payload is not JSON';
  }
  const subject = Array.isArray(statement.subject)
    ? (statement.subject as { name?: unknown; digest?: { sha256?: unknown } }[])
    : [];
  if (statement._type !== IN_TOTO_STATEMENT_TYPE || statement.predicateType !== IMEP_PREDICATE_TYPE)
    return 'its payload is not an IMEP in-toto statement';
  if (subject.length !== 1 || subject[0]!.name !== name || subject[0]!.digest?.sha256 !== sha256Hex(file))
    return `its subject is not ${name} as it stands`;
  return null;
}
