/**
 * The stdout lines of `imep calibrate` after the three paths: one line per check of a calibration result (false
 * positive, power, agreement, the IMEP verdict path, the noisy design), and whether every check passed.
 */
import type { CalibrationResult } from '../../../calibration/index.js';

type Checks = CalibrationResult['checks'];

const passed = (ok: boolean): string => (ok ? 'passed' : 'FAILED');

/** One line per check (noisyLines: the noisy design's lines, from src/calibration). */
export function checkLines(c: Checks, noisyLines: (noisy: Checks['noisy']) => readonly string[]): string[] {
  const lines: string[] = [];
  for (const d of c.falsePositive.designs)
    lines.push(
      `false-positive ${d.id}: UB95 ${(100 * d.upper95).toFixed(2)}% (limit ${(100 * c.falsePositive.limit).toFixed(2)}%) ${passed(d.passed)}`,
    );
  for (const d of c.power.designs)
    lines.push(
      `power ${d.id}: real ${(100 * d.real).toFixed(1)}%, simulated ${(100 * d.simulated).toFixed(1)}% ${passed(d.passed)}`,
    );
  lines.push(
    `agreement: ${c.agreement.agreeing}/${c.agreement.compared} within |z| ≤ ${c.agreement.zLimit} ${passed(c.agreement.passed)}`,
  );
  if (c.campaignVerdicts.campaigns > 0)
    lines.push(
      `IMEP verdict path: ${c.campaignVerdicts.matching}/${c.campaignVerdicts.campaigns} campaign-level verdicts match the frozen test ${passed(c.campaignVerdicts.passed)}`,
    );
  lines.push(...noisyLines(c.noisy));
  return lines;
}

/** Every check passed. */
export function allPassed(c: Checks): boolean {
  return (
    c.falsePositive.designs.every((d) => d.passed) &&
    c.power.designs.every((d) => d.passed) &&
    c.agreement.passed &&
    c.campaignVerdicts.passed &&
    (c.noisy?.passed ?? true)
  );
}
