/**
 * Issue 31 §7: the verdict words protocols/README.md quotes for shipped protocols match a real run.
 * `shellgame-view-removal.yaml` runs through closeout here (~5 s, lite); every one of its criteria is excluded
 * (lite-memvla fails the competence gate on A_vis in ShellGameTouch-lite), and the sentence of protocols/README.md
 * that names `reads_blackout`/`reads_visible` must say so, not "holds". `shellgame-blackout.yaml`'s Q1 (49 s to
 * run; README.md's quick-start block quotes "Q1: not detected" with its claim and bound, asserted by its own e2e run) must be quoted with
 * the same word in protocols/README.md.
 */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const README = readFileSync(join(ROOT, 'protocols/README.md'), 'utf8');
const WORDS = ['holds', 'not detected', 'unresolved', 'invalid', 'excluded'] as const;

/** The sentence (to the next full stop followed by a space or line end) of protocols/README.md containing `needle`. */
function sentenceWith(needle: string): string {
  const flat = README.replace(/\s+/g, ' ');
  const at = flat.indexOf(needle);
  expect(at, `protocols/README.md mentions ${needle}`).toBeGreaterThanOrEqual(0);
  const start = Math.max(flat.lastIndexOf('. ', at), flat.lastIndexOf(': ', at)) + 2;
  const end = flat.indexOf('. ', at);
  return flat.slice(start, end < 0 ? undefined : end);
}

/** The quoted verdict words ("…" or *…*) of a sentence. */
function quotedWords(s: string): string[] {
  return WORDS.filter((w) => s.includes(`"${w}"`) || s.includes(`*${w}*`) || s.includes(`**${w}**`));
}

describe('protocols/README.md quotes the shipped verdicts', () => {
  it('shellgame-view-removal: reads_blackout and reads_visible read excluded in a real run and in the README', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imep-view-removal-'));
    copyFileSync(join(ROOT, 'protocols/shellgame-view-removal.yaml'), join(dir, 'vr.yaml'));
    const r = await imep(
      ['campaign', 'run', 'vr.yaml', '--through', 'closeout', '--same-operator-reason', 'single-operator check'],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const unit = unitIn(join(dir, 'campaigns')) as string;
    const adj = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as {
      verdicts: { criterion: string; verdict: string }[];
    };
    const word = new Map(adj.verdicts.map((v) => [v.criterion, v.verdict]));
    expect(word.get('reads_blackout')).toBe('excluded');
    expect(word.get('reads_visible')).toBe('excluded');
    const s = sentenceWith('`reads_blackout`/`reads_visible`');
    expect(quotedWords(s)).toEqual(['excluded']);
  }, 120_000);

  it('shellgame-blackout Q1 is quoted as README.md quotes it (not detected)', () => {
    const main = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(main).toMatch(
      /^\s+Q1: not detected — claim "D_N lies below \+10\.00 pp" excluded: D_N \[\+60\.64, \+69\.44\] pp /m,
    );
    expect(quotedWords(sentenceWith('`shellgame-blackout` Q1'))).toEqual(['not detected']);
  });
});
