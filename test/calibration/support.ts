/** Suites derived from the registered one (protocols/calibration/shellgame-known-answers.yaml) by text edits. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SUITE_FILE = join(ROOT, 'protocols/calibration/shellgame-known-answers.yaml');

/** The registered suite keeping only `designs` (ids), with `bands` campaigns and an optional quick block. */
export function derivedSuite(designs: readonly string[], bands: number, quick?: { n: number; campaigns: number; simulated: number }): string {
  let text = readFileSync(SUITE_FILE, 'utf8');
  text = text.split('\n').filter((l) => {
    const m = /^\s+- \{ id: ([a-z0-9-]+), checkpoint:/.exec(l);
    return m === null || designs.includes(m[1] as string);
  }).join('\n');
  text = text.replace(/bands: \{ start: 720000, count: 8 \}/, `bands: { start: 720000, count: ${bands} }`);
  if (quick) text = text.replace(/quick: \{[^}]*\}/, `quick: { n: ${quick.n}, campaigns: ${quick.campaigns}, simulated: ${quick.simulated} }`);
  return text;
}
