/**
 * The shared installation routine for U, S and T (and S_π/T_μ when run at installation): at a registered
 * point — e.g. the start of attempt 2, before its first query — it reads the scope's records, transforms
 * their payloads, writes them back with `replaceRecords` (identities and keys byte-identical) and returns
 * an installation record. C never calls it. A donor swap that would need padding fails closed and writes
 * nothing.
 */
import { PAYLOAD_FIELDS, type BankRecord, type Payload, type PayloadField } from '../banks/index.js';
import { ImepError, Prng, type PrngSpec, type Seed, cloneTensor, type FloatTensor } from '../core/index.js';
import { payloadDigest } from './digest.js';
import type { DonorAssignment } from './donor-assignment.js';
import { orderForInstallation, swapPayloads } from './donor-swap.js';
import type { InstallTarget } from './install-target.js';
import {
  applyToPayload,
  emptyLeafStats,
  type LeafOperator,
  type LeafOperatorCondition,
  type RegisteredParams,
} from './leaf-operator.js';

export type InstallTransform =
  | { readonly kind: 'leaf'; readonly operator: LeafOperator; readonly seed?: Seed }
  | {
      readonly kind: 'donor';
      readonly condition: 'S' | 'T';
      readonly donorScope: string;
      /** The donor's records as they were before any installation (see snapshotRecords). */
      readonly donorRecords: readonly BankRecord[];
    };

export interface InstalledRecordDigest {
  readonly slot: number;
  readonly timestep: number;
  readonly version: number;
  readonly before: string;
  readonly after: string;
  /** The donor record's slot (donor swaps only). */
  readonly donorSlot: number | null;
}

export interface InstallationRecord {
  readonly scope: string;
  readonly point: string;
  /** The scope's query clock at installation. */
  readonly clock: number;
  readonly condition: LeafOperatorCondition | 'S' | 'T';
  readonly params: RegisteredParams;
  readonly donor: string | null;
  readonly prng: PrngSpec | null;
  /** One entry per installed record, in (timestep, slot) order. */
  readonly records: readonly InstalledRecordDigest[];
  /** Payload elements left unchanged because they are ±Inf or NaN (leaf operators). */
  readonly nonFinite: number;
}

export type InstallResult =
  | { readonly kind: 'installed'; readonly record: InstallationRecord }
  | {
      readonly kind: 'donor-short';
      readonly scope: string;
      readonly point: string;
      readonly donor: string;
      readonly recipientCount: number;
      readonly donorCount: number;
    };

function clonePayload(p: Payload): Payload {
  const out = {} as Record<PayloadField, FloatTensor>;
  for (const f of PAYLOAD_FIELDS) out[f] = cloneTensor(p[f]);
  return out;
}

/** Copies of the scopes' records (payload buffers copied) taken before any installation. */
export function snapshotRecords(
  target: Pick<InstallTarget, 'records'>,
  scopes: Iterable<string>,
): Map<string, readonly BankRecord[]> {
  const out = new Map<string, readonly BankRecord[]>();
  for (const s of scopes)
    if (!out.has(s))
      out.set(
        s,
        target.records(s).map((r) => ({ ...r, payload: clonePayload(r.payload) })),
      );
  return out;
}

export function installPayloads(
  target: Pick<InstallTarget, 'records' | 'replaceRecords' | 'clock'>,
  scope: string,
  point: string,
  transform: InstallTransform,
): InstallResult {
  const current = target.records(scope);
  const clock = target.clock(scope);
  const ordered = orderForInstallation(current);
  let replaced: readonly BankRecord[];
  let donorSlots: Map<number, number> | null = null;
  let condition: InstallationRecord['condition'];
  let params: RegisteredParams;
  let prngSpec: PrngSpec | null = null;
  let nonFinite = 0;
  let donor: string | null = null;

  if (transform.kind === 'donor') {
    if (transform.donorScope === scope) {
      throw new ImepError('E_INTERVENTION_INVALID', `install: scope ${scope} cannot be its own donor`, {
        field: 'donorScope',
      });
    }
    const swap = swapPayloads(current, transform.donorRecords);
    if (swap.kind === 'donor-short') {
      return {
        kind: 'donor-short',
        scope,
        point,
        donor: transform.donorScope,
        recipientCount: swap.recipientCount,
        donorCount: swap.donorCount,
      };
    }
    replaced = swap.records;
    donorSlots = new Map(swap.pairs.map((p) => [p.recipientSlot, p.donorSlot]));
    condition = transform.condition;
    donor = transform.donorScope;
    params = { donor: transform.donorScope };
  } else {
    const op = transform.operator;
    if (op.usesPrng && transform.seed === undefined) {
      throw new ImepError(
        'E_INTERVENTION_INVALID',
        `install: condition ${op.condition} draws random numbers and needs a registered seed`,
        { field: 'seed' },
      );
    }
    const prng = new Prng(transform.seed ?? 0).fork(`install/${scope}`);
    if (op.usesPrng) prngSpec = prng.spec;
    const stats = emptyLeafStats();
    const bySource = new Map<BankRecord, BankRecord>();
    for (const r of ordered) bySource.set(r, { ...r, payload: applyToPayload(r.payload, op, prng, stats) });
    replaced = current.map((r) => bySource.get(r) as BankRecord);
    condition = op.condition;
    params = op.params;
    nonFinite = stats.nonFinite;
  }

  const afterBySlot = new Map(replaced.map((r) => [r.slot, r]));
  const records: InstalledRecordDigest[] = ordered.map((r) => ({
    slot: r.slot,
    timestep: r.timestep,
    version: r.version,
    before: payloadDigest(r.payload),
    after: payloadDigest((afterBySlot.get(r.slot) as BankRecord).payload),
    donorSlot: donorSlots?.get(r.slot) ?? null,
  }));
  target.replaceRecords(scope, replaced);
  return {
    kind: 'installed',
    record: { scope, point, clock, condition, params, donor, prng: prngSpec, records, nonFinite },
  };
}

/**
 * Installs S or T into every recipient of a donor assignment. All donor payloads are snapshotted first,
 * so a scope that is both a recipient and a donor gives its reference payload, not an installed one.
 */
export function installDonorSwaps(
  target: Pick<InstallTarget, 'records' | 'replaceRecords' | 'clock'>,
  assignment: DonorAssignment,
  point: string,
  condition: 'S' | 'T',
): Map<string, InstallResult> {
  const snapshot = snapshotRecords(target, assignment.donors.values());
  const out = new Map<string, InstallResult>();
  for (const [recipient, donorScope] of assignment.donors) {
    const donorRecords = snapshot.get(donorScope) ?? [];
    out.set(
      recipient,
      installPayloads(target, recipient, point, { kind: 'donor', condition, donorScope, donorRecords }),
    );
  }
  return out;
}

/** The per-read variant of the same operators lives in read-hook.ts. */
export { readHook } from './read-hook.js';
