/**
 * Registered execution noise in the lite world, end to end on the shipped protocols/shellgame-noisy.yaml (the real
 * lite-memvla checkpoint): under per-condition noise the exact replicate C disagrees with A in both directions
 * (b and c > 0), θ has b′ and c′ > 0, and the exact-repeat floor (the upper bound on ρ_C) is a non-trivial number
 * the criteria must clear; without noise (today's behaviour) C = A exactly; under shared noise C = A exactly too
 * (the same draw), while the rows' action digests show the noise was executed. Units re-run to identical rows.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AvailableEstimand } from '../../src/adjudication/index.js';
import { EpisodeRowSchema, type EpisodeRow } from '../../src/evidence/records/episode-row.js';
import { explicitOperator } from '../../src/evidence/operator.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { adjudicateStep, closeoutStep, crossCheckStep, reportStep } from '../../src/app/pipeline.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHIPPED = readFileSync(join(ROOT, 'protocols/shellgame-noisy.yaml'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'imep-noise-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`fixture edit: ${from} not in the protocol`);
  return text.replace(from, to);
}

/** The shipped protocol, or a variant with `n` seeds and its own id / noise line. */
function variant(id: string, n: number, noise: string | null): string {
  let t = edit(SHIPPED, 'id: shellgame-noisy\n', `id: ${id}\n`);
  t = edit(t, 'n: 100\n', `n: ${n}\n`);
  t = edit(t, '{ start: 612000, end: 612099 }', `{ start: 612000, end: ${612000 + n - 1} }`);
  const line = '  executionNoise: { kind: action-gaussian, sigma: 0.03, seed: 612003, scope: per-condition }\n';
  return noise === null ? edit(t, line, '') : edit(t, line, noise);
}

async function run(
  name: string,
  text: string,
  batchSize?: number,
): Promise<{ dir: string; rows: EpisodeRow[]; rowsSha: string }> {
  const folder = join(tmp, name);
  const file = join(tmp, `${name}.yaml`);
  writeFileSync(file, text);
  const dir = await runCampaign(file, {
    campaignsDir: folder,
    root: ROOT,
    through: 'seal',
    operator: explicitOperator('noise-runner'),
    progress: null,
    say: () => undefined,
    ...(batchSize === undefined ? {} : { batchSize }),
  });
  const bytes = readFileSync(join(dir, 'rows/rows.jsonl'));
  const rows = bytes
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => EpisodeRowSchema.parse(JSON.parse(l)));
  return { dir, rows, rowsSha: createHash('sha256').update(bytes).digest('hex') };
}

/** b (A succeeds, X fails) and c (A fails, X succeeds) over units where both rows are ok, plus digest matches. */
function pairs(rows: readonly EpisodeRow[], x: string): { b: number; c: number; n: number; sameDigest: number } {
  const a = new Map(rows.filter((r) => r.condition === 'A' && r.status === 'ok').map((r) => [r.scopeId, r]));
  let b = 0,
    c = 0,
    n = 0,
    sameDigest = 0;
  for (const r of rows) {
    const ra = a.get(r.scopeId);
    if (r.condition !== x || r.status !== 'ok' || ra === undefined) continue;
    n++;
    if (ra.success === true && r.success === false) b++;
    if (ra.success === false && r.success === true) c++;
    if (ra.actionDigest === r.actionDigest) sameDigest++;
  }
  return { b, c, n, sameDigest };
}

describe('execution noise in the lite world (simulator.executionNoise)', () => {
  it('protocols/shellgame-noisy.yaml: b and c both non-zero, a non-trivial exact-repeat floor, and the verdicts it ships with', async () => {
    const { dir, rows } = await run('shipped', SHIPPED);
    const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as { executionNoise?: unknown };
    expect(plan.executionNoise).toEqual({
      kind: 'action-gaussian',
      sigma: 0.03,
      seed: 612003,
      scope: 'per-condition',
      stream: 'imep.execution-noise.v1/612003/<scopeId>/<wave>/<condition>/<attempt>/<step>',
    });
    // the exact replicate is no longer exact: C changes outcomes against A in BOTH directions
    expect(pairs(rows, 'C')).toEqual({ b: 7, c: 4, n: 100, sameDigest: 0 });
    const { adjudication: adj } = await adjudicateStep(dir, { operator: explicitOperator('noise-adjudicator') });
    const est = (id: string): AvailableEstimand => adj.estimands.find((e) => e.id === id) as AvailableEstimand;
    expect(est('rho_C').counts).toMatchObject({ b: 7, c: 4, n: 100 });
    // the floor Q3 and Q4 must clear: the upper bound on ρ_C, 17.55 pp (0 in every noise-free lite campaign; the
    // numbers are those of the tool starting at home, issue #32)
    for (const id of ['Q3_T', 'Q4'])
      expect(adj.verdicts.find((v) => v.criterion === id)?.bound?.threshold).toBeCloseTo(0.1755, 4);
    expect(est('theta').counts).toMatchObject({ bPrime: 65, cPrime: 4, n: 70 });
    expect(est('rho_S').counts).toMatchObject({ b: 2, c: 4, n: 88 });
    expect(adj.gates.find((g) => g.gate === 'replicate')).toMatchObject({
      passed: true,
      observed: { changed: 11, digestMismatches: 100 },
    });
    expect(Object.fromEntries(adj.verdicts.map((v) => [v.criterion, v.verdict]))).toEqual({
      Q1_eligibility: 'holds',
      Q3_T: 'holds',
      // θ covers the 70 units that had donors; the 30 removed do not differ from them on any registered outcome
      // (the informative-removal check, issue #31 item 2; with the seeded tool start the removed ones did, and Q4
      // was withheld — test/adjudication/validity-checks.test.ts keeps a constructed informative removal)
      Q4: 'holds',
    });
    expect(adj.gates.find((g) => g.gate === 'informative-removal')).toMatchObject({ passed: true, failing: [] });
    expect(est('theta').cohort).toMatchObject({ paired: 100, removed: { total: 30, byCondition: { S: 12, T: 18 } } });
    // through closeout: the independent cross-check agrees, and the report shows the registered noise
    expect((await crossCheckStep(dir, { operator: explicitOperator('noise-adjudicator') })).outcome).toBe('agrees');
    await closeoutStep(dir, { operator: explicitOperator('noise-adjudicator') });
    const written = await reportStep(dir, join(tmp, 'report'));
    expect(readFileSync(written.markdown, 'utf8')).toContain(
      '| execution noise | action-gaussian, σ = 0.03, scope per-condition, seed 612003: stream imep.execution-noise.v1/612003/<scopeId>/<wave>/<condition>/<attempt>/<step>',
    );
  });

  it('without the option C replicates A exactly (today’s behaviour); shared noise keeps C = A but perturbs what runs', async () => {
    const plain = await run('plain', variant('noise-plain', 20, null));
    expect(pairs(plain.rows, 'C')).toEqual({ b: 0, c: 0, n: 20, sameDigest: 20 });
    const plan = JSON.parse(readFileSync(join(plain.dir, 'plan.json'), 'utf8')) as Record<string, unknown>;
    expect('executionNoise' in plan).toBe(false);
    const shared = await run(
      'shared',
      variant(
        'noise-shared',
        20,
        '  executionNoise: { kind: action-gaussian, sigma: 0.03, seed: 612003, scope: shared }\n',
      ),
    );
    // the same draw in every condition: C is A's exact replicate again
    expect(pairs(shared.rows, 'C')).toEqual({ b: 0, c: 0, n: 20, sameDigest: 20 });
    // … and the noise was executed: A's actions differ from the noise-free run's on every unit
    const plainA = new Map(plain.rows.filter((r) => r.condition === 'A').map((r) => [r.scopeId, r.actionDigest]));
    const sharedA = shared.rows.filter((r) => r.condition === 'A');
    expect(sharedA.filter((r) => plainA.get(r.scopeId) === r.actionDigest)).toHaveLength(0);
  });

  it('a noisy unit re-runs exactly: the same protocol in a fresh folder seals byte-identical rows, whatever the batch size', async () => {
    const text = variant(
      'noise-rerun',
      12,
      '  executionNoise: { kind: action-gaussian, sigma: 0.04, seed: 5, scope: per-condition }\n',
    );
    const first = await run('rerun-1', text);
    const second = await run('rerun-2', text, 5); // other slots, other lockstep order: the draws are keyed by episode and step
    expect(second.rowsSha).toBe(first.rowsSha);
    // and per-condition noise makes C's executed actions differ from A's on every unit
    expect(pairs(first.rows, 'C').sameDigest).toBe(0);
  });
});
