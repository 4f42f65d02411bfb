/**
 * One factory that turns any registered condition into a read hook plus bookkeeping, so a caller installs every
 * condition the same way:
 *
 *   const h = interventionHook(spec, ctx);
 *   bank.setReadHook(h.hook);
 *   … attempt 1 …
 *   h.atPoint(bank);            // the registered point, e.g. start of attempt 2 before its first query
 *   … attempt 2 …
 *   row.intervention = h.bookkeeping();
 *
 * What the condition does comes from its registered kind (condition-kind.ts, built-ins in ./kinds/); the
 * factory adds what every condition shares: read counts, the bookkeeping, and failing closed where installation
 * fell short (a short donor): every later read throws E_DONOR_SHORT, so a unit cannot silently run as an
 * unsubstituted retry.
 */
import type { BankRecord, ReadHook } from '../banks/index.js';
import { ImepError } from '../core/index.js';
import type { PrngSpec, Seed } from '../core/index.js';
import { conditionKinds, type ConditionSpec } from './condition-kind.js';
import type { InstallTarget } from './install-target.js';
import type { InstallationRecord } from './install.js';
import type { ClearRecord } from './no-access.js';
import type { OracleSource } from './oracle.js';
import type { ReadHookStats } from './read-hook.js';
import type { PrePointItems } from './read-swap.js';
import { referenceHook } from './reference.js';

export type { ConditionSpec } from './condition-kind.js';

/** The row's condition label of a spec: the kind's own (N_block / N_clear), else the kind's name. */
export function conditionLabel(spec: ConditionSpec): string {
  const kind = conditionKinds.require(spec.kind, { field: 'spec.kind' });
  return kind.label?.(spec) ?? spec.kind;
}

export interface InterventionContext {
  /** The unit's scope: the recipient of S/T, the scope U installs into and N_clear clears. */
  readonly scope: string;
  /** The registered point's label (e.g. "attempt-2-start"). */
  readonly point: string;
  /** Seed of the per-read draws of S_π / T_μ (required for them; recorded). */
  readonly seed?: Seed;
  /** Required for O. */
  readonly oracle?: OracleSource;
  /** Required for S/T installed at the point: the assigned donor and its records snapshotted before any installation. */
  readonly donor?: { readonly scope: string; readonly records: readonly BankRecord[] };
  /** Required for S/T at read time: the assigned donor and, per recipient episode, its paired episode's pre-point items. */
  readonly donorReads?: { readonly scope: string; readonly itemsOf: (episode: string) => PrePointItems | undefined };
}

export type PointOutcome =
  | { readonly kind: 'none' }
  | { readonly kind: 'installed'; readonly record: InstallationRecord }
  | { readonly kind: 'cleared'; readonly record: ClearRecord }
  | {
      readonly kind: 'donor-short';
      readonly scope: string;
      readonly donor: string;
      readonly recipientCount: number;
      readonly donorCount: number;
    };

export interface InterventionBookkeeping {
  readonly condition: string;
  readonly spec: ConditionSpec;
  readonly scope: string;
  readonly point: string;
  /** The seed that drove random draws or donor choice, when the condition has one. */
  readonly seed: Seed | null;
  readonly prng: PrngSpec | null;
  readonly donor: string | null;
  readonly reads: number;
  readonly emptyReads: number;
  /** Reads whose returned content the hook produced (S_π/T_μ/U at read, O). */
  readonly substitutedReads: number;
  readonly nonFinite: number;
  readonly pointOutcome: PointOutcome | null;
}

export interface InterventionHandle {
  readonly spec: ConditionSpec;
  readonly label: string;
  readonly hook: ReadHook;
  /** Runs the condition's action at the registered point (install / clear / nothing). Call once. */
  atPoint(target: InstallTarget): PointOutcome;
  bookkeeping(): InterventionBookkeeping;
}

export function interventionHook(spec: ConditionSpec, ctx: InterventionContext): InterventionHandle {
  const label = conditionLabel(spec);
  const op = conditionKinds.require(spec.kind, { field: 'spec.kind' }).operator(spec, ctx);
  const perRead = op.perRead ?? null;
  const inner: ReadHook = perRead?.hook ?? op.hook ?? referenceHook;
  const action = (target: InstallTarget): PointOutcome => op.atPoint?.(target) ?? { kind: 'none' };

  let outcome: PointOutcome | null = null;
  let reads = 0,
    emptyReads = 0,
    hookSubstituted = 0;
  const hook: ReadHook = (items, rctx) => {
    if (outcome?.kind === 'donor-short') {
      throw new ImepError(
        'E_DONOR_SHORT',
        `scope ${ctx.scope}: donor ${outcome.donor} holds ${outcome.donorCount} records for ${outcome.recipientCount}; the ${label} swap failed closed`,
        {
          field: 'donor',
          hint: 'exclude this unit from the condition; it must not run unsubstituted',
        },
      );
    }
    reads++;
    if (items.length === 0) emptyReads++;
    if (op.substitutesEveryRead === true) hookSubstituted++;
    return inner(items, rctx);
  };

  return {
    spec,
    label,
    hook,
    atPoint(target) {
      if (outcome !== null)
        throw new ImepError(
          'E_INTERVENTION_INVALID',
          `condition ${label}: the registered point was already run for scope ${ctx.scope}`,
          { field: 'point' },
        );
      outcome = action(target);
      return outcome;
    },
    bookkeeping() {
      const rs: ReadHookStats | null = perRead ? perRead.stats() : null;
      return {
        condition: label,
        spec,
        scope: ctx.scope,
        point: ctx.point,
        seed: op.seed ?? null,
        prng: perRead?.prng ?? null,
        donor: op.donor ?? null,
        reads,
        emptyReads,
        substitutedReads: rs ? rs.substitutedReads : op.substitutedReads ? op.substitutedReads() : hookSubstituted,
        nonFinite: rs ? rs.nonFinite : outcome?.kind === 'installed' ? outcome.record.nonFinite : 0,
        pointOutcome: outcome,
      };
    },
  };
}
