/**
 * Attainable verdicts (src/campaign/attainable.ts): a criterion is warned about exactly when no outcome at its n lets
 * it hold. Checked against brute force: every (b, c) with b + c ≤ n, each bound computed by adjudication's own
 * interval routine (intervalOn) and decided by its own decideBound / p < α.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProtocol } from '../../src/protocol/load.js';
import { attainableWarnings } from '../../src/campaign/attainable.js';
import { decideBound, type BoundRule } from '../../src/adjudication/decide.js';
import { intervalOn } from '../../src/adjudication/intervals.js';
import { mcnemarExact, pairedDesign } from '../../src/stats/index.js';
import type { BoundMethod } from '../../src/protocol/index.js';

const BLACKOUT = readFileSync(join(import.meta.dirname, '../../protocols/shellgame-blackout.yaml'), 'utf8');

/** The blackout ladder at n units with its criteria replaced by `criteria` (YAML flow lines). */
function protocolWith(n: number, criteria: readonly string[], keepHolm = false) {
  const start = BLACKOUT.indexOf('criteria:\n');
  const end = BLACKOUT.indexOf('\ngates:\n');
  const text =
    `${BLACKOUT.slice(0, start)}criteria:\n${criteria.map((c) => `  - ${c}\n`).join('')}${BLACKOUT.slice(end)}`
      .replace(/^n: 400$/m, `n: ${n}`)
      .replace('end: 610399', `end: ${610000 + n - 1}`)
      .replace('estimands:\n', 'estimands:\n  - { id: rho_N, kind: rho, reference: A, intervention: N_blk }\n')
      .replace(/\nholmFamilies:\n.*\n/, keepHolm ? '$&' : '\n');
  return parseProtocol(text, 'attainable.yaml').protocol;
}

/** A paired design of A and X with b units (A succeeds, X fails), c units (the reverse), the rest both failing. */
function design(n: number, b: number, c: number) {
  const A: (0 | 1)[] = [];
  const X: (0 | 1)[] = [];
  for (let i = 0; i < n; i++) {
    A.push(i < b ? 1 : 0);
    X.push(i >= b && i < b + c ? 1 : 0);
  }
  return pairedDesign({ outcomes: { A, N_blk: X } });
}

/** Whether some outcome at n lets the rule hold, by brute force over adjudication's own routines. */
function holdsSomewhere(
  n: number,
  kind: 'D' | 'rho',
  rule: BoundRule,
  margin: number,
  req: { method: BoundMethod; alpha: number | null; level: number | null },
): boolean {
  const spec =
    kind === 'D'
      ? { shape: 'difference' as const, stats: { kind: 'D' as const, reference: 'A', intervention: 'N_blk' } }
      : { shape: 'proportion-flips' as const, stats: { kind: 'rho' as const, reference: 'A', intervention: 'N_blk' } };
  for (let b = 0; b <= n; b++)
    for (let c = 0; b + c <= n; c++) {
      const iv = intervalOn(design(n, b, c), spec, req);
      if (decideBound(rule, { lower: iv.lower, upper: iv.upper, margin }) === 'holds') return true;
    }
  return false;
}

describe('attainable verdicts', () => {
  it('n = 4, one-sided exact McNemar at α = 0.05: the smallest p is 1/16, the criterion is named; n = 5 is clean', () => {
    const rule =
      '{ id: Q1e, question: Q1, estimand: D_N, rule: p-below, test: mcnemar-exact, direction: greater, alpha: 0.05 }';
    const w = attainableWarnings(protocolWith(4, [rule]));
    expect(w).toHaveLength(1);
    expect(w[0]?.criterion).toBe('Q1e');
    expect(w[0]?.message).toContain('p = 0.06250');
    expect(w[0]?.message).toContain('it needs at least 5 paired units');
    expect(mcnemarExact(4, 0, 'greater')).toBe(1 / 16);
    expect(attainableWarnings(protocolWith(5, [rule]))).toEqual([]);
  });

  it('p-below two-sided and in a Holm family: the adjusted best case decides', () => {
    const two = '{ id: T, estimand: D_N, rule: p-below, test: mcnemar-exact, direction: two-sided, alpha: 0.05 }';
    // two-sided: 2 / 2^n < 0.05 first at n = 6 (2/64 = 0.031); n = 5 gives 0.0625
    expect(attainableWarnings(protocolWith(5, [two]))).toHaveLength(1);
    expect(attainableWarnings(protocolWith(6, [two]))).toEqual([]);
    // D_U in the 3-contrast two-sided family wave1: its p-below reads the Holm-adjusted p, at best 3 · 2/2^n
    const inFamily = '{ id: H, estimand: D_U, rule: p-below, test: mcnemar-exact, direction: two-sided, alpha: 0.05 }';
    const w6 = attainableWarnings(protocolWith(6, [inFamily], true));
    expect(w6).toHaveLength(1);
    expect(w6[0]?.message).toContain('Holm-adjusted over the 3 contrasts of family wave1 to 0.09375');
    expect(attainableWarnings(protocolWith(7, [inFamily], true))).toEqual([]);
  });

  const CASES: ReadonlyArray<{
    kind: 'D' | 'rho';
    rule: BoundRule;
    margin: number;
    method: BoundMethod;
    alpha?: number;
    level?: number;
  }> = [
    { kind: 'D', rule: 'lower-bound-above', margin: 0.5, method: 'exact-cp-difference', alpha: 0.05 },
    { kind: 'D', rule: 'upper-bound-below', margin: -0.4, method: 'exact-cp-difference', alpha: 0.05 },
    { kind: 'D', rule: 'equivalence', margin: 0.3, method: 'exact-cp-difference', level: 0.9 },
    { kind: 'D', rule: 'equivalence', margin: 0.3, method: 'tango', level: 0.9 },
    { kind: 'rho', rule: 'lower-bound-above', margin: 0.6, method: 'clopper-pearson', alpha: 0.05 },
    { kind: 'rho', rule: 'upper-bound-below', margin: 0.25, method: 'clopper-pearson', alpha: 0.025 },
    { kind: 'rho', rule: 'upper-bound-below', margin: 0.25, method: 'wilson', level: 0.95 },
  ];
  for (const k of CASES) {
    it(`${k.rule} ${k.method} on ${k.kind} at margin ${k.margin}: warned exactly where brute force finds no "holds"`, () => {
      const est = k.kind === 'D' ? 'D_N' : 'rho_N';
      const params =
        k.rule === 'equivalence'
          ? `margin: ${k.margin}, method: ${k.method}, level: ${k.level}`
          : `margin: ${k.margin}, method: ${k.method}${k.alpha !== undefined ? `, alphaPerComponent: ${k.alpha}` : ''}${k.level !== undefined ? `, level: ${k.level}` : ''}`;
      const crit = `{ id: C1, estimand: ${est}, rule: ${k.rule}, ${params} }`;
      const flips: string[] = [];
      for (let n = 1; n <= 14; n++) {
        const p = protocolWith(n, [crit]);
        const warned = attainableWarnings(p).length > 0;
        // the verdict needs its exact bound (the routed one, or the exact confirmation of an approximate one)
        const exact =
          k.method === 'exact-cp-difference' || k.method === 'clopper-pearson'
            ? { method: k.method, alpha: k.alpha ?? null, level: k.level ?? null }
            : k.kind === 'D'
              ? { method: 'exact-cp-difference' as const, alpha: (1 - (k.level ?? 0.95)) / 4, level: null }
              : { method: 'clopper-pearson' as const, alpha: (1 - (k.level ?? 0.95)) / 2, level: null };
        const possible = holdsSomewhere(n, k.kind, k.rule, k.margin, exact);
        expect(warned, `n = ${n}`).toBe(!possible);
        flips.push(warned ? 'w' : '.');
      }
      // each case crosses from unattainable to attainable inside the range (so the test can fail both ways)
      expect(flips.join('')).toMatch(/^w+\.+$/);
    });
  }
});
