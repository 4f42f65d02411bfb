import type { SignatureReport } from './chain.js';

/**
 * One line describing a unit's signature chain for `imep campaign verify`: the status, who signed
 * which record (operator and key fingerprint prefix), the unsigned records, and every finding by
 * severity. Pure; the caller prints it.
 *
 *   signatures: signed — precommit.json by alice (ed25519 3f2a9c01…), seal.json by alice (…); 0 errors, 1 warning: adjudication-001.json same-operator (…)
 */
export function describeSignatures(report: SignatureReport): string {
  const signed = report.signed.map((s) => `${s.path} by ${s.signer} (${s.fingerprint.slice(0, 16)}…)`);
  const parts: string[] = [];
  if (signed.length > 0) parts.push(signed.join(', '));
  if (report.unsigned.length > 0) parts.push(`unsigned: ${report.unsigned.join(', ')}`);
  const errors = report.findings.filter((f) => f.severity === 'error');
  const warnings = report.findings.filter((f) => f.severity === 'warning');
  const count = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  let tail = `${count(errors.length, 'error')}, ${count(warnings.length, 'warning')}`;
  const listed = [...errors, ...warnings].map((f) => `${f.path} ${f.finding} [${f.severity}] (${f.detail})`);
  if (listed.length > 0) tail += `: ${listed.join('; ')}`;
  return `signatures: ${report.status}${parts.length > 0 ? ` — ${parts.join('; ')}` : ''}; ${tail}`;
}
