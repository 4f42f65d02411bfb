/**
 * src/kinds — the built-in kinds, registered in one place. The CLI entry, the vitest setup and the bench / script
 * entry points call `registerBuiltinKinds()` before any protocol is parsed (a protocol names its kinds by the
 * registered names).
 */
import { registerBuiltinConditionKinds } from './conditions.js';

export { registerBuiltinConditionKinds } from './conditions.js';

/** Registers every built-in kind; calling it again does nothing. */
export function registerBuiltinKinds(): void {
  registerBuiltinConditionKinds();
}
