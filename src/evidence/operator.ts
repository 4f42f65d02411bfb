import { hostname, userInfo } from 'node:os';
import { ImepError } from '../core/errors.js';
import type { Operator } from './unit-layout.js';

export type { Operator } from './unit-layout.js';

/**
 * Who is acting on a unit. `IMEP_OPERATOR` (e.g. a session id) wins; otherwise `<user>@<host>`.
 * Recorded in the precommit, the run record (start and every resume) and each adjudication.
 *
 * The paper requires adjudication to be triggered by a session other than the one that ran the
 * conditions. `checkAdjudicator` refuses an adjudicator whose id ran any part of the formal run,
 * unless an override with a reason is given; the override is returned for the record.
 */

export function currentOperator(env: NodeJS.ProcessEnv = process.env): Operator {
  const fromEnv = env['IMEP_OPERATOR']?.trim();
  if (fromEnv) return { id: fromEnv, source: 'env' };
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (some containers): keep 'unknown'
  }
  return { id: `${user}@${hostname()}`, source: 'os' };
}

export function explicitOperator(id: string): Operator {
  if (id.trim() === '') throw new ImepError('E_USAGE', 'operator id must not be empty', { field: 'operator' });
  return { id: id.trim(), source: 'explicit' };
}

export interface SameOperatorOverride {
  readonly reason: string;
}

export interface OverrideRecord {
  readonly by: string;
  readonly reason: string;
  readonly ranBy: string[];
}

/**
 * Returns null when the adjudicator did not run the conditions; the override record when it did
 * and an override (with a non-empty reason) was given; otherwise throws.
 */
export function checkAdjudicator(
  unitId: string,
  adjudicator: Operator,
  ranBy: readonly string[],
  override: SameOperatorOverride | undefined,
  action = 'adjudicate',
): OverrideRecord | null {
  if (!ranBy.includes(adjudicator.id)) return null;
  if (override === undefined || override.reason.trim() === '') {
    throw new ImepError(
      'E_SAME_OPERATOR',
      `operator '${adjudicator.id}' ran the conditions of unit ${unitId}; ${action} must come from another session`,
      {
        field: 'operator',
        hint: 'set IMEP_OPERATOR to the reviewing session, or pass --allow-same-operator "<reason>" (the override is recorded)',
      },
    );
  }
  return { by: adjudicator.id, reason: override.reason.trim(), ranBy: [...ranBy] };
}
