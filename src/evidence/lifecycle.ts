import { ImepError } from '../core/index.js';

/**
 * The campaign state machine (paper: "precommit, probe, smoke, formal run, seal, adjudication,
 * cross-check and closeout"):
 *
 *   created ─precommit→ precommitted ─(probe | smoke)*─ run→ running ─complete→ run-complete
 *           ─seal→ sealed ─adjudicate→ adjudicated ─cross-check→ cross-checked ─closeout→ closed
 *
 * plus: `resume` (running → running), `fail-run` (running | run-complete → precommitted; the failed
 * run is renamed into failed-runs/, never deleted), re-adjudication (adjudicated → adjudicated),
 * and `amend` (any state from precommitted to cross-checked; the state only decides the amendment's
 * classification). Pure: the I/O that finds a unit's state is in unit-state.ts.
 *
 * A refused action throws one line naming the unit, its state and the next command:
 *   E_OUT_OF_ORDER — the action is not legal now ("unit X is 'precommitted'; run `imep campaign run` first");
 *   E_UNIT_SEALED  — the action would add pre-seal evidence to a sealed unit, or anything to a closed one.
 */

export const UNIT_STATES = [
  'created',
  'precommitted',
  'running',
  'run-complete',
  'sealed',
  'adjudicated',
  'cross-checked',
  'closed',
] as const;
export type UnitState = (typeof UNIT_STATES)[number];

export const UNIT_ACTIONS = [
  'precommit',
  'probe',
  'smoke',
  'run',
  'resume',
  'append',
  'complete',
  'fail-run',
  'seal',
  'adjudicate',
  'cross-check',
  'closeout',
  'amend',
] as const;
export type UnitAction = (typeof UNIT_ACTIONS)[number];

interface ActionRule {
  readonly from: readonly UnitState[];
  readonly command: string;
  /** Writes evidence that must exist before the seal (refused with E_UNIT_SEALED once sealed). */
  readonly preSeal: boolean;
}

export const ACTION_RULES: Readonly<Record<UnitAction, ActionRule>> = {
  precommit: { from: ['created'], command: 'imep campaign precommit', preSeal: true },
  probe: { from: ['precommitted'], command: 'imep campaign probe', preSeal: true },
  smoke: { from: ['precommitted'], command: 'imep campaign smoke', preSeal: true },
  run: { from: ['precommitted'], command: 'imep campaign run', preSeal: true },
  resume: { from: ['running'], command: 'imep campaign resume', preSeal: true },
  append: { from: ['running'], command: 'imep campaign resume', preSeal: true },
  complete: { from: ['running'], command: 'imep campaign run', preSeal: true },
  'fail-run': { from: ['running', 'run-complete'], command: 'imep campaign fail-run', preSeal: true },
  seal: { from: ['run-complete'], command: 'imep campaign seal', preSeal: true },
  adjudicate: { from: ['sealed', 'adjudicated'], command: 'imep campaign adjudicate', preSeal: false },
  'cross-check': { from: ['adjudicated'], command: 'imep campaign cross-check', preSeal: false },
  closeout: { from: ['cross-checked'], command: 'imep campaign closeout', preSeal: false },
  amend: {
    from: ['precommitted', 'running', 'run-complete', 'sealed', 'adjudicated', 'cross-checked'],
    command: 'imep campaign amend',
    preSeal: false,
  },
};

/** The command that moves a unit on from each state. */
export const NEXT_COMMAND: Readonly<Record<UnitState, string>> = {
  created: 'imep campaign precommit',
  precommitted: 'imep campaign run',
  running: 'imep campaign resume',
  'run-complete': 'imep campaign seal',
  sealed: 'imep campaign adjudicate',
  adjudicated: 'imep campaign cross-check',
  'cross-checked': 'imep campaign closeout',
  closed: 'imep campaign verify',
};

export function stateIndex(state: UnitState): number {
  return UNIT_STATES.indexOf(state);
}

export function isSealedState(state: UnitState): boolean {
  return stateIndex(state) >= stateIndex('sealed');
}

export function isAllowed(state: UnitState, action: UnitAction): boolean {
  return ACTION_RULES[action].from.includes(state);
}

/** The error for `action` refused in `state`, or null when the action is allowed. */
export function refusal(unitId: string, state: UnitState, action: UnitAction, file?: string): ImepError | null {
  if (isAllowed(state, action)) return null;
  const rule = ACTION_RULES[action];
  const opts = file === undefined ? {} : { file };
  // the next command in full, with the unit folder when it is known (before precommit it takes the protocol file)
  const next = (s: UnitState): string =>
    file === undefined || s === 'created' || s === 'precommitted' ? NEXT_COMMAND[s] : `${NEXT_COMMAND[s]} ${file}`;
  if (state === 'closed') {
    return new ImepError(
      'E_UNIT_SEALED',
      `unit ${unitId} is closed; nothing can be added after closeout (\`${rule.command}\` refused)`,
      {
        ...opts,
        hint: `check it with \`${next('closed')}\`; new evidence needs a new campaign`,
      },
    );
  }
  if (isSealedState(state) && rule.preSeal) {
    return new ImepError(
      'E_UNIT_SEALED',
      `unit ${unitId} is '${state}'; a sealed unit cannot be appended to (\`${rule.command}\` refused); next: \`${next(state)}\``,
      opts,
    );
  }
  const earliest = Math.min(...rule.from.map(stateIndex));
  const message =
    earliest > stateIndex(state)
      ? `unit ${unitId} is '${state}'; run \`${next(state)}\` first (\`${rule.command}\` comes later)`
      : `unit ${unitId} is '${state}'; \`${rule.command}\` is past for it; next: \`${next(state)}\``;
  return new ImepError('E_OUT_OF_ORDER', message, opts);
}

/** Throws the refusal for `action` in `state`, if any. */
export function assertAllowed(unitId: string, state: UnitState, action: UnitAction, file?: string): void {
  const err = refusal(unitId, state, action, file);
  if (err !== null) throw err;
}
