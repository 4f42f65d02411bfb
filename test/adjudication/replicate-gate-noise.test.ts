/**
 * The replicate gate under registered execution noise: with scope per-condition C executes its own noise draw,
 * so its action digests differ from A's by design and only the outcome tolerance (maxChanged) is checked — by the
 * adjudicator and by the independent cross-check alike. Without noise, or with shared noise (the same draw), a
 * digest mismatch still fails the gate.
 */
import { describe, expect, it } from 'vitest';
import { evaluateGates } from '../../src/adjudication/gates.js';
import { expectedGates } from '../../src/crosscheck/cross-check-gates.js';
import { RowIndex } from '../../src/adjudication/joint-cohort.js';
import { PlainStudy, readRowsPlain, type Obj } from '../../src/crosscheck/cross-check-model.js';
import { sha256Hex } from '../../src/core/hash.js';
import { ProtocolSchema, type Protocol } from '../../src/protocol/index.js';
import { blackoutOutcome, blackoutProtocol, makeRows, type EpisodeContext, type RowSpec } from './fixtures.js';

const noise = (scope: 'shared' | 'per-condition') => ({
  kind: 'lite' as const,
  executionNoise: { kind: 'action-gaussian' as const, sigma: 0.03, seed: 9, scope },
});

function protocolWith(simulator: Protocol['simulator'], maxChanged: number): Protocol {
  const base = blackoutProtocol({ simulator });
  const gates = (base.gates ?? []).map((g) => (g.kind === 'replicate' ? { ...g, maxChanged } : g));
  return ProtocolSchema.parse({ ...base, gates });
}

/** C's actions differ from A's on every unit (its own draw) and C flips the outcome of the first `flips` units. */
function noisyC(flips: number) {
  return (ctx: EpisodeContext): RowSpec => {
    const spec = blackoutOutcome(ctx);
    if (ctx.kind !== 'C') return spec;
    const a = blackoutOutcome({ ...ctx, kind: 'A', ep: { ...ctx.ep, condition: 'A' } });
    return {
      ...spec,
      success: ctx.i < flips ? !(a.success ?? false) : (a.success ?? null),
      actionDigest: sha256Hex(`C-own-draw/${ctx.ep.seed}`),
    };
  };
}

function replicate(
  protocol: Protocol,
  flips: number,
): { passed: boolean; crossPassed: boolean; detail: string; changed: unknown; mismatches: unknown } {
  const rows = makeRows(protocol, noisyC(flips));
  const gate = evaluateGates(protocol, new RowIndex(protocol, rows)).results.find((g) => g.kind === 'replicate')!;
  const study = new PlainStudy(
    JSON.parse(JSON.stringify(protocol)) as Obj,
    readRowsPlain(rows.map((r) => JSON.stringify(r)).join('\n') + '\n'),
  );
  const cross = expectedGates(study, new Set()).find((g) => g.gate === gate.gate)!;
  return {
    passed: gate.passed,
    crossPassed: cross.passed,
    detail: gate.detail,
    changed: gate.observed['changed'],
    mismatches: gate.observed['digestMismatches'],
  };
}

describe('replicate gate under execution noise', () => {
  it('per-condition noise: digests may differ; the outcome tolerance decides (adjudicator and cross-check agree)', () => {
    const ok = replicate(protocolWith(noise('per-condition'), 3), 3);
    expect(ok).toMatchObject({ passed: true, crossPassed: true, changed: 3, mismatches: 40 });
    expect(ok.detail).toContain('per-condition execution noise');
    const over = replicate(protocolWith(noise('per-condition'), 3), 4);
    expect(over).toMatchObject({ passed: false, crossPassed: false, changed: 4 });
  });

  it('no noise or shared noise: a digest mismatch still fails the gate, whatever the outcomes', () => {
    expect(replicate(protocolWith({ kind: 'lite' }, 3), 0)).toMatchObject({
      passed: false,
      crossPassed: false,
      changed: 0,
      mismatches: 40,
    });
    expect(replicate(protocolWith(noise('shared'), 3), 0)).toMatchObject({
      passed: false,
      crossPassed: false,
      changed: 0,
      mismatches: 40,
    });
  });
});
