import type { SignatureReport } from './chain.js';
import { fingerprintText } from './signature-block.js';

/**
 * One line describing a unit's signature chain for `imep campaign verify`: the status, who signed
 * which record (operator and key fingerprint prefix), the unsigned records, and every finding by
 * severity (a record signed by a key this verifier does not trust is counted apart, as untrusted: not an error of the
 * unit). Pure; the caller prints it.
 *
 *   signatures: signed — precommit.json, seal.json by alice (ed25519:3f2a…64 hex); adjudication-001.json by bob (ed25519:…); 0 errors, 1 warning: …
 *
 * Records are grouped by signer and key, in chain order of each group's first record; the fingerprint is printed
 * whole (fingerprintText), as everywhere else. Findings that say the same thing of several records are listed once,
 * with those records.
 */
export function describeSignatures(report: SignatureReport): string {
  const groups = new Map<string, { signer: string; fingerprint: string; paths: string[] }>();
  for (const s of report.signed) {
    const key = `${s.signer}\u0000${s.fingerprint}`;
    const g = groups.get(key) ?? { signer: s.signer, fingerprint: s.fingerprint, paths: [] };
    g.paths.push(s.path);
    groups.set(key, g);
  }
  const signed = [...groups.values()].map(
    (g) => `${g.paths.join(', ')} by ${g.signer} (${fingerprintText(g.fingerprint)})`,
  );
  const parts: string[] = [];
  if (signed.length > 0) parts.push(signed.join('; '));
  if (report.unsigned.length > 0) parts.push(`unsigned: ${report.unsigned.join(', ')}`);
  // a record signed by a key this verifier does not hold is not an error of the unit: trust is the verifier's call
  // nor is one signed by a key it trusts under another name (wrong-key with `trust`): both are the verifier's call
  const isTrust = (f: SignatureReport['findings'][number]): boolean => f.trust === true || f.finding === 'unknown-key';
  const untrusted = report.findings.filter((f) => f.severity === 'error' && isTrust(f));
  const errors = report.findings.filter((f) => f.severity === 'error' && !isTrust(f));
  const warnings = report.findings.filter((f) => f.severity === 'warning');
  const count = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  let tail = `${count(errors.length, 'error')}, ${untrusted.length > 0 ? `${untrusted.length} signed by keys not trusted here, ` : ''}${count(warnings.length, 'warning')}`;
  // the same finding with the same detail on several records (one untrusted key signing five records) is one entry
  // naming its records, not five copies of one sentence
  const listed = new Map<string, string[]>();
  const list = (f: SignatureReport['findings'][number], label: string): void => {
    const what = `${f.finding} [${label}] (${f.detail})`;
    listed.set(what, [...(listed.get(what) ?? []), f.path]);
  };
  for (const f of errors) list(f, f.severity);
  for (const f of untrusted) list(f, 'untrusted');
  for (const f of warnings) list(f, f.severity);
  if (listed.size > 0) tail += `: ${[...listed].map(([what, paths]) => `${paths.join(', ')} ${what}`).join('; ')}`;
  return `signatures: ${report.status}${parts.length > 0 ? ` — ${parts.join('; ')}` : ''}; ${tail}`;
}
