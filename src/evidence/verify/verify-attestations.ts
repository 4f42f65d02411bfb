import { verify as edVerify, type KeyObject } from 'node:crypto';
import { basename } from 'node:path';
import { attestationPaths, attestedFile } from '../attestation/index.js';
import { IMEP_PREDICATE_TYPE, IN_TOTO_STATEMENT_TYPE } from '../attestation/index.js';
import { decodePublicKey, dsseKeyId, dssePae, IN_TOTO_PAYLOAD_TYPE, minisignKeyId } from '../../signing/index.js';
import type { VerifyIssue } from './verify-types.js';

/**
 * verify's check of the unit's attestations/ (attestation/write.ts), which no manifest binds (each signs a record
 * written after the manifest that could). Each attestation file present must be intact as a signature by the key the
 * record it names carries: the minisign file's comments and global signature, the DSSE envelope's signature over its
 * statement, both in the exact form imep writes; and each record's pair must be complete. Damage is reported as
 * 'modified' or 'missing'. What they sign is the stock tools' business (docs/verify.md): a record changed since is
 * reported on the record itself. An attestation whose key id is not the record's key (the record re-signed by
 * another key: reported on the record, or untrusted) or of a record that is gone (a rollback reads as the earlier
 * stage, as before) is left alone; a stage whose two files are both gone is not detected here.
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
    const signer = signerOf(recordBytes);
    const why =
      bytes === null
        ? 'it cannot be read'
        : signer === null
          ? null // an unsigned record: the signature chain's check reports it
          : path.endsWith('.minisig')
            ? minisigProblem(bytes, record, signer)
            : envelopeProblem(bytes, signer.key);
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

interface Signer {
  readonly key: KeyObject;
  readonly unitId: string;
  readonly operator: string;
}

function signerOf(recordBytes: Buffer): Signer | null {
  try {
    const r = JSON.parse(recordBytes.toString('utf8')) as {
      signature?: { publicKey?: unknown };
      unitId?: unknown;
      operator?: { id?: unknown };
    };
    const b64 = r.signature?.publicKey;
    const key = typeof b64 === 'string' ? decodePublicKey(b64) : null;
    return key === null ? null : { key, unitId: String(r.unitId), operator: String(r.operator?.id) };
  } catch {
    return null;
  }
}

const STAGE_OF: Record<string, string> = { seal: 'sealed', closeout: 'closed', adjudication: 'adjudicated' };

function minisigProblem(bytes: Buffer, record: string, signer: Signer): string | null {
  const lines = bytes.toString('utf8').split('\n');
  const sig = Buffer.from(lines[1] ?? '', 'base64');
  if (sig.length !== 74 || sig.subarray(0, 2).toString('latin1') !== 'ED' || lines[1] !== sig.toString('base64'))
    return 'its signature line is not a prehashed minisign signature';
  if (!sig.subarray(2, 10).equals(minisignKeyId(signer.key))) return null; // another key: the record's own check
  const name = basename(record);
  const stage = STAGE_OF[name.replace(/(-\d{3})?\.json$/, '')];
  const untrusted = `untrusted comment: IMEP ${stage} ${name} of unit ${signer.unitId}, signed by ${signer.operator}`;
  if (lines.length !== 5 || lines[4] !== '' || lines[0] !== untrusted)
    return 'not the minisign signature file imep writes (4 lines, its untrusted comment naming the record)';
  if (!lines[2]!.startsWith('trusted comment: ')) return "its third line is not minisign's trusted comment";
  const global = Buffer.from(lines[3]!, 'base64');
  const trusted = Buffer.from(lines[2]!.slice('trusted comment: '.length), 'utf8');
  if (
    global.toString('base64') !== lines[3] ||
    !edVerify(null, Buffer.concat([sig.subarray(10), trusted]), signer.key, global)
  )
    return 'its signature and trusted comment are not the ones signed';
  return null;
}

function envelopeProblem(bytes: Buffer, key: KeyObject): string | null {
  let env: { payload?: unknown; payloadType?: unknown; signatures?: unknown };
  try {
    env = JSON.parse(bytes.toString('utf8')) as typeof env;
  } catch {
    return 'not JSON (a DSSE envelope)';
  }
  if (typeof env.payload !== 'string' || env.payloadType !== IN_TOTO_PAYLOAD_TYPE || !Array.isArray(env.signatures))
    return `not a DSSE envelope of type ${IN_TOTO_PAYLOAD_TYPE}`;
  if (bytes.toString('utf8') !== `${JSON.stringify(env, null, 2)}\n`) return 'not in the form imep writes it';
  const payload = Buffer.from(env.payload, 'base64');
  if (payload.toString('base64') !== env.payload) return 'its payload is not base64';
  const sigs = env.signatures as { keyid?: unknown; sig?: unknown }[];
  const mine = sigs.find((s) => s.keyid === dsseKeyId(key));
  if (mine === undefined) return null; // another key: the record's own check
  if (
    typeof mine.sig !== 'string' ||
    !edVerify(null, dssePae(IN_TOTO_PAYLOAD_TYPE, payload), key, Buffer.from(mine.sig, 'base64'))
  )
    return 'its signature does not verify';
  let statement: { _type?: unknown; predicateType?: unknown };
  try {
    statement = JSON.parse(payload.toString('utf8')) as typeof statement;
  } catch {
    return 'its payload is not JSON';
  }
  if (statement._type !== IN_TOTO_STATEMENT_TYPE || statement.predicateType !== IMEP_PREDICATE_TYPE)
    return 'its payload is not an IMEP in-toto statement';
  return null;
}
