/** The words of `imep campaign verify` for a unit whose files are intact (the caller decides the exit code by trust). */
import type { VerifyOk } from '../../../evidence/index.js';
import type { SignatureReport } from '../../../signing/index.js';

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
  const matched =
    r.rootMatched === undefined
      ? ''
      : r.rootMatched === 'seal' && r.scope === 'closeout'
        ? `; the expected root is the seal root ${r.sealRoot} (the closeout binds seal.json)`
        : `; the expected root is the ${r.rootMatched} root`;
  const pending = r.pending.length ? `; ${r.pending.length} post-seal files pending closeout` : '';
  return `unit ${r.unitId}: ${TRUST_WORDS[r.trust.status]} — ${r.filesChecked} files checked; verified to stage: ${STAGE_WORDS[r.stage]}; ${r.scope} root ${r.root}${matched}${pending}`;
}

const STAGE_ORDER: readonly VerifyOk['stage'][] = ['sealed', 'adjudicated', 'closed'];

/**
 * `--expected-stage S`: null when the unit reached S, else the refusal's words — a unit that shows an earlier stage
 * than its producer said it reached lost its later records (closeout.json, adjudication/): a rollback.
 */
export function stageShortfall(r: VerifyOk, expected: VerifyOk['stage']): string | null {
  if (STAGE_ORDER.indexOf(r.stage) >= STAGE_ORDER.indexOf(expected)) return null;
  const lost =
    expected === 'closed'
      ? r.stage === 'sealed'
        ? 'closeout.json and its adjudication records are'
        : 'closeout.json is'
      : 'its adjudication records are';
  return `the unit shows stage '${r.stage}', not '${expected}': ${lost} not in it (removed: a rollback, or the unit never got that far)`;
}

/** Warnings about the identity behind signatures (same-operator overrides, identities taken from the environment). */
export function identityWarnings(report: SignatureReport | undefined): string[] {
  return (report?.findings ?? [])
    .filter((f) => f.severity === 'warning')
    .map((f) => `${f.path}: ${f.finding}: ${f.detail}`);
}
