import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACTION_RULES,
  adjudicate,
  amend,
  closeout,
  completeRun,
  crossCheck,
  failRun,
  isSealedState,
  loadUnit,
  NEXT_COMMAND,
  precommit,
  readUnitState,
  resumeRun,
  seal,
  startRun,
  startSmallRun,
  UNIT_ACTIONS,
  UNIT_STATES,
  type UnitAction,
  type UnitState,
} from '../../src/evidence/index.js';
import { FormalRun } from '../../src/evidence/transitions/formal-run.js';
import {
  buildUnit,
  clock,
  expectImepError,
  precommitInput,
  removeTree,
  REVIEWER,
  row,
  RUNNER,
  snapshot,
  tempDir,
} from './helpers.js';

const call: Record<UnitAction, (dir: string) => Promise<unknown>> = {
  precommit: (d) => precommit(d, precommitInput()),
  probe: (d) => startSmallRun(d, 'probe', { operator: RUNNER }),
  smoke: (d) => startSmallRun(d, 'smoke', { operator: RUNNER }),
  run: (d) => startRun(d, { operator: RUNNER }),
  resume: (d) => resumeRun(d, { operator: RUNNER }),
  append: (d) => new FormalRun(d, 'formal-1', 0).appendRow(row(0)),
  complete: (d) => completeRun(d),
  'fail-run': (d) => failRun(d, { reason: 'test', operator: RUNNER }),
  seal: (d) => seal(d, { operator: RUNNER }),
  adjudicate: (d) => adjudicate(d, { adjudicator: 'x', result: null, operator: REVIEWER }),
  'cross-check': (d) => crossCheck(d, { outcome: 'agrees', method: 'rerun', operator: REVIEWER }),
  closeout: (d) => closeout(d, { operator: REVIEWER }),
  amend: (d) => amend(d, { text: 'x', affects: ['f'], author: RUNNER }),
};

let root: string;
const unitIn = new Map<UnitState, string>();

beforeAll(async () => {
  root = await tempDir('imep-lifecycle-');
  for (const s of UNIT_STATES) {
    const dir = join(root, s);
    await buildUnit(dir, s);
    unitIn.set(s, dir);
  }
});
afterAll(async () => removeTree(root));

describe('lifecycle state machine', () => {
  it('each built unit is in the state it was driven to', async () => {
    for (const s of UNIT_STATES) expect((await readUnitState(unitIn.get(s)!)).state).toBe(s);
  });

  const pairs = UNIT_STATES.flatMap((s) =>
    UNIT_ACTIONS.filter((a) => !ACTION_RULES[a].from.includes(s)).map((a) => [s, a] as const),
  );

  it(`refuses every out-of-order (state, action) pair (${pairs.length} pairs), changing nothing`, async () => {
    let refused = 0;
    for (const [state, action] of pairs) {
      const dir = unitIn.get(state)!;
      const before = await snapshot(dir);
      const expected =
        state === 'closed' || (isSealedState(state) && ACTION_RULES[action].preSeal)
          ? 'E_UNIT_SEALED'
          : 'E_OUT_OF_ORDER';
      const err = await expectImepError(call[action](dir), expected);
      const line = err.oneLine();
      expect(line, `${state}/${action}`).toContain(`unit-under-test`);
      if (state !== 'closed') expect(line, `${state}/${action}`).toContain(`'${state}'`);
      expect(line, `${state}/${action}`).toContain(NEXT_COMMAND[state].replace('imep campaign ', ''));
      expect(line.includes('\n'), 'one line').toBe(false);
      expect(await snapshot(dir), `${state}/${action} left the unit unchanged`).toEqual(before);
      refused++;
    }
    expect(refused).toBe(pairs.length);
    console.log(`lifecycle: ${refused}/${pairs.length} out-of-order pairs refused`);
  });

  it('names the next command, e.g. precommitted → run', async () => {
    const err = await expectImepError(seal(unitIn.get('precommitted')!), 'E_OUT_OF_ORDER');
    expect(err.message).toBe(
      "unit unit-under-test is 'precommitted'; run `imep campaign run` first (`imep campaign seal` comes later)",
    );
  });

  it('refuses to complete a run with rows missing', async () => {
    const dir = join(root, 'short');
    await buildUnit(dir, 'precommitted');
    const run = await startRun(dir, { operator: RUNNER });
    await run.appendRow(row(0));
    const err = await expectImepError(completeRun(dir), 'E_OUT_OF_ORDER');
    expect(err.message).toContain('1 of 4 planned rows');
  });

  it('typed handles expose only the legal operations', async () => {
    const sealed = await loadUnit(unitIn.get('sealed')!);
    expect(sealed.state).toBe('sealed');
    if (sealed.state === 'sealed') {
      // @ts-expect-error a SealedUnit has no append method
      expect(sealed.appendRow).toBeUndefined();
      expect(typeof sealed.adjudicate).toBe('function');
    }
    const closed = await loadUnit(unitIn.get('closed')!);
    if (closed.state === 'closed') {
      // @ts-expect-error a ClosedUnit cannot be amended
      expect(closed.amend).toBeUndefined();
      expect((await closed.verify()).ok).toBe(true);
    }
    const running = await loadUnit(unitIn.get('running')!);
    if (running.state === 'running' && 'resume' in running) {
      // @ts-expect-error an interrupted run must be resumed before appending
      expect(running.appendRow).toBeUndefined();
      const { unit } = await running.resume({ operator: RUNNER, now: clock });
      expect(unit.nextSeq).toBe(0);
    }
  });
});
