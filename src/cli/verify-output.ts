import type { VerifyOk } from '../campaign/verify-types.js';
import type { SignatureReport } from '../signing/chain.js';

/** The words of `imep campaign verify` for a unit whose files are intact (the caller decides the exit code by trust). */

const STAGE_WORDS: Record<VerifyOk['stage'], string> = {
  sealed: 'sealed (not adjudicated)',
  adjudicated: 'adjudicated (not closed out)',
  closed: 'closed out',
};

const TRUST_WORDS: Record<VerifyOk['trust']['status'], string> = {
  trusted: 'intact and signed by trusted keys',
  untrusted: 'files intact, signers NOT trusted here',
  unsigned: 'files intact, UNSIGNED',
};

/** `unit <id>: <trust words> — N files checked; verified to stage: …; <scope> root R[; matched root]` */
export function describeVerified(r: VerifyOk): string {
  const matched = r.rootMatched === undefined
    ? ''
    : r.rootMatched === 'seal' && r.scope === 'closeout'
      ? `; the expected root is the seal root ${r.sealRoot} (the closeout binds seal.json)`
      : `; the expected root is the ${r.rootMatched} root`;
  const pending = r.pending.length ? `; ${r.pending.length} post-seal files pending closeout` : '';
  return `unit ${r.unitId}: ${TRUST_WORDS[r.trust.status]} — ${r.filesChecked} files checked; verified to stage: ${STAGE_WORDS[r.stage]}; ${r.scope} root ${r.root}${matched}${pending}`;
}

/** Warnings about the identity behind signatures (same-operator overrides, identities taken from the environment). */
export function identityWarnings(report: SignatureReport | undefined): string[] {
  return (report?.findings ?? []).filter((f) => f.severity === 'warning').map((f) => `${f.path}: ${f.finding}: ${f.detail}`);
}
