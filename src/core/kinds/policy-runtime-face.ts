/**
 * The protocol-facing half of a policy runtime kind: what the protocol needs to parse and check the policy a
 * protocol names (`policy: { runtime: NAME, … }`, or a `checkpoint:` block, which names the `checkpoint` runtime).
 * The full kind (preflight, open, describe) extends it and is registered once; the registration lands here too.
 */
import type { z } from 'zod';
import type { Kind } from './registry.js';
import type { ProtocolIssueSink, ProtocolView } from './protocol-view.js';

export interface PolicyRuntimeFace extends Kind {
  /** The fields of its `policy:` block besides `runtime` (the protocol builds the strict object from them). */
  readonly fields: z.ZodRawShape;
  /** Checks across the protocol (e.g. which memory banks this runtime can serve); optional. */
  checkProtocol?(protocol: ProtocolView, issues: ProtocolIssueSink): void;
}
