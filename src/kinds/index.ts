/**
 * src/kinds — the built-in kinds, registered in one place (DESIGN.md "Kinds are registered"): the CLI entry, the
 * vitest setup file and the bench / scripts entry points call `registerBuiltinKinds()` before they parse a protocol.
 * A kind of a user's own is registered the same way, with registerSimulatorKind (src/runtime) and its siblings.
 */
import { registerBuiltinSimulatorKinds } from './simulators.js';

export { registerBuiltinSimulatorKinds } from './simulators.js';

/** Registers every built-in kind not registered yet; calling it again changes nothing. */
export function registerBuiltinKinds(): void {
  registerBuiltinSimulatorKinds();
}
