/**
 * The `checkpoint` policy runtime: a checkpoint folder bound by the protocol's top-level `checkpoint:` block (path,
 * file, SHA-256), run in process by the external-memory runtime (checkpoint-policy.ts: ONNX Runtime or TF.js as the
 * checkpoint's manifest says, one bank per batch slot outside the graphs). It has no `policy:` fields: a protocol
 * names it by giving a `checkpoint:` block and no `policy:` block. Its modules load ONNX Runtime and TF.js, so they are
 * imported when a method runs, not with the registry.
 */
import { resolve } from 'node:path';
import type { Protocol } from '../protocol/index.js';
import type { PolicyRuntimeContext, PolicyRuntimeKind } from './policy-runtime-kind.js';

const folderOf = (protocol: Protocol, ctx: PolicyRuntimeContext): string | null =>
  protocol.checkpoint === undefined ? null : resolve(ctx.checkpointRoot, protocol.checkpoint.path);

export const checkpointRuntime: PolicyRuntimeKind = {
  name: 'checkpoint',
  summary:
    'a checkpoint folder (model.json + graphs) run in process by ONNX Runtime or TF.js, its bank outside the graphs',
  fields: {},
  checkProtocol(protocol, issues) {
    if (protocol.policy !== undefined)
      issues.push(
        ['policy', 'runtime'],
        'the checkpoint runtime is named by a checkpoint: block, not by policy.runtime',
        'remove policy and bind the checkpoint with checkpoint: { path, file, sha256 }',
      );
  },
  async preflight(protocol, ctx) {
    const dir = folderOf(protocol, ctx);
    if (dir === null) return [];
    const { assertCheckpointServes, verifyCheckpointFiles } = await import('./checkpoint-policy.js');
    verifyCheckpointFiles(dir);
    assertCheckpointServes(protocol, dir);
    return [];
  },
  async checkEnvironments(protocol, ctx, specs) {
    const dir = folderOf(protocol, ctx);
    if (dir !== null) (await import('./checkpoint-policy.js')).assertCheckpointFitsEnvironments(protocol, dir, specs);
  },
  async declaredConventions(protocol, ctx) {
    const dir = folderOf(protocol, ctx);
    if (dir === null) return null;
    const { manifest } = (await import('../policies/checkpoint.js')).readManifest(dir);
    const file = protocol.checkpoint?.file ?? 'model.json';
    return manifest.conventions === undefined
      ? null
      : {
          source: `checkpoint ${protocol.checkpoint?.path ?? dir}/${file} conventions`,
          conventions: manifest.conventions,
        };
  },
  async memoryAccess(protocol, ctx) {
    const dir = folderOf(protocol, ctx);
    if (dir === null) return null;
    const { manifest } = (await import('../policies/checkpoint.js')).readManifest(dir);
    return manifest.bank.kind === 'structured-pcmb'
      ? { installable: true, name: `checkpoint ${manifest.name}: a structured bank` }
      : { installable: false, name: `checkpoint ${manifest.name}: an episode bank` };
  },
  async open(protocol, ctx) {
    const { assertCheckpointServes, checkpointPolicyProvider } = await import('./checkpoint-policy.js');
    const dir = folderOf(protocol, ctx) ?? ctx.checkpointRoot;
    assertCheckpointServes(protocol, dir);
    return checkpointPolicyProvider(dir, { memory: protocol.memory });
  },
  describe(protocol) {
    const c = protocol.checkpoint;
    return c === undefined ? 'checkpoint (none bound)' : `checkpoint ${c.path}/${c.file} (sha256 ${c.sha256})`;
  },
};
