/**
 * The closed set of conditions and one factory that turns any of them into a read hook plus bookkeeping,
 * so a caller installs every condition the same way:
 *
 *   const h = interventionHook(spec, ctx);
 *   bank.setReadHook(h.hook);
 *   … attempt 1 …
 *   h.atPoint(bank);            // the registered point, e.g. start of attempt 2 before its first query
 *   … attempt 2 …
 *   row.intervention = h.bookkeeping();
 *
 * Where installation fails closed (a short donor), every later read throws E_DONOR_SHORT, so a unit
 * cannot silently run as an unsubstituted retry.
 */
import type { BankRecord, ReadHook } from '../banks/index.js';
import { ImepError } from '../core/index.js';
import type { PrngSpec, Seed } from '../core/index.js';
import type { InstallTarget } from './install-target.js';
import { installPayloads, type InstallationRecord } from './install.js';
import { blockHook, clearAtPoint, type ClearRecord } from './no-access.js';
import { DEFAULT_ULP_DIRECTION, oneUlpOperator } from './one-ulp.js';
import { oracleHook, type OracleSource } from './oracle.js';
import type { LeafOperator } from './leaf-operator.js';
import { permuteOperator } from './permute.js';
import { readHook, type ReadHookStats } from './read-hook.js';
import { readSwapHook, type PrePointItems, type ReadSwapCounters } from './read-swap.js';
import { referenceHook } from './reference.js';
import { replicateHook } from './replicate.js';
import { resampleOperator } from './resample.js';
import type { UlpDirection } from './ulp.js';

export type ConditionSpec =
  | { readonly kind: 'A' }
  | { readonly kind: 'N'; readonly variant: 'block' | 'clear' }
  | { readonly kind: 'O' }
  | { readonly kind: 'C' }
  | { readonly kind: 'U'; readonly direction: UlpDirection; readonly installation: 'read' | 'install' }
  | { readonly kind: 'S_pi'; readonly version?: ScrambleVersion }
  | { readonly kind: 'T_mu'; readonly version?: ScrambleVersion }
  | { readonly kind: 'S'; readonly seed: Seed; readonly installation?: 'read' }
  | { readonly kind: 'T'; readonly seed: Seed; readonly installation?: 'read' };

/**
 * Algorithm version of S_π / T_μ: 1 (absent = 1), the one implementation (permute.ts, resample.ts), whose outputs
 * sealed units replay. The four-lane SIMD versions 2 and 3 were retired: no supported protocol named them.
 */
export type ScrambleVersion = 1;
export const SCRAMBLE_VERSIONS: Readonly<Record<'S_pi' | 'T_mu', readonly ScrambleVersion[]>> = {
  S_pi: [1],
  T_mu: [1],
};

/** The S_π / T_μ operator of a version. */
export function scrambleOperator(kind: 'S_pi' | 'T_mu', version: ScrambleVersion = 1): LeafOperator {
  if (version === 1) return kind === 'S_pi' ? permuteOperator : resampleOperator;
  return invalid(
    `condition ${kind}: unknown version ${String(version)} (known: ${SCRAMBLE_VERSIONS[kind].join(', ')})`,
    'version',
  );
}

export type ConditionKind = ConditionSpec['kind'];
export type ConditionLabel = 'A' | 'N_block' | 'N_clear' | 'O' | 'C' | 'U' | 'S_pi' | 'T_mu' | 'S' | 'T';

export function conditionLabel(spec: ConditionSpec): ConditionLabel {
  if (spec.kind === 'N') return spec.variant === 'block' ? 'N_block' : 'N_clear';
  return spec.kind;
}

/** The default U spec: away from zero, through the installation routine. */
export const U_DEFAULT: ConditionSpec = { kind: 'U', direction: DEFAULT_ULP_DIRECTION, installation: 'install' };

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
  readonly condition: ConditionLabel;
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
  readonly label: ConditionLabel;
  readonly hook: ReadHook;
  /** Runs the condition's action at the registered point (install / clear / nothing). Call once. */
  atPoint(target: InstallTarget): PointOutcome;
  bookkeeping(): InterventionBookkeeping;
}

function invalid(message: string, field: string): never {
  throw new ImepError('E_INTERVENTION_INVALID', message, { field });
}

export function interventionHook(spec: ConditionSpec, ctx: InterventionContext): InterventionHandle {
  const label = conditionLabel(spec);
  let inner: ReadHook = referenceHook;
  let perRead: ReturnType<typeof readHook> | null = null;
  let action: (target: InstallTarget) => PointOutcome = () => ({ kind: 'none' });
  let seed: Seed | null = null;
  let donor: string | null = null;
  let swapCounters: ReadSwapCounters | null = null;

  switch (spec.kind) {
    case 'A':
      break;
    case 'C':
      inner = replicateHook;
      break;
    case 'N':
      if (spec.variant === 'block') inner = blockHook;
      else action = (t) => ({ kind: 'cleared', record: clearAtPoint(t, ctx.scope, ctx.point) });
      break;
    case 'O': {
      const oracle = ctx.oracle ?? invalid('condition O needs an oracle source', 'oracle');
      inner = oracleHook(oracle);
      break;
    }
    case 'U':
      if (spec.installation === 'read') {
        perRead = readHook(oneUlpOperator(spec.direction));
      } else {
        const operator = oneUlpOperator(spec.direction);
        action = (t) => {
          const r = installPayloads(t, ctx.scope, ctx.point, { kind: 'leaf', operator });
          return r.kind === 'installed' ? r : invalid('one-ULP installation cannot fail short', 'installation');
        };
      }
      break;
    case 'S_pi':
    case 'T_mu': {
      seed = ctx.seed ?? invalid(`condition ${spec.kind} needs a registered seed`, 'seed');
      perRead = readHook(scrambleOperator(spec.kind, spec.version), { seed });
      break;
    }
    case 'S':
    case 'T': {
      if (spec.installation === 'read') {
        const d = ctx.donorReads ?? invalid(`condition ${spec.kind} at read needs an assigned donor's reads`, 'donor');
        if (d.scope === ctx.scope) invalid(`scope ${ctx.scope} cannot be its own donor`, 'donor');
        seed = spec.seed;
        donor = d.scope;
        swapCounters = { reads: 0, substitutedReads: 0 };
        inner = readSwapHook({ recipient: ctx.scope, donor: d.scope, donorOf: d.itemsOf, counters: swapCounters });
        break;
      }
      const d = ctx.donor ?? invalid(`condition ${spec.kind} needs an assigned donor`, 'donor');
      if (d.scope === ctx.scope) invalid(`scope ${ctx.scope} cannot be its own donor`, 'donor');
      seed = spec.seed;
      donor = d.scope;
      const condition = spec.kind;
      action = (t) => {
        const r = installPayloads(t, ctx.scope, ctx.point, {
          kind: 'donor',
          condition,
          donorScope: d.scope,
          donorRecords: d.records,
        });
        return r.kind === 'installed'
          ? r
          : {
              kind: 'donor-short',
              scope: r.scope,
              donor: r.donor,
              recipientCount: r.recipientCount,
              donorCount: r.donorCount,
            };
      };
      break;
    }
  }
  if (perRead) inner = perRead.hook;

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
    if (label === 'O') hookSubstituted++;
    return inner(items, rctx);
  };

  return {
    spec,
    label,
    hook,
    atPoint(target) {
      if (outcome !== null)
        invalid(`condition ${label}: the registered point was already run for scope ${ctx.scope}`, 'point');
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
        seed,
        prng: perRead?.prng ?? null,
        donor,
        reads,
        emptyReads,
        substitutedReads: rs ? rs.substitutedReads : swapCounters ? swapCounters.substitutedReads : hookSubstituted,
        nonFinite: rs ? rs.nonFinite : outcome?.kind === 'installed' ? outcome.record.nonFinite : 0,
        pointOutcome: outcome,
      };
    },
  };
}
