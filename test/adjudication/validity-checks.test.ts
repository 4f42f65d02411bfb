/**
 * Issue #31 items 2 and 3, on constructed sealed inputs (the mini blackout ladder of fixtures.ts, n = 40):
 *
 *   informative-removal  T_mu's rows removed (E_DONOR_SHORT) on 10 units where A fails 8 of 10 (informative:
 *                        the kept units are the ones A wins) — every estimand reading T_mu (D_T_mu, rho_T_mu,
 *                        theta) is withheld with the reason in words, and states its population; removed on 4 units
 *                        that look like the rest (non-informative) — nothing is withheld, the population is stated;
 *                        removed on 10 units differing on A alone at raw p = 0.041 — Holm-adjusted over the estimand's
 *                        3 tables (0.123) it is not flagged (the family-wise rule of the fix-removal review);
 *                        registered 'qualify' — the verdict keeps its word and says why it is qualified;
 *   blocked-reads        a policy whose outcomes under N_blk equal A's while wrong content (S_pi) changes 12 of them
 *                        — the N family (D_N: Q1, Q1_eligibility) is withheld with the reason in words; the honest
 *                        ladder (N_blk lowers success) passes and keeps its verdicts.
 * Each case is recomputed by the independent cross-check, which must agree (gates, numbers and withheld words).
 */
import { describe, expect, it } from 'vitest';
import { computeAdjudication, renderAdjudication } from '../../src/adjudication/compute.js';
import type { Adjudication } from '../../src/adjudication/index.js';
import { crossCheckAdjudication } from '../../src/crosscheck/index.js';
import { sha256Hex } from '../../src/core/hash.js';
import { ProtocolSchema, type ProtocolInput } from '../../src/protocol/index.js';
import { blackoutOutcome, blackoutProtocol, makeRows, type EpisodeContext, type RowSpec } from './fixtures.js';

function adjudicate(input: ProtocolInput, outcome: (ctx: EpisodeContext) => RowSpec) {
  const protocol = ProtocolSchema.parse(input);
  const rows = makeRows(protocol, outcome);
  const protocolText = JSON.stringify(protocol);
  const rowsText = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const sealText = JSON.stringify({ merkle: { scheme: 'imep-merkle-v1', root: 'a'.repeat(64) } });
  const a = computeAdjudication(
    {
      dir: '/nowhere',
      unitId: 'u',
      protocol,
      protocolHash: sha256Hex(protocolText),
      precommitSha256: 'b'.repeat(64),
      planHash: 'h'.repeat(64),
      rows,
      rowsSha256: sha256Hex(rowsText),
      sealRoot: 'a'.repeat(64),
      sealSha256: sha256Hex(sealText),
      code: { gitCommit: null, dirty: null, packageVersion: '0' },
      checkpointHashes: {},
      packageVersions: {},
      nodeVersion: 'v20',
      prng: { name: 'x', version: 1 },
    },
    { operator: { id: 'rev', source: 'explicit' }, ranBy: ['run'], override: null, amendments: [] },
  );
  const cross = crossCheckAdjudication({ protocolText, rowsText, sealText }, renderAdjudication(a));
  return { a, cross };
}

const verdict = (a: Adjudication, id: string) => a.verdicts.find((v) => v.criterion === id)!;
const gate = (a: Adjudication, id: string) => a.gates.find((g) => g.gate === id);
const estimand = (a: Adjudication, id: string) => a.estimands.find((e) => e.id === id)!;

/** T_mu removed (donor too short) on the listed seed indices; every other outcome as the mini ladder's. */
function removedT(seeds: readonly number[]) {
  return (ctx: EpisodeContext): RowSpec =>
    ctx.ep.condition === 'T_mu' && seeds.includes(ctx.i)
      ? { status: 'removed', failureCode: 'E_DONOR_SHORT' }
      : blackoutOutcome(ctx);
}
// A succeeds on seeds 0–31: seeds 30–39 hold 2 of A's wins in 10 (kept: 30/30) — informative
const INFORMATIVE = [30, 31, 32, 33, 34, 35, 36, 37, 38, 39];
// seeds 10, 20, 33, 38: A wins 2 of 4 (kept: 30/36) — not informative
const BENIGN = [10, 20, 33, 38];

/** T_mu removed on seeds 0–9; they differ from the kept on A alone (4/10 against 24/30, p = 0.0411); S_pi, U: even seeds. */
function rawOnlyOnA(ctx: EpisodeContext): RowSpec {
  const c = ctx.ep.condition;
  if (c === 'T_mu' && ctx.i < 10) return { status: 'removed', failureCode: 'E_DONOR_SHORT' };
  if (c === 'S_pi' || c === 'U') return { success: ctx.i % 2 === 0 };
  const a = ctx.i < 10 ? ctx.i < 4 : ctx.i < 34;
  return c === 'A' || c === 'C' || c === 'T_mu' ? { success: a } : blackoutOutcome(ctx);
}

describe('informative donor removal (issue #31 item 2)', () => {
  it('withholds every estimand covering a selected sub-population, says why in words, and the cross-check agrees', () => {
    const { a, cross } = adjudicate(blackoutProtocol(), removedT(INFORMATIVE));
    const g = gate(a, 'informative-removal')!;
    expect(g.passed).toBe(false);
    expect(g.onFail).toBe('invalid');
    expect([...g.failing].sort()).toEqual(['D_T_mu', 'rho_T_mu', 'theta']);
    const table = (
      g.observed['tables'] as {
        estimand: string;
        outcome: string;
        kept: unknown;
        removed: unknown;
        p: number;
        pAdjusted: number;
      }[]
    ).find((t) => t.estimand === 'theta' && t.outcome === 'A')!;
    expect(table.kept).toEqual({ successes: 30, n: 30 });
    expect(table.removed).toEqual({ successes: 2, n: 10 });
    expect(Math.abs(table.p - 5.85139904025353e-7)).toBeLessThan(1e-15); // scipy.stats.fisher_exact([[30, 0], [2, 8]])
    // Holm over theta's 3 tables (A, S_pi, U; all three differ here): still far below α, so still informative
    expect(table.pAdjusted).toBeLessThan(0.05 / 3);
    expect(g.detail).toMatch(
      /^informative removal: .*theta: A succeeds 2\/10 on the removed units against 30\/30 on the kept/,
    );
    for (const id of ['Q3_T_mu', 'Q4']) {
      const v = verdict(a, id);
      expect(v.verdict).toBe('invalid');
      expect(v.reason).toMatch(
        /number withheld: .*gate informative-removal: informative removal: .*selected sub-population/,
      );
    }
    // estimands not losing units keep their numbers and words
    const before = adjudicate(blackoutProtocol(), blackoutOutcome).a;
    expect(verdict(a, 'Q3_S_pi').verdict).toBe(verdict(before, 'Q3_S_pi').verdict);
    expect(verdict(a, 'Q1').verdict).toBe(verdict(before, 'Q1').verdict);
    expect(estimand(a, 'theta').cohort.removed).toEqual({
      total: 10,
      byCode: { E_DONOR_SHORT: 10 },
      byCondition: { T_mu: 10 },
      reasons: { E_DONOR_SHORT: 'removed in the fixture' },
    });
    expect(estimand(a, 'theta').cohort.population).toBe(
      '30 of 40 paired units kept, 30 resolved; 10 removed (T_mu: 10; E_DONOR_SHORT, first: removed in the fixture) — the estimand covers the kept units only',
    );
    expect(estimand(a, 'D_N').cohort.population).toBe('40 of 40 paired units kept, 40 resolved; none removed');
    expect(cross.disagreements).toEqual([]);
  });

  it('a removal that does not track outcomes withholds nothing, and every estimand still states its population', () => {
    const { a, cross } = adjudicate(blackoutProtocol(), removedT(BENIGN));
    const g = gate(a, 'informative-removal')!;
    expect(g.passed).toBe(true);
    expect(g.detail).toMatch(
      /^removal not shown informative: D_T_mu 36 kept, 4 removed; rho_T_mu 36 kept, 4 removed; theta 36 kept, 4 removed;/,
    );
    expect(verdict(a, 'Q4').verdict).not.toBe('invalid');
    expect(verdict(a, 'Q3_T_mu').verdict).not.toBe('invalid');
    expect(estimand(a, 'rho_T_mu').cohort.population).toMatch(
      /^36 of 40 paired units kept, 36 resolved; 4 removed \(T_mu: 4;/,
    );
    expect(cross.disagreements).toEqual([]);
  });

  it("one raw p < α among an estimand's tables, Holm-adjusted ≥ α: not flagged (family-wise per estimand); the cross-check agrees", () => {
    // T_mu removed on seeds 0–9. A succeeds 4/10 on the removed units against 24/30 on the kept (Fisher p = 0.0411);
    // S_pi and U succeed on even seeds (5/10 against 15/30, p = 1). theta, D_T_mu and rho_T_mu each test 3 tables
    // (A, S_pi, U): Holm gives A 3 × 0.0411 = 0.123 ≥ 0.05. Unadjusted (before the fix) all three were withheld.
    const { a, cross } = adjudicate(blackoutProtocol(), rawOnlyOnA);
    const g = gate(a, 'informative-removal')!;
    expect(g.passed).toBe(true);
    expect(g.failing).toEqual([]);
    const tables = g.observed['tables'] as {
      estimand: string;
      outcome: string;
      kept: unknown;
      removed: unknown;
      p: number;
      pAdjusted: number;
      informative: boolean;
    }[];
    const thetaA = tables.find((t) => t.estimand === 'theta' && t.outcome === 'A')!;
    expect(thetaA.kept).toEqual({ successes: 24, n: 30 });
    expect(thetaA.removed).toEqual({ successes: 4, n: 10 });
    expect(Math.abs(thetaA.p - 0.041089489069615)).toBeLessThan(1e-12); // scipy.stats.fisher_exact([[24, 6], [4, 6]])
    expect(Math.abs(thetaA.pAdjusted - 3 * 0.041089489069615)).toBeLessThan(1e-12);
    expect(thetaA.informative).toBe(false);
    expect(tables.filter((t) => t.estimand === 'theta').map((t) => t.outcome)).toEqual(['A', 'S_pi', 'U']);
    expect(g.detail).toMatch(/Holm-adjusted within each estimand, α = 0\.05/);
    for (const id of ['Q3_T_mu', 'Q4']) expect(verdict(a, id).verdict).not.toBe('invalid');
    expect(cross.disagreements).toEqual([]);
  });

  it('the cross-check applies Holm on its own: an adjudication flagging the raw p = 0.041 (the old rule) is refused', () => {
    const protocol = ProtocolSchema.parse(blackoutProtocol());
    const { a } = adjudicate(blackoutProtocol(), rawOnlyOnA);
    const forged = {
      ...a,
      gates: a.gates.map((g) =>
        g.gate === 'informative-removal' ? { ...g, passed: false, failing: ['D_T_mu', 'rho_T_mu', 'theta'] } : g,
      ),
    };
    const rows = makeRows(protocol, rawOnlyOnA);
    const x = crossCheckAdjudication(
      {
        protocolText: JSON.stringify(protocol),
        rowsText: rows.map((r) => JSON.stringify(r)).join('\n') + '\n',
        sealText: JSON.stringify({ merkle: { scheme: 'imep-merkle-v1', root: 'a'.repeat(64) } }),
      },
      JSON.stringify(forged),
    );
    expect(x.disagreements.map((d) => d.path)).toContain('gates[informative-removal].passed');
  });

  it("registered 'qualify': the verdict keeps its word and carries the reason; the cross-check agrees", () => {
    const withhold = adjudicate(blackoutProtocol(), removedT(INFORMATIVE)).a;
    const input = blackoutProtocol({
      validity: { informativeRemoval: { onInformative: 'qualify' } },
    } as Partial<ProtocolInput>);
    const { a, cross } = adjudicate(input, removedT(INFORMATIVE));
    expect(gate(a, 'informative-removal')?.onFail).toBe('warn');
    const v = verdict(a, 'Q3_T_mu');
    expect(v.verdict).not.toBe('invalid');
    expect(v.reason).toMatch(/ — QUALIFIED: informative-removal: informative removal: .*rho_T_mu/);
    expect(withhold.verdicts.find((x) => x.criterion === 'Q3_T_mu')?.verdict).toBe('invalid');
    expect(cross.disagreements).toEqual([]);
  });

  it('the cross-check catches an adjudication that publishes a number the check withholds', () => {
    const protocol = ProtocolSchema.parse(blackoutProtocol());
    const { a } = adjudicate(blackoutProtocol(), removedT(INFORMATIVE));
    const forged = {
      ...a,
      gates: a.gates.map((g) => (g.gate === 'informative-removal' ? { ...g, passed: true, failing: [] } : g)),
      verdicts: a.verdicts.map((v) => (v.criterion === 'Q4' ? { ...v, verdict: 'unresolved' } : v)),
    };
    const rows = makeRows(protocol, removedT(INFORMATIVE));
    const protocolText = JSON.stringify(protocol);
    const rowsText = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
    const sealText = JSON.stringify({ merkle: { scheme: 'imep-merkle-v1', root: 'a'.repeat(64) } });
    const x = crossCheckAdjudication({ protocolText, rowsText, sealText }, JSON.stringify(forged));
    const paths = x.disagreements.map((d) => d.path);
    expect(paths).toContain('gates[informative-removal].passed');
    expect(paths).toContain('verdicts[Q4].verdict');
  });
});

/** A policy that detects blocked reads: under N_blk it decides from a copy of its own (outcomes = A's); S_pi's wrong content changes 12 outcomes. */
function blockDetector(ctx: EpisodeContext): RowSpec {
  const a = ctx.i < 32;
  if (ctx.ep.condition === 'N_blk') return { success: a };
  if (ctx.ep.condition === 'S_pi') return { success: ctx.i < 12 ? false : a };
  return blackoutOutcome(ctx);
}

describe('a policy that detects blocked reads (issue #31 item 3)', () => {
  it('wrong content changes outcomes but blocking does not: the N family is withheld with the reason in words', () => {
    const { a, cross } = adjudicate(blackoutProtocol(), blockDetector);
    const g = gate(a, 'blocked-reads')!;
    expect(g.passed).toBe(false);
    expect(g.failing).toEqual(['N_blk']);
    expect(g.detail).toMatch(
      /^decisions under blocking do not follow from what the policy was given: wrong content changes outcomes \(S_pi changes 12\/40 outcomes against A \(b = 12, c = 0, exact McNemar p = 0\.000488\)\), yet with every read blocked N_blk changes 0\/40 outcomes against A .* — no detectable change \(p ≥ 0\.05\); the policy may tell an empty read from an intact one and decide from a copy of its own, so the N family's numbers are withheld$/,
    );
    for (const id of ['Q1', 'Q1_eligibility']) {
      const v = verdict(a, id);
      expect(v.verdict).toBe('invalid');
      expect(v.reason).toMatch(
        /gate blocked-reads: decisions under blocking do not follow from what the policy was given/,
      );
    }
    // the content family keeps its numbers
    expect(verdict(a, 'Q3_S_pi').verdict).toBe('holds');
    expect(cross.disagreements).toEqual([]);
  });

  it('an honest ladder (blocking lowers success) passes and keeps its verdicts', () => {
    const honest = (ctx: EpisodeContext): RowSpec =>
      ctx.ep.condition === 'N_blk' ? { success: ctx.i >= 12 && ctx.i < 32 } : blockDetector(ctx);
    const { a, cross } = adjudicate(blackoutProtocol(), honest);
    const g = gate(a, 'blocked-reads')!;
    expect(g.passed).toBe(true);
    expect(g.detail).toMatch(/^decisions under blocking follow the reads: .*N_blk changes 12\/40 outcomes against A/);
    expect(verdict(a, 'Q1_eligibility').verdict).toBe('holds');
    expect(cross.disagreements).toEqual([]);
  });

  it('when no wrong-content condition changes outcomes the check is not triggered (the mini ladder: S_pi b = 2, c = 1)', () => {
    const { a } = adjudicate(blackoutProtocol(), blackoutOutcome);
    expect(gate(a, 'blocked-reads')?.passed).toBe(true);
    expect(gate(a, 'blocked-reads')?.detail).toMatch(
      /^not triggered: no wrong-content condition changes outcomes detectably/,
    );
  });
});
