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
export type ConditionRole =
  | 'substituting'
  | 'sham'
  | 'target'
  | 'read-canary'
  /** the unablated reference θ and the contrasts are taken against (A) */
  | 'reference'
  /** the harness supplies the deciding fact or decision (O): needs an oracle source, its reads are all substituted */
  | 'oracle'
  /** an exact repeat of the reference (C): the exact-repeat floor of ρ */
  | 'replicate'
  /** reads return nothing or the bank is emptied, the clock kept (N): the empty-read and clock gates */
  | 'no-access'
  /** a change to what is read that no policy should act on (U, one ULP): the floor θ is compared with */
  | 'numeric-control';

export interface ConditionFace extends Kind {
  /** The fields of its `conditions[]` entry besides the common ones (id, description, n, envKwargs, levels) and `kind`. */
  readonly fields: z.ZodRawShape;
  readonly roles: readonly ConditionRole[];
  /** Where it acts: at a registered point (then `installAt` is required), on every read, or not at all. */
  acts(condition: ConditionView): 'point' | 'read' | 'none';
  /**
   * Whether its action at the point writes payloads into the bank (then the bank must be structured, keep records
   * across attempts, and the point come after attempt 1). Optional: absent = never.
   */
  installsPayloads?(condition: ConditionView): boolean;
  /** How the "needs an installation point" line names it, e.g. "N clear" (absent: its kind). */
  pointWords?(condition: ConditionView): string;
  /** The hint of that line (absent: "add installAt: { attempt: 2, before: first-query }"). */
  readonly pointHint?: string;
  /**
   * The substitution family a sham or target belongs to, in words (e.g. "donor swaps"): θ pairs a target with a sham
   * of the same family. Optional: kinds without the sham / target role have none.
   */
  readonly family?: string;
  /** Checks of this condition against the rest of the protocol; optional. */
  checkProtocol?(condition: ConditionView, index: number, protocol: ProtocolView, issues: ProtocolIssueSink): void;
}
