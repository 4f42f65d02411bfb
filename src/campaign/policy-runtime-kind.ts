/**
 * Policy runtime kinds: what turns a protocol's policy into the runner's PolicyProvider. Each kind is one registered
 * entry — its `policy:` fields (the protocol parses the block through core's policyRuntimeFaces), a preflight (what
 * it checks before anything is written, from files only), `memoryAccess` (whether its bank can be installed into,
 * for the condition checks), `open` and `describe` — registered once with `registerPolicyRuntimeKind`, which also
 * fills the protocol-facing registry. Built in: `checkpoint` (checkpoint-runtime.ts) and `remote`
 * (remote-runtime.ts); src/kinds registers them. A protocol with a `checkpoint:` block and no `policy:` block names
 * the `checkpoint` runtime (`policyRuntimeOf`). docs/extending.md walks through adding one.
 */
import { KindRegistry, policyRuntimeFaces, type PolicyRuntimeFace } from '../core/index.js';
import type { Protocol } from '../protocol/index.js';
import type { DeclaredConventions } from '../runtime/index.js';
import type { PolicyProvider, SpecSource } from './types.js';

/** Where a runtime finds what the protocol names, and how it is run. */
export interface PolicyRuntimeContext {
  /** The protocol file (named in errors). */
  readonly file: string;
  /** Where the protocol's relative folders (e.g. policy.pythonPath) resolve, in order. */
  readonly roots: readonly string[];
  /** Where `checkpoint.path` resolves. */
  readonly checkpointRoot: string;
  /** The run's campaigns folder: no folder a started host's sandbox binds may expose it. */
  readonly campaignsDir?: string;
  /** Episodes stepped together (a runtime that starts a host sizes it by this). */
  readonly batchSize: number;
}

/** Whether a runtime's bank can be installed into (point-acting conditions need it), and how errors name it. */
export interface MemoryAccess {
  readonly installable: boolean;
  readonly name: string;
}

export interface PolicyRuntimeKind extends PolicyRuntimeFace {
  /**
   * Checks before anything is written, from files only (no process started): refuses by throwing an ImepError naming
   * the field; returns lines the user should read.
   */
  preflight(protocol: Protocol, ctx: PolicyRuntimeContext): Promise<readonly string[]> | readonly string[];
  /**
   * Checks the policy's I/O against each environment's spec that `specs` knows (the simulator kind's known specs, or
   * those its opened servers declared), before anything is written: refuses by throwing an ImepError naming the
   * tensor. Optional: a runtime whose I/O is not declared in files (a hosted policy) has none.
   */
  checkEnvironments?(protocol: Protocol, ctx: PolicyRuntimeContext, specs: SpecSource): Promise<void> | void;
  /**
   * The action/observation conventions the policy declares in its files (a checkpoint's model.json `conventions`),
   * named by source; null where it declares none. Optional: a started runtime declares its own on its PolicyProvider
   * (`conventions`) instead. The convention check (convention-check.ts) compares them with each environment's.
   */
  declaredConventions?(
    protocol: Protocol,
    ctx: PolicyRuntimeContext,
  ): Promise<DeclaredConventions | null> | DeclaredConventions | null;
  /** What its bank allows, known from files; null where only a started runtime can say. */
  memoryAccess(protocol: Protocol, ctx: PolicyRuntimeContext): Promise<MemoryAccess | null> | MemoryAccess | null;
  /** The runner's policy provider (a started host, a loaded checkpoint); released by the caller. */
  open(protocol: Protocol, ctx: PolicyRuntimeContext): Promise<PolicyProvider>;
  /** One line naming what the protocol's policy is, before it is opened. */
  describe(protocol: Protocol): string;
}

export const policyRuntimeKinds = new KindRegistry<PolicyRuntimeKind>(
  'policy runtime',
  'policy.runtime',
  policyRuntimeFaces,
);

/** Registers a policy runtime kind (and its protocol-facing half); returns the function that removes it. */
export function registerPolicyRuntimeKind(kind: PolicyRuntimeKind): () => void {
  return policyRuntimeKinds.register(kind);
}

/** The name of the runtime a protocol's policy uses: `policy.runtime`, or `checkpoint` for a `checkpoint:` block. */
export function policyRuntimeOf(protocol: Pick<Protocol, 'policy'>): string {
  return protocol.policy?.runtime ?? 'checkpoint';
}

/** The registered kind of a protocol's policy (E_PROTOCOL_INVALID at policy.runtime when none is registered). */
export function policyRuntimeKindOf(protocol: Protocol, file?: string): PolicyRuntimeKind {
  return policyRuntimeKinds.require(policyRuntimeOf(protocol), {
    ...(file === undefined ? {} : { file }),
    field: protocol.policy === undefined ? 'checkpoint' : 'policy.runtime',
  });
}
