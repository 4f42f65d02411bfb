/**
 * The built-in policy runtime kinds: `checkpoint` (in-process ONNX / TF.js), `remote` (the Python policy host), and the
 * policy servers IMEP speaks to unmodified — `openpi-websocket` (openpi's WebsocketPolicyServer) and `vla-eval`
 * (vla-eval 0.8.0 model servers), one factory over each wire protocol's connector.
 */
import { checkpointRuntime, registerPolicyRuntimeKind, remoteRuntime, serverRuntimeKind } from '../campaign/index.js';
import { connectOpenpi, connectVlaEval } from '../policies/index.js';

export function registerBuiltinPolicyRuntimeKinds(): void {
  registerPolicyRuntimeKind(checkpointRuntime);
  registerPolicyRuntimeKind(remoteRuntime);
  registerPolicyRuntimeKind(serverRuntimeKind('openpi-websocket', connectOpenpi));
  registerPolicyRuntimeKind(serverRuntimeKind('vla-eval', connectVlaEval));
}
