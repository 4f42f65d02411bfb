/** The result types of verification (verify.ts). */
import type { SignatureReport, TrustReport } from '../../signing/index.js';

/**
 * 'signature': a record's signature or chain link is bad (src/signing/chain.ts names which) — never a key this
 * verifier merely does not trust (VerifyOk.trust). 'root-mismatch': the root cited outside the unit
 * (`expectedRoot`) is none of the unit's roots: another unit, a rolled-back one (closeout removed), or a wrong citation.
 */
export const TAMPER_KINDS = [
  'modified',
  'truncated',
  'appended',
  'missing',
  'renamed',
  'stray',
  'signature',
  'root-mismatch',
] as const;
export type TamperKind = (typeof TAMPER_KINDS)[number];

export interface VerifyIssue {
  /** Relative path in the unit ('/'-separated); for 'renamed', the original path. */
  readonly path: string;
  readonly kind: TamperKind;
  readonly detail: string;
  /** For 'renamed': where the file's bytes are now. */
  readonly renamedTo?: string;
}

export interface VerifyOk {
  readonly ok: true;
  readonly unitId: string;
  /** 'closeout' when closeout.json binds the unit, else 'seal'. */
  readonly scope: 'seal' | 'closeout';
  /** The Merkle root to cite: the closeout's when closed, else the seal's. */
  readonly root: string;
  readonly sealRoot: string;
  /** The SHA-256 of precommit.json as the seal lists it: with unitId, the unit instance (seen-store.ts). */
  readonly precommitSha256: string | null;
  /** With an expected root: which root it equals ('seal' for a closed unit cited by its seal root). */
  readonly rootMatched?: 'seal' | 'closeout';
  readonly filesChecked: number;
  /** Post-seal files accepted but not yet bound by a closeout (adjudication records, amendments). */
  readonly pending: string[];
  /** The signature chain: who signed what, and every finding (warnings included: a recorded same-operator override). */
  readonly signatures?: SignatureReport;
  /** Whether this verifier trusts the signers (src/signing/trust.ts); integrity does not depend on it. */
  readonly trust: TrustReport;
  /** The last stage the unit's records show: sealed, adjudicated (records pending a closeout) or closed (closed out). */
  readonly stage: UnitStage;
  /** The latest adjudication record (adjudication/adjudication-NNN.json: NNN and its SHA-256), null when none. */
  readonly latestAdjudication: { readonly n: number; readonly sha256: string } | null;
  /** The lines of amendments.jsonl (sealed and post-seal). */
  readonly amendments: number;
}

export type UnitStage = 'sealed' | 'adjudicated' | 'closed';

export interface VerifyFailed {
  readonly ok: false;
  readonly unitId: string | null;
  /** The first bad file in sorted path order. */
  readonly first: VerifyIssue;
  readonly issues: VerifyIssue[];
  readonly filesChecked: number;
  readonly signatures?: SignatureReport;
  readonly trust?: TrustReport;
}

export type VerifyResult = VerifyOk | VerifyFailed;
