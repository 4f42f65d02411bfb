/**
 * Issue 31 §1: a θ̄ verdict routed on the task-stratified bootstrap stands only when the exact union bound
 * (per task the exact difference bound on b′, c′ at α/K per proportion, averaged with the weights) gives the
 * same word. Reproduces the issue: protocols/remembercolor-substitution.yaml with lite-blind-rc at n = 10 per
 * task read `Q4_equivalence: holds` on the bootstrap's [0, 0] while the exact bound is about ±37 pp; it now reads
 * unresolved, both intervals are in the adjudication, the reason and the report, and the independent cross-check
 * recomputes the exact bound and agrees.
 *
 * Reference numbers, computed independently with SciPy 1.x (scipy.stats.beta.ppf):
 *   b′ = c′ = 0 in both tasks (n 10 and 9), α/K = 0.0125: the closed form ((1 − 0.0125^(1/10)) + (1 − 0.0125^(1/9)))/2
 *     = 0.3701357478286937;
 *   task 1 (n 30, b′ 3, c′ 1, w 0.7), task 2 (n 25, b′ 0, c′ 2, w 0.3), α 0.025 per component (0.0125 per task):
 *     lo = lambda x,n,a: 0 if x == 0 else beta.ppf(a, x, n-x+1); up = lambda x,n,a: 1 if x == n else beta.ppf(1-a, x+1, n-x)
 *     L = 0.7*(lo(3,30,a)-up(1,30,a)) + 0.3*(lo(0,25,a)-up(2,25,a)) = -0.21111499600252495
 *     U = 0.7*(up(3,30,a)-lo(1,30,a)) + 0.3*(up(0,25,a)-lo(2,25,a)) =  0.24890776186762006
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { thetaBarExactBound } from '../../src/stats/index.js';
import { exactConfirmationId } from '../../src/crosscheck/cross-check-verdicts.js';
import { intervalX } from '../../src/crosscheck/cross-check-estimands.js';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const BOTH_ZERO = 0.3701357478286937;
const MIXED = { lower: -0.21111499600252495, upper: 0.24890776186762006 };

describe('the exact union bound on θ̄ (stats)', () => {
  it('matches the independent closed form and SciPy', () => {
    const z = thetaBarExactBound(
      [
        { n: 10, bPrime: 0, cPrime: 0, weight: 0.5 },
        { n: 9, bPrime: 0, cPrime: 0, weight: 0.5 },
      ],
      0.025,
    );
    expect(z.tasks).toBe(2);
    expect(z.alphaPerTask).toBe(0.0125);
    expect(z.upper).toBeCloseTo(BOTH_ZERO, 12);
    expect(z.lower).toBeCloseTo(-BOTH_ZERO, 12);
    const m = thetaBarExactBound(
      [
        { n: 30, bPrime: 3, cPrime: 1, weight: 0.7 },
        { n: 25, bPrime: 0, cPrime: 2, weight: 0.3 },
      ],
      0.025,
    );
    expect(m.lower).toBeCloseTo(MIXED.lower, 10);
    expect(m.upper).toBeCloseTo(MIXED.upper, 10);
  });

  it('a zero-weight task spends no α (K counts positive weights); enough units still allow equivalence', () => {
    const one = thetaBarExactBound(
      [
        { n: 400, bPrime: 0, cPrime: 0, weight: 1 },
        { n: 5, bPrime: 5, cPrime: 0, weight: 0 },
      ],
      0.025,
    );
    expect(one.tasks).toBe(1);
    expect(one.upper).toBeCloseTo(1 - 0.025 ** (1 / 400), 12);
    const big = thetaBarExactBound(
      [
        { n: 400, bPrime: 0, cPrime: 0, weight: 0.5 },
        { n: 400, bPrime: 0, cPrime: 0, weight: 0.5 },
      ],
      0.025,
    );
    expect(big.upper).toBeLessThan(0.075); // 1 − 0.0125^(1/400) = 1.09 pp: "holds" stays reachable
  });
});

describe('the cross-check recomputes the same confirmation', () => {
  it('names the exact bound that confirms a θ̄ bootstrap word', () => {
    expect(exactConfirmationId('task-stratified-bootstrap/l0.9', 'thetaBar')).toBe('exact-cp-difference/a0.025');
  });

  it('recomputes the union bound from the units (its own CP bisection)', () => {
    const units: { task: string; seed: number; y: (0 | 1)[] }[] = [];
    const add = (task: string, n: number, bp: number, cp: number): void => {
      for (let i = 0; i < n; i++) {
        // y = [A, T, S]: only T flips (b′), only S flips (c′), or nothing flips
        const y: (0 | 1)[] = i < bp ? [1, 0, 1] : i < bp + cp ? [1, 1, 0] : [1, 1, 1];
        units.push({ task, seed: i, y });
      }
    };
    add('t1', 30, 3, 1);
    add('t2', 25, 0, 2);
    const [lo, hi] = intervalX('exact-cp-difference/a0.025', 'thetaBar', units, [0.7, 0.3], ['t1', 't2'], null);
    expect(lo).toBeCloseTo(MIXED.lower, 8);
    expect(hi).toBeCloseTo(MIXED.upper, 8);
  });
});

function blindProtocol(): string {
  const sha = createHash('sha256')
    .update(readFileSync(join(ROOT, 'checkpoints/lite-blind-rc/model.json')))
    .digest('hex');
  return readFileSync(join(ROOT, 'protocols/remembercolor-substitution.yaml'), 'utf8')
    .replace(/path: checkpoints\/\S+/, 'path: checkpoints/lite-blind-rc')
    .replace(/sha256: \S+/, `sha256: ${sha}`)
    .replace(/- \{ start: 9001, end: 9200 \}/, '- { start: 9001, end: 9010 }')
    .replace(/^n: 200 .*$/m, 'n: 10')
    .replace(/^id: remembercolor-substitution$/m, 'id: rc-blind-10');
}

describe('remembercolor-substitution with lite-blind-rc at n = 10 per task (the issue)', () => {
  it('Q4_equivalence is unresolved, not holds on the bootstrap [0, 0]; both intervals are reported', async () => {
    const text = blindProtocol();
    const dir = mkdtempSync(join(tmpdir(), 'imep-rc-blind-10-'));
    writeFileSync(join(dir, 'rc.yaml'), text);
    const r = await imep(
      ['campaign', 'run', 'rc.yaml', '--through', 'closeout', '--same-operator-reason', 'single-operator check'],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(': agrees');
    const unit = unitIn(join(dir, 'campaigns')) as string;
    const adj = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as {
      verdicts: { criterion: string; verdict: string; reason: string }[];
      estimands: {
        id: string;
        perTask: { n: number; bPrime: number; cPrime: number }[] | null;
        intervals: { id: string; lower: number; upper: number }[];
      }[];
    };
    const tb = adj.estimands.find((e) => e.id === 'thetaBar')!;
    expect(tb.perTask?.map((t) => [t.n, t.bPrime, t.cPrime])).toEqual([
      [10, 0, 0],
      [9, 0, 0],
    ]);
    const boot = tb.intervals.find((i) => i.id === 'task-stratified-bootstrap/l0.9')!;
    expect([boot.lower, boot.upper]).toEqual([0, 0]);
    const exact = tb.intervals.find((i) => i.id === 'exact-cp-difference/a0.025')!;
    expect(exact.upper).toBeCloseTo(BOTH_ZERO, 12);
    expect(exact.lower).toBeCloseTo(-BOTH_ZERO, 12);
    const q4 = adj.verdicts.find((v) => v.criterion === 'Q4_equivalence')!;
    expect(q4.verdict).toBe('unresolved');
    expect(q4.reason).toContain('[0.00 pp, 0.00 pp]');
    expect(q4.reason).toContain('exact-cp-difference/a0.025 [-37.01 pp, 37.01 pp] does not confirm it');
    // the report shows both intervals of θ̄ and the verdict's reason
    const reports = join(dir, 'campaigns/reports');
    const html = readFileSync(join(reports, readdirSync(reports)[0]!, 'report.html'), 'utf8');
    expect(html).toContain('exact union bound on θ̄');
    expect(html).toContain('task-stratified paired bootstrap 90% percentile');
    expect(html).toContain('does not confirm it');
  }, 120_000);

  it('exact-cp-difference may be registered on θ̄ directly: routed on the union bound, the cross-check agrees', async () => {
    const text = blindProtocol().replace(
      /method: task-stratified-bootstrap\n\s+replicates: 10000\n\s+seed: 20260824/,
      'method: exact-cp-difference',
    );
    expect(text).toMatch(/level: 0\.90\n\s+method: exact-cp-difference\n/);
    const dir = mkdtempSync(join(tmpdir(), 'imep-rc-blind-10-exact-'));
    writeFileSync(join(dir, 'rc.yaml'), text);
    const r = await imep(
      ['campaign', 'run', 'rc.yaml', '--through', 'closeout', '--same-operator-reason', 'single-operator check'],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(': agrees');
    const unit = unitIn(join(dir, 'campaigns')) as string;
    const adj = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as {
      verdicts: { criterion: string; verdict: string; bound: { interval: string; lower: number; upper: number } }[];
    };
    const q4 = adj.verdicts.find((v) => v.criterion === 'Q4_equivalence')!;
    expect(q4.verdict).toBe('unresolved');
    expect(q4.bound.interval).toBe('exact-cp-difference/a0.025');
    expect(q4.bound.upper).toBeCloseTo(BOTH_ZERO, 12);
  }, 120_000);
});
