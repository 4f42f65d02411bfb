import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import { Prng, PRNG_NAME, PRNG_VERSION } from '../../src/core/prng.js';
import {
  DEFAULT_REPLICATES,
  drawIndices,
  pairedBootstrap,
  percentileInterval,
  quantileType7,
  resample,
  resamplingPlan,
} from '../../src/stats/bootstrap.js';
import type { Estimand } from '../../src/stats/estimands.js';
import { pairedDesign, type PairedDesign } from '../../src/stats/paired-outcomes.js';

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    return (e as ImepError).field;
  }
  throw new Error('expected a domain error');
}

/** A reference succeeding everywhere; X fails on `b` units and (with A failing) succeeds on `c` units. */
function dDesign(n: number, b: number, c: number, tasks?: string[]): PairedDesign {
  const A: number[] = [],
    X: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i < b) {
      A.push(1);
      X.push(0);
    } else if (i < b + c) {
      A.push(0);
      X.push(1);
    } else {
      A.push(1);
      X.push(1);
    }
  }
  return pairedDesign({ outcomes: { A, X }, ...(tasks ? { tasks } : {}) });
}

/** Random A/S/T outcomes on tasks of the given sizes, from a seeded Prng. */
function randomDesign(sizes: number[], seed: number, clusterSize = 0): PairedDesign {
  const r = new Prng(seed);
  const A: number[] = [],
    S: number[] = [],
    T: number[] = [],
    tasks: string[] = [],
    clusters: string[] = [];
  sizes.forEach((n, t) => {
    for (let i = 0; i < n; i++) {
      A.push(r.nextFloat() < 0.8 ? 1 : 0);
      S.push(r.nextFloat() < 0.75 ? 1 : 0);
      T.push(r.nextFloat() < 0.65 ? 1 : 0);
      tasks.push(`task${t}`);
      clusters.push(`t${t}c${clusterSize > 0 ? Math.floor(i / clusterSize) : i}`);
    }
  });
  return pairedDesign({ outcomes: { A, S, T }, tasks, clusters });
}

const thetaBar: Estimand = { kind: 'thetaBar', reference: 'A', target: 'T', sham: 'S' };
const D: Estimand = { kind: 'D', reference: 'A', intervention: 'X' };

describe('percentile rule (Hyndman–Fan type 7)', () => {
  it('interpolates linearly between order statistics, as R and NumPy do', () => {
    expect(quantileType7([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileType7([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantileType7([1, 2, 3, 4], 0)).toBe(1);
    expect(quantileType7([1, 2, 3, 4], 1)).toBe(4);
    expect(quantileType7([7], 0.3)).toBe(7);
    const xs = Array.from({ length: 101 }, (_, i) => i); // 0..100
    const i95 = percentileInterval(xs, 0.95);
    expect(i95.confidence).toBe(0.95);
    expect(i95.lower).toBeCloseTo(2.5, 12);
    expect(i95.upper).toBeCloseTo(97.5, 12);
    const y = percentileInterval([0, 10, 20, 30, 40], 0.9);
    expect(y.lower).toBeCloseTo(2, 12); // h = 4·0.05 = 0.2
    expect(y.upper).toBeCloseTo(38, 12);
  });

  it('refuses bad arguments', () => {
    expect(fieldOf(() => quantileType7([], 0.5))).toBe('sorted');
    expect(fieldOf(() => quantileType7([1], 1.5))).toBe('p');
    expect(fieldOf(() => percentileInterval([1], 1))).toBe('confidence');
  });
});

describe('index draws', () => {
  it('are uniform on [0, m) for m that does not divide 2^16 (chi-square)', () => {
    const prng = new Prng('lanes');
    const m = 7,
      N = 70_000;
    const idx = new Int32Array(m),
      counts = new Array<number>(m).fill(0);
    for (let k = 0; k < N / m; k++) {
      drawIndices(prng, m, idx);
      for (const i of idx) counts[i]! += 1;
    }
    const e = N / m;
    const chi2 = counts.reduce((s, o) => s + (o - e) ** 2 / e, 0);
    expect(chi2).toBeLessThan(22.46); // χ²(6) 0.999 quantile
  });

  it('use prng.nextInt above 2^16 blocks', () => {
    const m = 70_000,
      a = new Prng(3),
      b = new Prng(3),
      idx = new Int32Array(m);
    drawIndices(a, m, idx);
    for (let j = 0; j < 5; j++) expect(idx[j]).toBe(b.nextInt(m));
  });

  it('take two 16-bit lanes per uint32, high half first', () => {
    const a = new Prng(11),
      b = new Prng(11),
      idx = new Int32Array(4);
    drawIndices(a, 4, idx); // m = 4 divides 2^16: no rejection
    const x = b.nextUint32(),
      y = b.nextUint32();
    expect(Array.from(idx)).toEqual([x >>> 30, (x & 0xffff) >>> 14, y >>> 30, (y & 0xffff) >>> 14]);
  });
});

describe('pairedBootstrap', () => {
  const design = randomDesign([200, 200], 1);

  it('is deterministic under a seed and records it', () => {
    const opts = { level: 'task-stratified', seed: 20260824, replicates: 2000 } as const;
    const r1 = pairedBootstrap(design, thetaBar, opts);
    const r2 = pairedBootstrap(design, thetaBar, opts);
    expect(r1.replicates).toEqual(r2.replicates);
    expect(r1.intervals).toEqual(r2.intervals);
    expect(r1.record).toEqual({
      prng: { name: PRNG_NAME, version: PRNG_VERSION, seed: 20260824 },
      replicates: 2000,
      level: 'task-stratified',
      method: 'percentile',
      quantileRule: 'hyndman-fan-7',
    });
    const r3 = pairedBootstrap(design, thetaBar, { ...opts, seed: 20260825 });
    expect(r3.replicates).not.toEqual(r1.replicates);
    const def = pairedBootstrap(design, thetaBar, { level: 'task-stratified', seed: 1 });
    expect(def.replicates.length).toBe(DEFAULT_REPLICATES);
    expect(def.record.replicates).toBe(10_000);
    for (let i = 1; i < def.replicates.length; i++) expect(def.replicates[i]! >= def.replicates[i - 1]!).toBe(true);
  });

  it('b = c = 0 collapses to [0, 0] at every level (why exact bounds are reported beside it)', () => {
    // 200 concordant pairs: the bootstrap says [0, 0], while the exact one-sided 95% bound is 1.49 pp.
    const d0 = dDesign(
      200,
      0,
      0,
      Array.from({ length: 200 }, (_, i) => (i < 100 ? 'a' : 'b')),
    );
    for (const level of ['unit', 'task-stratified'] as const) {
      const r = pairedBootstrap(d0, D, { level, seed: 5, confidences: [0.95, 0.9] });
      expect(r.estimate).toBe(0);
      expect(r.intervals.map((i) => [i.lower, i.upper])).toEqual([
        [0, 0],
        [0, 0],
      ]);
      expect(r.se).toBe(0);
    }
  });

  it('task-stratified resampling keeps task sizes', () => {
    // Task a: every unit has b (contribution +1); task b: every unit has c (−1). A replicate that kept
    // task sizes always gives (n_a − n_b)/n; unit-level resampling does not.
    const d = dDesign(50, 30, 20, [...Array(30).fill('a'), ...Array(20).fill('b')]);
    const strat = pairedBootstrap(d, D, { level: 'task-stratified', seed: 9, replicates: 500 });
    expect(new Set(strat.replicates).size).toBe(1);
    expect(strat.replicates[0]).toBeCloseTo(10 / 50, 14);
    const unit = pairedBootstrap(d, D, { level: 'unit', seed: 9, replicates: 500 });
    expect(unit.se).toBeGreaterThan(0.05);
  });

  it('cluster resampling keeps chains whole', () => {
    // Each chain holds one b unit and one c unit: its sum is 0, so whole-chain replicates are all 0.
    const A: number[] = [],
      X: number[] = [],
      clusters: string[] = [];
    for (let k = 0; k < 40; k++) {
      A.push(1, 0);
      X.push(0, 1);
      clusters.push(`chain${k}`, `chain${k}`);
    }
    const d = pairedDesign({ outcomes: { A, X }, clusters });
    const byChain = pairedBootstrap(d, D, { level: 'cluster', seed: 2, replicates: 500 });
    expect(byChain.intervals[0]).toMatchObject({ lower: 0, upper: 0 });
    expect(byChain.se).toBe(0);
    expect(pairedBootstrap(d, D, { level: 'unit', seed: 2, replicates: 500 }).se).toBeGreaterThan(0.05);
    // Unequal chain sizes: the replicate is Σ contributions / Σ units over the drawn chains.
    const plan = resamplingPlan(randomDesign([30], 4, 4), thetaBar, 'cluster');
    expect(plan.sizes && Array.from(plan.sizes)).toEqual([4, 4, 4, 4, 4, 4, 4, 2]);
  });

  it('one-unit clusters reproduce unit-level resampling bit for bit', () => {
    const e: Estimand = { kind: 'theta', reference: 'A', target: 'T', sham: 'S' };
    const d = randomDesign([37], 8); // every unit its own cluster
    const u = pairedBootstrap(d, e, { level: 'unit', seed: 'same', replicates: 300 });
    const c = pairedBootstrap(d, e, { level: 'cluster', seed: 'same', replicates: 300 });
    expect(c.replicates).toEqual(u.replicates);
  });

  it('θ̄ cluster resampling stays within tasks; θ̄ refuses unit level and chains spanning tasks', () => {
    const d = randomDesign([24, 16], 3, 4);
    const plan = resamplingPlan(d, thetaBar, 'cluster');
    expect(plan.strata.map((s) => s.count)).toEqual([6, 4]);
    expect(plan.strata.map((s) => s.weight)).toEqual([0.5, 0.5]);
    expect(fieldOf(() => pairedBootstrap(d, thetaBar, { level: 'unit', seed: 1 }))).toBe('level');
    const spanning = pairedDesign({
      outcomes: { A: [1, 1], S: [1, 0], T: [0, 1] },
      tasks: ['a', 'b'],
      clusters: ['c', 'c'],
    });
    expect(fieldOf(() => pairedBootstrap(spanning, thetaBar, { level: 'cluster', seed: 1 }))).toBe('design.cluster');
    expect(fieldOf(() => pairedBootstrap(dDesign(4, 1, 1), D, { level: 'cluster', seed: 1 }))).toBe('level');
  });

  it('mean and SE match the analytic values within Monte-Carlo error', () => {
    const R = 10_000;
    // Unit level, D with b = 30, c = 10 of n = 200: SE² = (ρ − D²)/n.
    const d = dDesign(200, 30, 10);
    const r = pairedBootstrap(d, D, { level: 'unit', seed: 77, replicates: R });
    const Dv = 20 / 200,
      rho = 40 / 200,
      se = Math.sqrt((rho - Dv * Dv) / 200);
    expect(r.estimate).toBeCloseTo(Dv, 15);
    expect(Math.abs(r.mean - Dv)).toBeLessThan((4 * se) / Math.sqrt(R));
    expect(Math.abs(r.se / se - 1)).toBeLessThan(4 / Math.sqrt(2 * R));
    // Task-stratified θ̄: SE² = Σ_t w_t² v_t / n_t with v_t the plug-in variance of d_i in task t.
    const dd = randomDesign([150, 90, 60], 12);
    const s = pairedBootstrap(dd, thetaBar, { level: 'task-stratified', seed: 78, replicates: R });
    const plan = resamplingPlan(dd, thetaBar, 'task-stratified');
    let analytic = 0;
    for (const st of plan.strata) {
      const xs = Array.from(plan.sums.subarray(st.offset, st.offset + st.count));
      const m = xs.reduce((a, b) => a + b, 0) / st.count;
      const v = xs.reduce((a, b) => a + b * b, 0) / st.count - m * m;
      analytic += (st.weight ** 2 * v) / st.count;
    }
    const seBar = Math.sqrt(analytic);
    expect(Math.abs(s.mean - s.estimate)).toBeLessThan((4 * seBar) / Math.sqrt(R));
    expect(Math.abs(s.se / seBar - 1)).toBeLessThan(4 / Math.sqrt(2 * R));
  });

  it('resample is allocation-free per replicate and reproducible from a plan', () => {
    const plan = resamplingPlan(design, thetaBar, 'task-stratified');
    const a = resample(plan, new Prng(4), 100),
      b = resample(plan, new Prng(4), 100);
    expect(a).toEqual(b);
  });

  it('validates its options and empty input', () => {
    expect(fieldOf(() => pairedBootstrap(design, thetaBar, { level: 'task-stratified', seed: 1, replicates: 1 }))).toBe(
      'replicates',
    );
    expect(
      fieldOf(() => pairedBootstrap(design, thetaBar, { level: 'task-stratified', seed: 1, confidences: [1] })),
    ).toBe('confidences');
    const empty = pairedDesign({ outcomes: { A: [], X: [] } });
    expect(fieldOf(() => pairedBootstrap(empty, D, { level: 'unit', seed: 1 }))).toBe('design');
  });
});
