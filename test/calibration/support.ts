/** Suites derived from the registered one (protocols/calibration/shellgame-known-answers.yaml) by text edits. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SUITE_FILE = join(ROOT, 'protocols/calibration/shellgame-known-answers.yaml');

/** Campaign-level designs to keep (ids), with an optional campaign band count and quick block. */
export interface DerivedCampaigns {
  readonly designs: readonly string[];
  readonly bands?: number;
  readonly quick?: { readonly n: number; readonly campaigns: number };
}

/** The text of the registered suite's `campaigns:` block (up to the next top-level key or comment). */
function campaignsBlock(text: string): { start: number; end: number } {
  const start = text.search(/^campaigns:$/m);
  if (start < 0) throw new Error('the registered suite has no campaigns block');
  const next = text.slice(start).search(/\n[^\s]/);
  return { start, end: next < 0 ? text.length : start + next + 1 };
}

/**
 * The registered suite keeping only `designs` (ids), with `bands` campaigns and an optional quick block;
 * the campaign-level block is dropped unless `campaigns` names the campaign designs to keep.
 */
export function derivedSuite(
  designs: readonly string[],
  bands: number,
  quick?: { n: number; campaigns: number; simulated: number },
  campaigns?: DerivedCampaigns,
): string {
  let text = readFileSync(SUITE_FILE, 'utf8');
  const block = campaignsBlock(text);
  let camp = text.slice(block.start, block.end);
  text = text.slice(0, block.start) + text.slice(block.end);
  text = text
    .split('\n')
    .filter((l) => {
      const m = /^\s+- \{ id: ([a-z0-9-]+), checkpoint:/.exec(l);
      return m === null || designs.includes(m[1] as string);
    })
    .join('\n');
  text = text.replace(/bands: \{ start: 720000, count: 8 \}/, `bands: { start: 720000, count: ${bands} }`);
  if (quick)
    text = text.replace(
      /^quick: \{[^}]*\}/m,
      `quick: { n: ${quick.n}, campaigns: ${quick.campaigns}, simulated: ${quick.simulated} }`,
    );
  if (campaigns === undefined) return text;
  camp = camp
    .split('\n')
    .filter((l) => {
      const m = /^\s+- \{ id: ([a-z0-9-]+), checkpoint:/.exec(l);
      return m === null || campaigns.designs.includes(m[1] as string);
    })
    .join('\n');
  if (campaigns.bands !== undefined)
    camp = camp.replace(/bands: \{ start: (\d+), count: \d+ \}/, `bands: { start: $1, count: ${campaigns.bands} }`);
  if (campaigns.quick)
    camp = camp.replace(
      / {2}quick: \{[^}]*\}/,
      `  quick: { n: ${campaigns.quick.n}, campaigns: ${campaigns.quick.campaigns} }`,
    );
  return `${text.trimEnd()}\n\n${camp.trimEnd()}\n`;
}
