/**
 * protocols/shellgame-donor-swap.yaml through the real CLI and closeout: same-fact (S) and different-fact (T) donor
 * swaps at read time on the lite checkpoint's episode-local bank, paired by the fact ShellGameTouch-lite declares.
 * Every number asserted is counted from the sealed rows or read from the adjudication: the positive control
 * follows the fact in its memory — T changes every outcome it can, S none — so θ = ρ_T − ρ_S holds (Q4), the
 * question the blackout ladder's S_pi/T_mu leave unresolved.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

interface Row {
  readonly condition: string;
  readonly seed: number;
  readonly status: string;
  readonly success: boolean | null;
  readonly failure: { code: string } | null;
  readonly reads: { covered: boolean | null; substituted: number; substitutedUnchanged: number };
}

describe('shellgame-donor-swap: S and T at read time through closeout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-e2e-swap-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('T flips what A won, S flips nothing, every swapped decision is covered; Q4 holds', async () => {
    const r = await imep(
      [
        'campaign',
        'run',
        join(ROOT, 'protocols/shellgame-donor-swap.yaml'),
        '--through',
        'closeout',
        '--same-operator-reason',
        'e2e test',
        '--campaigns-dir',
        'c',
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}Q4: holds — /m);
    expect(r.stdout).toMatch(/^ {2}Q3_T: holds — /m);
    expect(r.stdout).toMatch(/^cross-checked .*: agrees$/m);
    const unit = unitIn(join(dir, 'c')) as string;
    const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    const a = new Map(rows.filter((x) => x.condition === 'A').map((x) => [x.seed, x.success]));
    const ran = (c: string): Row[] => rows.filter((x) => x.condition === c && x.status === 'ok');
    expect(
      rows
        .filter((x) => x.status === 'removed')
        .every((x) => ['S', 'T'].includes(x.condition) && x.failure?.code === 'E_DONOR_SHORT'),
    ).toBe(true);
    expect(ran('S').length).toBeGreaterThanOrEqual(190);
    expect(ran('T').length).toBeGreaterThanOrEqual(190);
    const flips = (c: string): number => ran(c).filter((x) => x.success !== a.get(x.seed)).length;
    expect(flips('S')).toBe(0);
    expect(flips('T')).toBe(ran('T').filter((x) => a.get(x.seed) === true).length);
    for (const x of [...ran('S'), ...ran('T')]) expect(x.reads.covered).toBe(true);
    // a different fact changes the payload the policy reads; every T decision read carries changed content
    expect(ran('T').every((x) => x.reads.substituted > 0)).toBe(true);
  }, 240_000);
});
