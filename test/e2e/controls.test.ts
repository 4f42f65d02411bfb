/**
 * The positive and negative controls through the real CLI: the blackout ladder (40 seeds) run with the
 * lite checkpoint built to need its memory (lite-memvla) and with the one built not to (lite-blind). Every
 * number asserted is read from the sealed unit's adjudication.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blackoutYaml, ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

interface ConditionSummary {
  readonly condition: string;
  readonly wave: number;
  readonly vsAnchor: { readonly b: number; readonly c: number; readonly n: number } | null;
  readonly success: { readonly successes: number; readonly n: number };
}

function checkpointSha(name: string): string {
  return createHash('sha256')
    .update(readFileSync(join(ROOT, 'checkpoints', name, 'model.json')))
    .digest('hex');
}

interface Row {
  readonly condition: string;
  readonly wave: number;
  readonly seed: number;
  readonly attempt: number;
  readonly success: boolean | null;
}

/** b and c of condition@wave against the wave's A on attempt 1, counted directly from the sealed rows. */
function discordance(rows: readonly Row[], condition: string, wave: number): { b: number; c: number; n: number } {
  const a = new Map(
    rows.filter((r) => r.condition === 'A' && r.wave === wave && r.attempt === 1).map((r) => [r.seed, r.success]),
  );
  let b = 0,
    c = 0,
    n = 0;
  for (const r of rows) {
    if (r.condition !== condition || r.wave !== wave || r.attempt !== 1) continue;
    const ref = a.get(r.seed);
    n += 1;
    if (ref === true && r.success === false) b += 1;
    if (ref === false && r.success === true) c += 1;
  }
  return { b, c, n };
}

async function ladder(name: string): Promise<{ conditions: Map<string, ConditionSummary>; rows: Row[] }> {
  const dir = mkdtempSync(join(tmpdir(), `imep-control-${name}-`));
  const yaml = blackoutYaml({ n: 40, sha: checkpointSha(name), strict: false, id: `control-${name}` }).replace(
    'path: checkpoints/lite-memvla',
    `path: checkpoints/${name}`,
  );
  writeFileSync(join(dir, 'ladder.yaml'), yaml);
  const r = await imep(
    [
      'campaign',
      'run',
      'ladder.yaml',
      '--through',
      'closeout',
      '--same-operator-reason',
      'single-operator quick start',
    ],
    dir,
  );
  expect(r.code, r.stderr).toBe(0);
  const unit = unitIn(join(dir, 'campaigns')) as string;
  const adjudication = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as {
    conditions: ConditionSummary[];
  };
  const rows = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
  return { conditions: new Map(adjudication.conditions.map((c) => [`${c.condition}@${c.wave}`, c])), rows };
}

describe('the lite checkpoints are positive and negative controls of the ladder', () => {
  it('lite-memvla: blocking reads and scrambling retrieved latents change outcomes; C and U do not', async () => {
    const { conditions: c } = await ladder('lite-memvla');
    expect(c.get('A@1')?.success.successes).toBe(40);
    const blocked = c.get('N_blk@2')?.vsAnchor;
    expect(blocked?.b).toBeGreaterThanOrEqual(15); // ≈ 2/3 of 40 lose the ball without memory
    expect(blocked?.c).toBe(0);
    expect(c.get('S_pi@1')?.vsAnchor?.b).toBeGreaterThan(0);
    expect(c.get('T_mu@1')?.vsAnchor?.b).toBeGreaterThan(0);
    expect(c.get('C@2')?.vsAnchor).toMatchObject({ b: 0, c: 0 });
    expect(c.get('U@1')?.vsAnchor).toMatchObject({ b: 0, c: 0 });
  }, 300_000);

  it('lite-blind: no intervention on its memory changes any outcome', async () => {
    // lite-blind is near the memoryless 1/3, so the competence gate excludes its cells and the
    // adjudication withholds their numbers; the outcome changes are counted from the sealed rows.
    const { rows } = await ladder('lite-blind');
    for (const [condition, wave] of [
      ['S_pi', 1],
      ['T_mu', 1],
      ['U', 1],
      ['N_blk', 2],
      ['C', 2],
    ] as const) {
      expect(discordance(rows, condition, wave), `${condition}@${wave}`).toEqual({ b: 0, c: 0, n: 40 });
    }
    const successes = rows.filter(
      (r) => r.condition === 'A' && r.wave === 1 && r.attempt === 1 && r.success === true,
    ).length;
    expect(successes).toBeGreaterThan(5);
    expect(successes).toBeLessThan(25);
  }, 300_000);
});
