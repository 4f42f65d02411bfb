/**
 * N — no access, in two variants named apart:
 * - N_block: every read returns an empty list; the bank, its records and its query clock are untouched.
 * - N_clear: at the registered point the scope is cleared with its query clock kept; reads afterwards
 *   return whatever the bank holds (nothing until the policy writes again).
 */
import type { ReadHook, RetrievedItem } from '../banks/index.js';
import type { InstallTarget } from './install-target.js';

const EMPTY: readonly RetrievedItem[] = Object.freeze([]);

export const blockHook: ReadHook = () => EMPTY;

export interface ClearRecord {
  readonly condition: 'N_clear';
  readonly scope: string;
  readonly point: string;
  readonly clearedCount: number;
  readonly clockBefore: number;
  readonly clockAfter: number;
}

/** Clears `scope` keeping its query clock; returns what was done. */
export function clearAtPoint(
  target: Pick<InstallTarget, 'records' | 'clearScope' | 'clock'>,
  scope: string,
  point: string,
): ClearRecord {
  const clockBefore = target.clock(scope);
  const clearedCount = target.records(scope).length;
  target.clearScope(scope, { keepClock: true });
  return { condition: 'N_clear', scope, point, clearedCount, clockBefore, clockAfter: target.clock(scope) };
}
