/**
 * S and T cross-scope donor swaps. Recipient records, ordered by (timestep, slot), each receive the
 * PAYLOAD of the donor record at the same position (donor records also ordered by (timestep, slot)).
 * Slot, scope, source episode, timestep, version, the cognitive/perceptual keys and the state signature
 * are kept byte-identical (the very same objects). A donor holding fewer records than the recipient fails
 * closed with a typed result — the recipient is never padded. Extra donor records are unused.
 * Donor payload tensors are copied, so recipient and donor never share buffers.
 */
import {
  compareByTimestepSlot,
  PAYLOAD_FIELDS,
  type BankRecord,
  type Payload,
  type PayloadField,
} from '../banks/index.js';
import { ImepError, cloneTensor, type FloatTensor } from '../core/index.js';

export interface DonorShort {
  readonly kind: 'donor-short';
  readonly recipientCount: number;
  readonly donorCount: number;
}

export interface SwapPair {
  readonly recipientSlot: number;
  readonly donorSlot: number;
}

export type SwapResult =
  | {
      readonly kind: 'swapped';
      /** The recipient's records in the order given, each carrying its donor's payload. */
      readonly records: readonly BankRecord[];
      /** Recipient slot ← donor slot, in (timestep, slot) order of the recipient. */
      readonly pairs: readonly SwapPair[];
    }
  | DonorShort;

function sameLayout(a: FloatTensor, b: FloatTensor): boolean {
  return a.dtype === b.dtype && a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i]);
}

function copyPayload(recipient: BankRecord, donor: BankRecord): Payload {
  const out = {} as Record<PayloadField, FloatTensor>;
  for (const field of PAYLOAD_FIELDS) {
    const r = recipient.payload[field];
    const d = donor.payload[field];
    if (!sameLayout(r, d)) {
      throw new ImepError(
        'E_INTERVENTION_INVALID',
        `donor swap: field ${field} of donor slot ${donor.slot} (${d.dtype} [${d.shape.join(',')}]) does not match recipient slot ${recipient.slot} (${r.dtype} [${r.shape.join(',')}])`,
        { field, hint: 'donor and recipient must come from banks with the same payload layout' },
      );
    }
    out[field] = cloneTensor(d);
  }
  return out;
}

/** Sorted copy by (timestep, slot). */
export function orderForInstallation(records: readonly BankRecord[]): BankRecord[] {
  return [...records].sort(compareByTimestepSlot);
}

export function swapPayloads(recipient: readonly BankRecord[], donor: readonly BankRecord[]): SwapResult {
  if (donor.length < recipient.length) {
    return { kind: 'donor-short', recipientCount: recipient.length, donorCount: donor.length };
  }
  const rOrder = orderForInstallation(recipient);
  const dOrder = orderForInstallation(donor);
  const bySource = new Map<BankRecord, BankRecord>();
  const pairs: SwapPair[] = [];
  rOrder.forEach((r, i) => {
    const d = dOrder[i] as BankRecord;
    bySource.set(r, { ...r, payload: copyPayload(r, d) });
    pairs.push({ recipientSlot: r.slot, donorSlot: d.slot });
  });
  return { kind: 'swapped', records: recipient.map((r) => bySource.get(r) as BankRecord), pairs };
}
