/**
 * The built-in condition kinds (A, N, O, C, U, S, T, S_pi, T_mu: src/interventions/kinds/), registered once into
 * `conditionKinds` and, through it, core's `conditionFaces` (what src/protocol parses conditions through).
 */
import { BUILTIN_CONDITION_KINDS, conditionKinds, registerConditionKind } from '../interventions/index.js';

/** Registers every built-in condition kind not registered yet (idempotent). */
export function registerBuiltinConditionKinds(): void {
  for (const kind of BUILTIN_CONDITION_KINDS) if (!conditionKinds.has(kind.name)) registerConditionKind(kind);
}
