import { sha256Hex } from '../../core/index.js';
import {
  keyOwnerFinding,
  trustFinding,
  parseObject,
  short,
  type SignatureFinding,
  type SignatureFindingKind,
  checkRecordSignature,
} from '../../signing/index.js';
import type { TrustedKey, PrevLink } from '../../signing/index.js';

/**
 * The signatures of the post-seal amendments (the lines of amendments.jsonl after the prefix the seal
 * bound). In a signed unit each such line carries its author's signature (signature-block.ts) over the
 * line's content — which holds `prevSha256`, the hash of the line before it — with `signature.prev`
 * linking it to seal.json (the first post-seal line) or to the line before it
 * (`amendments.jsonl#A<n-1>` with that line's SHA-256), so a line cannot be forged, moved to another
 * unit, reordered or dropped from the middle without a finding. Findings (path amendments.jsonl, the
 * detail naming the line and its id):
 *   unsigned       a post-seal line without a signature in a signed unit, or when signatures are required;
 *   bad-signature  its signature does not verify over the line (the line was changed after signing);
 *   unknown-key / wrong-key  as for the chain's records (the author must own the signing key);
 *   chain-broken   its `signature.prev` is not seal.json / the line before it as they are now.
 * Lines that are not JSON, or not after the sealed prefix, are left to verify-pending.ts. Pure.
 */

export const AMENDMENTS_FILE = 'amendments.jsonl';

export interface AmendmentSignatureInput {
  /** seal.json's bytes (null when absent: nothing is post-seal). */
  readonly seal: Uint8Array | null;
  /** amendments.jsonl's bytes (null when absent). */
  readonly amendments: Uint8Array | null;
  readonly trusted: readonly TrustedKey[];
  /** The unit is signed (its seal or another chain record is): every post-seal line must be. */
  readonly unitSigned: boolean;
  readonly requireSigned?: boolean;
}

/** The `signature.prev` a post-seal amendment line must carry: seal.json for the first, else the line before it. */
export function amendmentPrevLink(
  sealSha256: string,
  firstPostSeal: boolean,
  prevId: string,
  prevSha256: string | null,
): PrevLink {
  return firstPostSeal || prevSha256 === null
    ? { file: 'seal.json', sha256: sealSha256 }
    : { file: `${AMENDMENTS_FILE}#${prevId}`, sha256: prevSha256 };
}

export function checkAmendmentSignatures(input: AmendmentSignatureInput): SignatureFinding[] {
  if (input.seal === null || input.amendments === null) return [];
  const seal = parseObject(input.seal);
  const prefix = seal?.['amendments'] as { bytes?: unknown; count?: unknown } | undefined;
  if (typeof prefix?.bytes !== 'number' || typeof prefix.count !== 'number') return [];
  const sealedBytes = prefix.bytes;
  const sealedCount = prefix.count;
  const bytes = Buffer.from(input.amendments);
  if (bytes.length <= sealedBytes) return [];
  const sealSha256 = sha256Hex(input.seal);
  const sealCheck = seal === null ? null : checkRecordSignature(seal);
  const sealVouched = sealCheck?.status === 'valid' && keyOwnerFinding(sealCheck.block, input.trusted) === null;
  const findings: SignatureFinding[] = [];
  const error = (finding: SignatureFindingKind, detail: string, related: string[] = []): void => {
    findings.push({ path: AMENDMENTS_FILE, finding, severity: 'error', detail, related });
  };
  const lines = bytes.subarray(sealedBytes).toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prevSha256: string | null =
    sealedBytes > 0 ? sha256Hex(lastLine(bytes.subarray(0, sealedBytes).toString('utf8'))) : null;
  let prevId = `A${sealedCount}`;
  for (const [i, text] of lines.entries()) {
    const record = parseObject(text);
    if (record === null) return findings; // not JSON: verify-pending.ts reports it
    const id = typeof record['id'] === 'string' ? record['id'] : `A${sealedCount + i + 1}`;
    const author = (record['author'] as { id?: unknown } | undefined)?.id;
    const what = `post-seal line ${i + 1} (${id}${typeof author === 'string' ? ` by ${author}` : ''}, line ${sealedCount + i + 1} of the log)`;
    const check = checkRecordSignature(record);
    if (check.status === 'unsigned') {
      if (input.unitSigned || input.requireSigned) {
        error(
          'unsigned',
          `${what} is not signed${input.unitSigned ? ", but the unit is (a post-seal amendment must carry its author's signature; forged or appended by hand?)" : '; signatures are required'}`,
        );
      }
    } else if (check.status === 'invalid') {
      error('bad-signature', `${what}: ${check.reason}`);
    } else {
      const { block } = check;
      const owner = trustFinding(AMENDMENTS_FILE, block, input.trusted, `${what}: `);
      if (owner !== null) findings.push(owner);
      if (typeof author === 'string' && author !== block.keyOwner)
        error('wrong-key', `${what} is signed with ${block.keyOwner}'s key, but its author is ${author}`);
      const want = amendmentPrevLink(sealSha256, i === 0, prevId, prevSha256);
      const got = block.prev;
      if (got === null || got.file !== want.file || got.sha256 !== want.sha256) {
        if (want.file === 'seal.json' && got !== null && got.file === 'seal.json' && owner === null && !sealVouched) {
          // a line its trusted author signed names seal.json as it was, and no trusted signature vouches for seal.json
          // as it is now: the seal changed after the line, not the line (related: when seal.json's own change is
          // reported already, this follows from it)
          findings.push({
            path: 'seal.json',
            finding: 'chain-broken',
            severity: 'error',
            detail: `changed after ${what} was chained to it: that signed line names seal.json with SHA-256 ${short(got.sha256)}, but it now hashes to ${short(want.sha256)}`,
            related: ['seal.json'],
          });
        } else {
          error(
            'chain-broken',
            `${what} is chained to ${got === null ? 'nothing' : `${got.file} (${short(got.sha256)})`}, but must be chained to ${want.file} (${short(want.sha256)}): moved, reordered, or a line before it was removed or changed`,
            want.file === 'seal.json' ? ['seal.json'] : [],
          );
        }
      }
    }
    prevSha256 = sha256Hex(text);
    prevId = id;
  }
  return findings;
}

function lastLine(text: string): string {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.at(-1) ?? '';
}
