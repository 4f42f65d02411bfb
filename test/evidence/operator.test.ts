import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adjudicate,
  currentOperator,
  readAdjudications,
  resumeRun,
  unitStatus,
  completeRun,
  seal,
} from '../../src/evidence/index.js';
import { buildUnit, expectImepError, PLANNED_ROWS, removeTree, REVIEWER, row, RUNNER, tempDir } from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await tempDir('imep-operator-');
});
afterAll(async () => removeTree(root));

describe('operator identity', () => {
  it('comes from IMEP_OPERATOR, else user@host', () => {
    expect(currentOperator({ IMEP_OPERATOR: ' review-7 ' })).toEqual({ id: 'review-7', source: 'env' });
    const os = currentOperator({});
    expect(os.source).toBe('os');
    expect(os.id).toMatch(/.+@.+/);
  });

  it('refuses adjudication by the operator that ran the conditions', async () => {
    const dir = join(root, 'same');
    await buildUnit(dir, 'sealed');
    const err = await expectImepError(
      adjudicate(dir, { adjudicator: 'a', result: null, operator: RUNNER }),
      'E_SAME_OPERATOR',
    );
    expect(err.message).toBe(
      "operator 'runner-session' ran the conditions of unit unit-under-test; adjudicate must come from another session",
    );
    expect(err.hint).toContain('IMEP_OPERATOR');
    await expectImepError(
      adjudicate(dir, { adjudicator: 'a', result: null, operator: RUNNER, overrideSameOperator: { reason: '  ' } }),
      'E_SAME_OPERATOR',
    );
  });

  it('accepts an override with a reason and records it', async () => {
    const dir = join(root, 'override');
    await buildUnit(dir, 'sealed');
    const rec = await adjudicate(dir, {
      adjudicator: 'a',
      result: null,
      operator: RUNNER,
      overrideSameOperator: { reason: 'single-operator lab; reviewed by PI' },
    });
    expect(rec.sameOperatorOverride).toEqual({
      by: 'runner-session',
      reason: 'single-operator lab; reviewed by PI',
      ranBy: ['runner-session'],
    });
    expect((await readAdjudications(dir))[0]?.sameOperatorOverride?.reason).toBe('single-operator lab; reviewed by PI');
    expect((await unitStatus(dir)).adjudication.override).toBe('single-operator lab; reviewed by PI');
  });

  it('an operator who resumed the run also ran the conditions', async () => {
    const dir = join(root, 'resumed');
    await buildUnit(dir, 'running');
    const { run } = await resumeRun(dir, { operator: REVIEWER });
    for (let i = 0; i < PLANNED_ROWS; i++) await run.appendRow(row(i));
    await completeRun(dir);
    await seal(dir, { operator: RUNNER });
    await expectImepError(adjudicate(dir, { adjudicator: 'a', result: null, operator: REVIEWER }), 'E_SAME_OPERATOR');
    const rec = await adjudicate(dir, {
      adjudicator: 'a',
      result: null,
      operator: { id: 'third-session', source: 'explicit' },
    });
    expect(rec.ranBy).toEqual(['review-session', 'runner-session']);
    expect(rec.sameOperatorOverride).toBeNull();
  });
});
