import { sha256Hex } from '../core/index.js';
import type { TrustedKey } from './key-store.js';
import { checkRecordSignature } from './sign-record.js';
import { fingerprintText, type PrevLink, type SignatureBlock } from './signature-block.js';

/**
 * The chain of signatures of an evidence unit: precommit.json → seal.json → adjudication-001.json →
 * (adjudication-002.json → …) → closeout.json, with each cross-check-NNN.json chained to the
 * adjudication it checks and the closeout to the cross-check it relies on (ChainRecord.after says
 * which record a record must follow when it is not the one before it). For each record present:
 *
 *   bad-signature  its signature block is malformed, its key is not Ed25519, the fingerprint is not
 *                  the key's, or the signature does not verify over the record (tampered);
 *   unknown-key    the signing key is not in the trust store (`<keys dir>/*.pub`): unknown or removed;
 *   wrong-key      the trust store holds the key under another operator than the block names, or the
 *                  record names another operator than the key's owner;
 *   chain-broken   `signature.prev` is not the previous record of the chain with the SHA-256 of its
 *                  bytes as they are now (a record re-signed, replaced or signed out of order);
 *   unsigned       a record without a signature after a signed one (signature removed?), or any
 *                  unsigned record when signatures are required;
 *   same-operator  ROLE RULE: an adjudication signed by the key of an operator who ran the conditions
 *                  (by the key owner's name, or by a fingerprint that operator's records or .pub use).
 *                  An ERROR, unless the adjudication recorded a same-operator override: then a WARNING
 *                  naming the override.
 *   identity       (WARNING) an adjudication whose operator id came from the environment (IMEP_OPERATOR: anyone
 *                  can set it) or whose signing key was created by the very command that adjudicated (no history
 *                  before it): the two-operator rule rests on names nothing vouches for — never passed silently.
 * Pure: the caller reads the files, the run record's operators and the trust store.
 */

export const SIGNATURE_FINDINGS = [
  'bad-signature',
  'unknown-key',
  'wrong-key',
  'chain-broken',
  'unsigned',
  'same-operator',
  'identity',
] as const;
export type SignatureFindingKind = (typeof SIGNATURE_FINDINGS)[number];

export interface SignatureFinding {
  /** Unit-relative path of the record. */
  readonly path: string;
  readonly finding: SignatureFindingKind;
  readonly severity: 'error' | 'warning';
  readonly detail: string;
  /** Other records the finding follows from (chain-broken: the previous record named and expected). */
  readonly related: string[];
  /**
   * A finding about TRUST, not integrity: the signature verifies with the key the record carries, but this
   * verifier's trust store does not hold that key (unknown-key) or holds it under another name (wrong-key).
   * verify reports such a unit as intact but untrusted (trust.ts), never as tampered.
   */
  readonly trust?: true;
  /**
   * For a trust finding: the signing key's owner as the record names it, its fingerprint, and (wrong-key) the
   * names the trust store holds that key under instead.
   */
  readonly signer?: { readonly keyOwner: string; readonly fingerprint: string; readonly heldAs?: readonly HeldAs[] };
}

/** A name a trust store holds a key under, and the file that holds it. */
export interface HeldAs {
  readonly operator: string;
  readonly file: string;
}

export interface SignedRecordInfo {
  readonly path: string;
  readonly signer: string;
  readonly fingerprint: string;
  readonly prev: PrevLink | null;
}

export interface SignatureReport {
  /** 'signed': every chain record is signed; 'unsigned': none is; 'partial': some are. */
  readonly status: 'signed' | 'unsigned' | 'partial';
  /** Records whose signature verified (trusted or not). */
  readonly signed: SignedRecordInfo[];
  readonly unsigned: string[];
  readonly findings: SignatureFinding[];
}

export interface ChainRecord {
  /** Unit-relative path. */
  readonly path: string;
  readonly bytes: Uint8Array;
  /**
   * The path of the record this one must be chained to (its `signature.prev`), when that is not the
   * record just before it in `records` (a cross-check → the adjudication it checks; a re-adjudication →
   * the adjudication it supersedes; the closeout → the cross-check it relies on). null: the first record.
   */
  readonly after?: string | null;
}

export interface ChainCheckInput {
  /** The chain's records that exist, in chain order. */
  readonly records: readonly ChainRecord[];
  /** The operators who ran the conditions (the formal run record's sessions). */
  readonly ranBy: readonly string[];
  readonly trusted: readonly TrustedKey[];
  /** Every record must be signed (default: only those after the first signed one). */
  readonly requireSigned?: boolean;
}

/** A hash as findings show it: its first 12 hex digits. */
export const short = (h: string): string => `${h.slice(0, 12)}…`;

/** The JSON object in `bytes` (a record or a log line), or null when they hold none. */
export function parseObject(bytes: Uint8Array | string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Whether the trust store holds a signature block's key under the operator the block names: an unknown-key or
 * wrong-key finding (its detail, without the record's name), or null.
 */
export function keyOwnerFinding(
  block: SignatureBlock,
  trusted: readonly TrustedKey[],
): {
  readonly finding: 'unknown-key' | 'wrong-key';
  readonly detail: string;
  /** wrong-key: the names (and files) the trust store holds the key under. */
  readonly heldAs?: readonly HeldAs[];
} | null {
  const owners = trusted.filter((t) => t.fingerprint === block.fingerprint).map((t) => t.operator);
  if (owners.length === 0) {
    const sameName = trusted.filter((t) => t.operator === block.keyOwner).map((t) => fingerprintText(t.fingerprint));
    const clash =
      sameName.length === 0
        ? ''
        : `; the key store holds another key for ${block.keyOwner} (${sameName.join(', ')}): a new key of theirs, or a forgery`;
    return {
      finding: 'unknown-key',
      detail: `signed by ${block.keyOwner}'s key ${fingerprintText(block.fingerprint)}, which is not in the key store (unknown or removed key)${clash}`,
    };
  }
  if (!owners.includes(block.keyOwner)) {
    const heldAs = trusted
      .filter((t) => t.fingerprint === block.fingerprint)
      .map((t) => ({ operator: t.operator, file: t.file }));
    return {
      finding: 'wrong-key',
      detail: `signed by ${block.keyOwner}'s key ${fingerprintText(block.fingerprint)}, which this verifier trusts under another name: ${heldAs.map((h) => `${h.operator} (${h.file})`).join(', ')} — a key vouches only for the name it is trusted under`,
      heldAs,
    };
  }
  return null;
}

/** A trust finding of a record (see SignatureFinding.trust), or null when the key store holds the key under the name the block gives. */
export function trustFinding(
  path: string,
  block: SignatureBlock,
  trusted: readonly TrustedKey[],
  prefix = '',
): SignatureFinding | null {
  const owner = keyOwnerFinding(block, trusted);
  if (owner === null) return null;
  return {
    path,
    finding: owner.finding,
    severity: 'error',
    detail: `${prefix}${owner.detail}`,
    related: [],
    trust: true,
    signer: {
      keyOwner: block.keyOwner,
      fingerprint: block.fingerprint,
      ...(owner.heldAs === undefined ? {} : { heldAs: owner.heldAs }),
    },
  };
}

function operatorId(record: Record<string, unknown>): string | null {
  const op = record['operator'];
  const id = op !== null && typeof op === 'object' ? (op as Record<string, unknown>)['id'] : undefined;
  return typeof id === 'string' ? id : null;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function prevProblem(got: PrevLink | null, want: PrevLink | null): string | null {
  if (want === null)
    return got === null ? null : `names ${got.file} as the previous record, but it is the first record of the chain`;
  if (got === null) return `names no previous record; the chain has ${want.file} before it`;
  if (got.file !== want.file)
    return `names ${got.file} as the previous signed record; the chain has ${want.file} before it (signed out of order?)`;
  if (got.sha256 !== want.sha256) {
    return `names ${want.file} with SHA-256 ${short(got.sha256)}, but it now hashes to ${short(want.sha256)} (${want.file} was changed or re-signed after this record was signed)`;
  }
  return null;
}

interface Checked {
  readonly path: string;
  readonly record: Record<string, unknown> | null;
  readonly block: SignatureBlock | null;
}

export function checkSignatureChain(input: ChainCheckInput): SignatureReport {
  const findings: SignatureFinding[] = [];
  const signed: SignedRecordInfo[] = [];
  const unsigned: string[] = [];
  const checked: Checked[] = [];
  const error = (path: string, finding: SignatureFindingKind, detail: string, related: string[] = []): void => {
    findings.push({ path, finding, severity: 'error', detail, related });
  };
  let firstSigned: string | null = null;
  let carried = 0;
  input.records.forEach((rec, i) => {
    const record = parseObject(rec.bytes);
    const check = record === null ? { status: 'unsigned' as const } : checkRecordSignature(record);
    if (check.status === 'unsigned') {
      unsigned.push(rec.path);
      if (record !== null && (firstSigned !== null || input.requireSigned)) {
        error(
          rec.path,
          'unsigned',
          firstSigned !== null
            ? `is not signed, but ${firstSigned} before it is (signature removed?)`
            : 'is not signed; signatures are required',
        );
      }
      checked.push({ path: rec.path, record, block: null });
      return;
    }
    carried++;
    firstSigned ??= rec.path;
    if (check.status === 'invalid') {
      error(rec.path, 'bad-signature', check.reason);
      checked.push({ path: rec.path, record, block: null });
      return;
    }
    const { block } = check;
    signed.push({ path: rec.path, signer: block.keyOwner, fingerprint: block.fingerprint, prev: block.prev });
    checked.push({ path: rec.path, record, block });
    const owner = trustFinding(rec.path, block, input.trusted);
    if (owner !== null) findings.push(owner);
    const op = record === null ? null : operatorId(record);
    if (op !== null && op !== block.keyOwner)
      error(rec.path, 'wrong-key', `signed with ${block.keyOwner}'s key, but the record names operator ${op}`);
    const wantPath = rec.after === undefined ? (input.records[i - 1]?.path ?? null) : rec.after;
    const prev = wantPath === null ? undefined : input.records.find((r) => r.path === wantPath);
    const problem =
      wantPath !== null && prev === undefined
        ? `must be chained to ${wantPath}, which is not in the unit`
        : prevProblem(block.prev, prev === undefined ? null : { file: prev.path, sha256: sha256Hex(prev.bytes) });
    if (problem !== null)
      error(rec.path, 'chain-broken', problem, [
        ...new Set([block.prev?.file, prev?.path].filter((p): p is string => p !== undefined)),
      ]);
  });
  findings.push(...roleFindings(checked, input));
  const status = carried === 0 ? 'unsigned' : unsigned.length === 0 ? 'signed' : 'partial';
  return { status, signed, unsigned, findings };
}

/** The identity warning of an adjudication record (see the module comment), or null. */
export function identityWarning(record: Record<string, unknown>): string | null {
  const op = record['operator'];
  if (op === null || typeof op !== 'object') return null;
  const { id, source } = op as Record<string, unknown>;
  const why = [
    ...(source === 'env' ? ['its operator id came from IMEP_OPERATOR, which anyone can set'] : []),
    ...(record['operatorKeyCreated'] === true
      ? ['its signing key was created by the same command that adjudicated (no history before it)']
      : []),
  ];
  return why.length === 0
    ? null
    : `adjudicated as ${String(id)}: ${why.join('; ')} — the key's fingerprint, not the name, identifies the adjudicator`;
}

/** The role rule for adjudications (see the module comment). */
function roleFindings(checked: readonly Checked[], input: ChainCheckInput): SignatureFinding[] {
  const out: SignatureFinding[] = [];
  for (const c of checked) {
    if (c.block === null || c.record === null || c.record['kind'] !== 'imep.adjudication') continue;
    const identity = identityWarning(c.record);
    if (identity !== null)
      out.push({ path: c.path, finding: 'identity', severity: 'warning', detail: identity, related: [] });
    const runners = new Set([...input.ranBy, ...strings(c.record['ranBy'])]);
    if (runners.size === 0) continue;
    const runnerKeys = new Set([
      ...input.trusted.filter((t) => runners.has(t.operator)).map((t) => t.fingerprint),
      ...checked
        .filter((o) => o.block !== null && o !== c && runners.has(o.block.keyOwner))
        .map((o) => o.block!.fingerprint),
    ]);
    const byName = runners.has(c.block.keyOwner);
    if (!byName && !runnerKeys.has(c.block.fingerprint)) continue;
    const who = byName
      ? `${c.block.keyOwner}, who ran the conditions`
      : `a key also used by the operator(s) who ran the conditions (${[...runners].join(', ')})`;
    const override = c.record['sameOperatorOverride'];
    const reason =
      override !== null && typeof override === 'object' ? (override as Record<string, unknown>)['reason'] : undefined;
    if (typeof reason === 'string' && reason.trim() !== '') {
      const by = (override as Record<string, unknown>)['by'];
      out.push({
        path: c.path,
        finding: 'same-operator',
        severity: 'warning',
        detail: `adjudication signed by ${who}; same-operator override recorded${typeof by === 'string' ? ` by ${by}` : ''}: "${reason.trim()}"`,
        related: [],
      });
    } else {
      out.push({
        path: c.path,
        finding: 'same-operator',
        severity: 'error',
        detail: `adjudication signed by ${who}, and no same-operator override is recorded`,
        related: [],
      });
    }
  }
  return out;
}
