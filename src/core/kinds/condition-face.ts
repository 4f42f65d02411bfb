/**
 * The protocol-facing half of a condition kind (A, N, O, C, U, S, T, S_π, T_μ, …): what the protocol, the plan and
 * the adjudication need to know about a condition without switching on its name. The full kind (its intervention
 * operator, src/interventions) extends it and is registered once; the registration lands here too.
 */
import type { z } from 'zod';
import type { Kind } from './registry.js';
import type { ConditionView, ProtocolIssueSink, ProtocolView } from './protocol-view.js';

/**
 * What a condition is for the analysis: `substituting` replaces what a read returns or what the bank holds (the
 * survival gate's domain); `sham` / `target` are the same-fact / different-fact substitutions θ pairs;
 * `read-canary` returns content a policy acting on what it reads cannot act on as on the true content.
 */
export type ConditionRole = 'substituting' | 'sham' | 'target' | 'read-canary';

export interface ConditionFace extends Kind {
  /** The fields of its `conditions[]` entry besides the common ones (id, description, n, envKwargs, levels) and `kind`. */
  readonly fields: z.ZodRawShape;
  readonly roles: readonly ConditionRole[];
  /** Where it acts: at a registered point (then `installAt` is required), on every read, or not at all. */
  acts(condition: ConditionView): 'point' | 'read' | 'none';
  /** Checks of this condition against the rest of the protocol; optional. */
  checkProtocol?(condition: ConditionView, index: number, protocol: ProtocolView, issues: ProtocolIssueSink): void;
}
