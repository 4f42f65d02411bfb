/**
 * src/kinds — the built-in kinds, registered in one place: simulator kinds, policy runtime kinds and condition kinds
 * (each entry lives in the folder that owns it; this folder only lists them). Every entry point that parses a
 * protocol calls `registerBuiltinKinds()` first: the CLI (src/cli/main.ts, for the commands that read protocols), the
 * test setup (test/support/builtin-kinds.ts), bench/ and scripts/. A user's own kind is registered the same way, with
 * the register function of its family (docs/extending.md).
 */
import { registerBuiltinConditionKinds } from './conditions.js';
import { registerBuiltinPolicyRuntimeKinds } from './policy-runtimes.js';
import { registerBuiltinSimulatorKinds } from './simulators.js';

export { registerBuiltinSimulatorKinds } from './simulators.js';
export { registerBuiltinPolicyRuntimeKinds } from './policy-runtimes.js';
export { registerBuiltinConditionKinds } from './conditions.js';

let registered = false;

/** Registers every built-in kind once (later calls do nothing). */
export function registerBuiltinKinds(): void {
  if (registered) return;
  registered = true;
  registerBuiltinSimulatorKinds();
  registerBuiltinPolicyRuntimeKinds();
  registerBuiltinConditionKinds();
}
