/**
 * One meaning per rule (issue 18 §1–2): every rule × {clearly above, straddling, clearly below} read by the
 * adjudicator (verdictFor), the independent cross-check (expectedWord) and the report (verdictRows) — the
 * three agree, and the word answers the registered claim. Plus the conditional θ bound: a degenerate bound
 * (b′ + c′ = 0) and a low-information one against a companion floor never yield "not detected".
 */
import { describe, expect, it } from 'vitest';
import { verdictFor, type VerdictContext } from '../../src/adjudication/verdicts.js';
import { anatomy, requestsFor } from '../../src/adjudication/estimands.js';
import { intervalOn } from '../../src/adjudication/intervals.js';
import { confirmedWord, expectedWord } from '../../src/crosscheck/cross-check-verdicts.js';
import type { AvailableEstimand } from '../../src/adjudication/types.js';
import type { Criterion, Estimand, Protocol } from '../../src/protocol/index.js';
import { verdictRows } from '../../src/report/verdict-claims.js';
import { mcnemarExact, pairedDesign } from '../../src/stats/index.js';
import type { Obj } from '../../src/crosscheck/cross-check-model.js';

type Cells = Record<string, (0 | 1)[]>;

/** n units with the listed outcome patterns (each pattern a row of outcomes over `conds`) repeated `times`. */
function cells(conds: string[], patterns: [number, (0 | 1)[]][]): Cells {
  const out: Cells = Object.fromEntries(conds.map((c) => [c, [] as (0 | 1)[]]));
  for (const [times, y] of patterns) for (let i = 0; i < times; i++) conds.forEach((c, k) => out[c]!.push(y[k]!));
  return out;
}

function available(e: Estimand, protocol: Protocol, outcomes: Cells): AvailableEstimand {
  const n = Object.values(outcomes)[0]!.length;
  const design = pairedDesign({
    outcomes,
    tasks: { names: ['t'], index: new Array(n).fill(0) },
    clusters: Array.from({ length: n }, (_, i) => `t\u001f${i}`),
  });
  const spec = anatomy(e).spec;
  const intervals = requestsFor(e, protocol).map((r) => intervalOn(design, spec, r));
  const col = (c: string) => outcomes[c]!;
  let counts: AvailableEstimand['counts'], estimate: number;
  if (e.kind === 'D') {
    const a = col(e.reference),
      x = col(e.intervention);
    const b = a.filter((v, i) => v === 1 && x[i] === 0).length,
      c = a.filter((v, i) => v === 0 && x[i] === 1).length;
    counts = { n, b, c };
    estimate = (b - c) / n;
  } else if (e.kind === 'rho') {
    const a = col(e.reference),
      x = col(e.intervention);
    const b = a.filter((v, i) => v === 1 && x[i] === 0).length,
      c = a.filter((v, i) => v === 0 && x[i] === 1).length;
    counts = { n, b, c };
    estimate = (b + c) / n;
  } else if (e.kind === 'theta') {
    const a = col(e.reference),
      t = col(e.T),
      s = col(e.S);
    const bp = a.filter((v, i) => v !== t[i] && v === s[i]).length,
      cp = a.filter((v, i) => v === t[i] && v !== s[i]).length;
    counts = { n, bPrime: bp, cPrime: cp };
    estimate = (bp - cp) / n;
  } else throw new Error('unused kind');
  return {
    id: e.id,
    kind: e.kind,
    readout: 'success',
    conditions: {},
    cohort: {} as AvailableEstimand['cohort'],
    status: 'available',
    counts,
    estimate,
    intervals,
    tests: [],
    identification: null,
    perTask: null,
  };
}

function context(criteria: Criterion[], estimands: Estimand[], outcomes: Cells): VerdictContext {
  const protocol = { criteria, estimands, holmFamilies: [], bootstrap: undefined } as unknown as Protocol;
  return {
    protocol,
    estimands: estimands.map((e) => available(e, protocol, outcomes)),
    gates: [],
    holm: [],
    goNoGo: { status: 'confirmatory', rules: [], descriptiveGates: [] } as unknown as VerdictContext['goNoGo'],
    tasks: ['t'],
  };
}

const D: Estimand = { id: 'D_N', kind: 'D', reference: 'A', intervention: 'N' };
/** n = 200 with b success→failure and c failure→success flips. */
const dCells = (b: number, c: number): Cells =>
  cells(
    ['A', 'N'],
    [
      [b, [1, 0]],
      [c, [0, 1]],
      [200 - b - c, [1, 1]],
    ],
  );
const POSITIONS = { above: dCells(80, 10), straddling: dCells(30, 10), below: dCells(10, 10) } as const;

const RULES: { criterion: Criterion; expect: Record<keyof typeof POSITIONS, string>; claim: string }[] = [
  {
    criterion: {
      id: 'X',
      estimand: 'D_N',
      role: 'primary',
      rule: 'lower-bound-above',
      margin: 0.1,
      method: 'exact-cp-difference',
      alphaPerComponent: 0.05,
    } as Criterion,
    expect: { above: 'holds', straddling: 'unresolved', below: 'not detected' },
    claim: 'D_N exceeds +10.00 pp',
  },
  {
    criterion: {
      id: 'X',
      estimand: 'D_N',
      role: 'primary',
      rule: 'upper-bound-below',
      margin: 0.1,
      method: 'exact-cp-difference',
      alphaPerComponent: 0.05,
    } as Criterion,
    expect: { above: 'not detected', straddling: 'unresolved', below: 'holds' },
    claim: 'D_N lies below +10.00 pp',
  },
  {
    criterion: {
      id: 'X',
      estimand: 'D_N',
      role: 'primary',
      rule: 'equivalence',
      margin: 0.1,
      level: 0.9,
      method: 'exact-cp-difference',
    } as Criterion,
    expect: { above: 'not detected', straddling: 'unresolved', below: 'holds' },
    claim: 'D_N lies within ±10.00 pp',
  },
  {
    criterion: {
      id: 'X',
      estimand: 'D_N',
      role: 'primary',
      rule: 'p-below',
      test: 'mcnemar-exact',
      direction: 'greater',
      alpha: 0.05,
    } as Criterion,
    expect: { above: 'holds', straddling: 'holds', below: 'unresolved' },
    claim: 'the intervention lowers success on D_N',
  },
];

describe('one meaning per rule: adjudicator, cross-check and report agree', () => {
  for (const r of RULES) {
    for (const pos of Object.keys(POSITIONS) as (keyof typeof POSITIONS)[]) {
      it(`${r.criterion.rule} × ${pos} → ${r.expect[pos]}`, () => {
        const ctx = context([r.criterion], [D], POSITIONS[pos]);
        const v = verdictFor(r.criterion, ctx);
        expect(v.verdict).toBe(r.expect[pos]);
        expect(v.registeredRuleMet).toBe(r.expect[pos] === 'holds');
        if (v.verdict !== 'holds' && v.verdict !== 'not detected' && v.verdict !== 'unresolved')
          throw new Error('unrouted');
        const b = v.bound!;
        const e = ctx.estimands[0] as AvailableEstimand;
        const p = r.criterion.rule === 'p-below' ? mcnemarExact(e.counts.b!, e.counts.c!, 'greater') : null;
        const x = expectedWord(r.criterion as unknown as Obj, {
          lower: b.lower,
          upper: b.upper,
          threshold: b.threshold,
          p,
          estimate: e.estimate,
          discordant: e.counts.b! + e.counts.c!,
        });
        expect(x).toBe(r.expect[pos]);
        const row = verdictRows({ verdicts: [v] } as never, ctx.protocol).rows[0]!;
        expect(row[3]).toContain(r.claim);
        expect(row[4]).toBe(r.expect[pos] === 'holds' ? 'yes' : 'no');
        expect(row[5]).toBe(r.expect[pos]);
        if (r.criterion.rule !== 'p-below')
          expect(row[6]).toMatch(/^\[[-+]\d+\.\d\d, [-+]\d+\.\d\d\] pp vs margin (±10\.00 pp|\+10\.00 pp)/);
      });
    }
  }
});

const THETA: Estimand = { id: 'theta', kind: 'theta', T: 'T', S: 'S', reference: 'A' };
const RHO_U: Estimand = { id: 'rho_U', kind: 'rho', reference: 'A', intervention: 'U' };

describe('the conditional θ bound never says "not detected" without unconditional coverage', () => {
  it('a degenerate bound (b′ + c′ = 0) is unresolved, not "not detected", without a discordance floor', () => {
    const c = {
      id: 'Q4',
      estimand: 'theta',
      role: 'primary',
      rule: 'lower-bound-above',
      margin: 0,
      method: 'conditional-exact',
      alphaPerComponent: 0.05,
    } as Criterion;
    const ctx = context([c], [THETA], cells(['A', 'T', 'S'], [[60, [1, 1, 1]]]));
    const v = verdictFor(c, ctx);
    expect(v.verdict).toBe('unresolved');
    expect(v.reason).toContain('degenerate');
  });

  it("the issue's case: b′ = 3, c′ = 0 of 300 against the ρ_U floor (UB 1.22 pp) routes on the unconditional bound → unresolved", () => {
    const c = {
      id: 'Q4',
      estimand: 'theta',
      role: 'primary',
      rule: 'lower-bound-above',
      margin: 0,
      aboveUpperBoundOf: ['rho_U'],
      method: 'conditional-exact',
      alphaPerComponent: 0.025,
    } as Criterion;
    const ctx = context(
      [c],
      [THETA, RHO_U],
      cells(
        ['A', 'T', 'S', 'U'],
        [
          [3, [1, 0, 1, 1]],
          [297, [1, 1, 1, 1]],
        ],
      ),
    );
    const v = verdictFor(c, ctx);
    // old routing: conditional UB = 3/300 = 1.00 pp ≤ τ = 1.22 pp → "not detected" (error 0.149 at θ = 2 pp)
    expect(v.verdict).toBe('unresolved');
    if (v.verdict !== 'unresolved') throw new Error('unreachable');
    expect(v.bound!.interval).toBe('exact-cp-difference/a0.0125');
    expect(v.bound!.threshold).toBeCloseTo(1 - 0.025 ** (1 / 300), 12);
    expect(v.bound!.upper).toBeGreaterThan(0.01);
  });

  it('margin 0 without companions keeps the conditional bound: the exact sign test decides', () => {
    const c = {
      id: 'Q4',
      estimand: 'theta',
      role: 'primary',
      rule: 'lower-bound-above',
      margin: 0,
      method: 'conditional-exact',
      alphaPerComponent: 0.05,
    } as Criterion;
    const ctx = context(
      [c],
      [THETA],
      cells(
        ['A', 'T', 'S'],
        [
          [12, [1, 0, 1]],
          [88, [1, 1, 1]],
        ],
      ),
    );
    const v = verdictFor(c, ctx);
    expect(v.verdict).toBe('holds');
    expect(v.verdict === 'holds' && v.bound.interval).toBe('conditional-exact/a0.05');
  });
});

describe('a word routed on a score interval stands only when the exact bound at the same level gives it', () => {
  const rho: Estimand = { id: 'rho_X', kind: 'rho', reference: 'A', intervention: 'N' };
  const wilsonC = {
    id: 'W',
    estimand: 'rho_X',
    role: 'primary',
    rule: 'lower-bound-above',
    margin: 0.02,
    method: 'wilson',
    level: 0.95,
  } as Criterion;

  it('confirmed: Wilson and Clopper–Pearson (α 0.025) both clear the margin → holds, the reason names the exact bound', () => {
    const ctx = context(
      [wilsonC],
      [rho],
      cells(
        ['A', 'N'],
        [
          [30, [1, 0]],
          [170, [1, 1]],
        ],
      ),
    );
    const w = verdictFor(wilsonC, ctx);
    expect(w.verdict).toBe('holds');
    expect(w.reason).toContain('confirmed by the exact bound clopper-pearson/a0.025');
  });

  it('not confirmed: at 5/50 flips Wilson clears 2 pp but Clopper–Pearson does not → unresolved (old: holds)', () => {
    // 3 of 50 flips: the Wilson 95% lower bound lies above 2 pp, the exact Clopper–Pearson one (α 0.025) below
    const ctx = context(
      [wilsonC],
      [rho],
      cells(
        ['A', 'N'],
        [
          [3, [1, 0]],
          [47, [1, 1]],
        ],
      ),
    );
    const e = ctx.estimands[0] as AvailableEstimand;
    const wil = e.intervals.find((i) => i.id === 'wilson/l0.95')!;
    const cp = e.intervals.find((i) => i.id === 'clopper-pearson/a0.025')!;
    expect(wil.lower).toBeGreaterThan(0.02);
    expect(cp.lower).toBeLessThan(0.02);
    const w = verdictFor(wilsonC, ctx);
    expect(w.verdict).toBe('unresolved');
    expect(w.reason).toContain('does not confirm it (unresolved)');
    const x = expectedWord(wilsonC as unknown as Obj, {
      lower: wil.lower,
      upper: wil.upper,
      threshold: 0.02,
      p: null,
      estimate: e.estimate,
      discordant: 3,
    });
    expect(x).toBe('holds');
    expect(
      confirmedWord(
        x,
        expectedWord(wilsonC as unknown as Obj, {
          lower: cp.lower,
          upper: cp.upper,
          threshold: 0.02,
          p: null,
          estimate: e.estimate,
          discordant: 3,
        }),
      ),
    ).toBe('unresolved');
  });
});
