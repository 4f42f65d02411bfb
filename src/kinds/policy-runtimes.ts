/** The built-in policy runtime kinds: `checkpoint` (in-process ONNX / TF.js) and `remote` (the Python policy host). */
import { checkpointRuntime, registerPolicyRuntimeKind, remoteRuntime } from '../campaign/index.js';

export function registerBuiltinPolicyRuntimeKinds(): void {
  registerPolicyRuntimeKind(checkpointRuntime);
  registerPolicyRuntimeKind(remoteRuntime);
}
