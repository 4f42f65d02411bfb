/**
 * A condition kind (A, N, O, C, U, S, T, S_π, T_μ, or one a user registers): its protocol-facing half
 * (core's ConditionFace: schema fields, roles, where it acts) plus what the runner needs — the ConditionSpec it
 * records for a parsed condition, how the plan carries it out, and its operator (what a read returns, what happens
 * at the registered point). Registered once with `registerConditionKind`, which fills core's `conditionFaces` too,
 * so the protocol parses and checks it and the runner installs it without switching on its name.
 *
 * Built-ins: ./kinds/ (one file per operator family), registered by src/kinds/conditions.ts.
 */
import type { ReadHook } from '../banks/index.js';
import { KindRegistry, conditionFaces, type ConditionFace, type ConditionView, type Seed } from '../core/index.js';
import type { DonorMode } from './donor-assignment.js';
import type { InstallTarget } from './install-target.js';
import type { InterventionContext, PointOutcome } from './condition.js';
import type { OperatorReadHook } from './read-hook.js';
import type { SubstitutionMode } from './trace.js';

/**
 * What a row records as the condition's intervention spec: `kind` plus the kind's registered parameters. A kind
 * keeps it stable (rows and unit digests bind it): add a parameter only when it is set.
 */
export type ConditionSpec = { readonly kind: string } & Readonly<Record<string, unknown>>;

/** How the runner carries a condition out (src/campaign/condition-plan.ts). */
export interface ConditionMode {
  /** How the substitution trace classifies selected records. */
  readonly mode: SubstitutionMode;
  /** Donor swaps: donors are assigned by fact from the registered seed, and where the donor's payload enters. */
  readonly donor?: { readonly mode: DonorMode; readonly installation: 'install' | 'read' } | undefined;
}

/** What a kind's operator gives the one factory (interventionHook, condition.ts) for one unit. */
export interface ConditionOperator {
  /** What a read returns (absent: the bank's selection, unchanged). */
  readonly hook?: ReadHook;
  /** A leaf operator run at every read (readHook): its stats fill the bookkeeping. Takes precedence over `hook`. */
  readonly perRead?: OperatorReadHook;
  /** The action at the registered point (absent: nothing). */
  atPoint?(target: InstallTarget): PointOutcome;
  /** The seed that drove random draws or the donor choice (recorded). */
  readonly seed?: Seed | null;
  /** The assigned donor scope (recorded). */
  readonly donor?: string | null;
  /** Reads whose content the operator replaced, when it counts them itself (read-time donor swaps). */
  substitutedReads?(): number;
  /** Every read's content is the operator's (the oracle): each read counts as substituted. */
  readonly substitutesEveryRead?: boolean;
}

export interface ConditionKind extends ConditionFace {
  /** The spec recorded with every row of a condition parsed by this kind's fields. */
  spec(condition: ConditionView): ConditionSpec;
  /** How the runner carries it out. */
  mode(condition: ConditionView): ConditionMode;
  /** The row's condition label (absent: the kind's name), e.g. N_block / N_clear. */
  label?(spec: ConditionSpec): string;
  /** The operator for one unit; refuses (E_INTERVENTION_INVALID) a context that lacks what it needs. */
  operator(spec: ConditionSpec, ctx: InterventionContext): ConditionOperator;
}

/** The registered condition kinds; every entry is also in core's `conditionFaces`. */
export const conditionKinds = new KindRegistry<ConditionKind>('condition kind', 'conditions[].kind', conditionFaces);

/** Registers a condition kind (and its face); returns the function that removes it again. */
export function registerConditionKind(kind: ConditionKind): () => void {
  return conditionKinds.register(kind);
}
