import { describe, expect, it } from 'vitest';
import { ImepError } from '../../src/core/errors.js';
import {
  UNRESOLVED,
  clusterTasks,
  jointlyResolved,
  pairedDesign,
  requireResolved,
  selectUnits,
  taskSizes,
  validatePairedDesign,
  type PairedDesign,
} from '../../src/stats/paired-outcomes.js';

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ImepError);
    expect((e as ImepError).code).toBe('E_STATS_DOMAIN');
    return (e as ImepError).field;
  }
  throw new Error('expected a domain error');
}

describe('pairedDesign', () => {
  it('stores outcomes as Uint8Array with 255 for unresolved, tasks in first-appearance order', () => {
    const d = pairedDesign({
      outcomes: { A: [1, 0, true, null], X: [0, 0, false, UNRESOLVED] },
      tasks: ['RC5', 'RC3', 'RC5', 'RC3'],
    });
    expect(d.n).toBe(4);
    expect(d.conditions).toEqual(['A', 'X']);
    expect(Array.from(d.outcomes.A!)).toEqual([1, 0, 1, UNRESOLVED]);
    expect(d.outcomes.X).toBeInstanceOf(Uint8Array);
    expect(d.taskNames).toEqual(['RC5', 'RC3']);
    expect(Array.from(d.task)).toEqual([0, 1, 0, 1]);
    expect(Array.from(taskSizes(d))).toEqual([2, 2]);
    expect(d.cluster).toBeUndefined();
  });

  it('defaults to one task "all" and accepts {names, index} labels', () => {
    expect(pairedDesign({ outcomes: { A: [1, 0] } }).taskNames).toEqual(['all']);
    const d = pairedDesign({
      outcomes: { A: [1, 0, 1] },
      tasks: { names: ['t0', 't1'], index: [1, 1, 0] },
      clusters: ['c1', 'c1', 'c2'],
    });
    expect(Array.from(d.task)).toEqual([1, 1, 0]);
    expect(d.clusterNames).toEqual(['c1', 'c2']);
    expect(Array.from(clusterTasks(d))).toEqual([1, 0]);
  });

  it('accepts the empty design', () => {
    const d = pairedDesign({ outcomes: { A: [], X: [] } });
    expect(d.n).toBe(0);
  });

  it('names the offending argument', () => {
    expect(fieldOf(() => pairedDesign({ outcomes: {} }))).toBe('outcomes');
    expect(fieldOf(() => pairedDesign({ outcomes: { A: [1, 0], X: [1] } }))).toBe('outcomes.X');
    expect(fieldOf(() => pairedDesign({ outcomes: { A: [1, 2] } }))).toBe('outcomes.A[1]');
    expect(fieldOf(() => pairedDesign({ outcomes: { A: [1, 0] }, tasks: ['a'] }))).toBe('tasks');
    expect(fieldOf(() => pairedDesign({ outcomes: { A: [1, 0] }, tasks: ['a', ''] }))).toBe('tasks[1]');
    expect(fieldOf(() => pairedDesign({ outcomes: { A: [1, 0] }, unitIds: ['u', 'u'] }))).toBe('design.unitIds');
    expect(fieldOf(() => pairedDesign({ outcomes: { A: [1, 0] }, tasks: { names: ['a'], index: [0, 1] } }))).toBe(
      'design.task[1]',
    );
    expect(fieldOf(() => pairedDesign({ outcomes: { A: [1] }, clusters: { names: ['c'], index: [3] } }))).toBe(
      'design.cluster[0]',
    );
  });

  it('validates hand-built designs', () => {
    const good = pairedDesign({ outcomes: { A: [1, 0] } });
    const bad: PairedDesign = { ...good, outcomes: { A: new Uint8Array([1, 7]) } };
    expect(fieldOf(() => validatePairedDesign(bad))).toBe('design.outcomes.A[1]');
    const short: PairedDesign = { ...good, task: new Int32Array(1) };
    expect(fieldOf(() => validatePairedDesign(short))).toBe('design.task');
    const half: PairedDesign = { ...good, cluster: new Int32Array(2) };
    expect(fieldOf(() => validatePairedDesign(half))).toBe('design.cluster');
  });

  it('refuses a cluster that spans tasks', () => {
    const d = pairedDesign({ outcomes: { A: [1, 0] }, tasks: ['a', 'b'], clusters: ['c', 'c'] });
    expect(fieldOf(() => clusterTasks(d))).toBe('design.cluster');
  });
});

describe('resolution', () => {
  const d = pairedDesign({
    outcomes: { A: [1, null, 0, 1, 1], S: [1, 1, null, 0, 1], T: [0, 1, 1, 1, null] },
    tasks: ['a', 'a', 'b', 'b', 'b'],
    clusters: ['c0', 'c0', 'c1', 'c2', 'c2'],
    unitIds: ['u0', 'u1', 'u2', 'u3', 'u4'],
  });

  it('requireResolved names the unresolved condition', () => {
    expect(fieldOf(() => requireResolved(d, ['A']))).toBe('outcomes.A');
    expect(fieldOf(() => requireResolved(d, ['Z']))).toBe('condition');
  });

  it('jointlyResolved keeps the joint cohort in order and keeps the task list', () => {
    const j = jointlyResolved(d, ['A', 'S', 'T']);
    expect(j.unitIds).toEqual(['u0', 'u3']);
    expect(Array.from(j.outcomes.A!)).toEqual([1, 1]);
    expect(Array.from(j.outcomes.T!)).toEqual([0, 1]);
    expect(Array.from(j.task)).toEqual([0, 1]);
    expect(Array.from(j.cluster!)).toEqual([0, 2]);
    expect(j.taskNames).toEqual(['a', 'b']);
    expect(() => requireResolved(j, ['A', 'S', 'T'])).not.toThrow();
    expect(jointlyResolved(d, ['A']).n).toBe(4);
  });

  it('selectUnits checks indices', () => {
    expect(selectUnits(d, [4, 0]).unitIds).toEqual(['u4', 'u0']);
    expect(fieldOf(() => selectUnits(d, [5]))).toBe('units[0]');
  });
});
