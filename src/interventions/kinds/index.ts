/**
 * The built-in condition kinds, in the order they are registered (src/kinds/conditions.ts): the order the
 * protocol's JSON Schema lists them in and error lines name the kinds of a role in.
 */
import type { ConditionKind } from '../condition-kind.js';
import { differentFactKind, sameFactKind } from './donor-swap.js';
import { noAccessKind } from './no-access.js';
import { oneUlpKind } from './one-ulp.js';
import { oracleKind } from './oracle.js';
import { referenceKind } from './reference.js';
import { replicateKind } from './replicate.js';
import { permuteKind, resampleKind } from './scramble.js';

export const BUILTIN_CONDITION_KINDS: readonly ConditionKind[] = [
  referenceKind,
  noAccessKind,
  oracleKind,
  replicateKind,
  oneUlpKind,
  permuteKind,
  resampleKind,
  sameFactKind,
  differentFactKind,
];
