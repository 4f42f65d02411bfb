/**
 * Arrival order (issue #24): the order in which a segment's units reach a HOSTED policy.
 *
 * The plan's canonical order (wave → condition → task → seed → attempt, src/protocol/plan.ts) is public — the
 * protocol is — so a host that counts its resets learns which plan unit each reset is, hence its seed, hence (on a
 * task whose hidden fact is drawn from the seed) the fact. A unit whose policy is hosted therefore runs each segment's
 * units in a keyed random order:
 *
 * - At precommit a fresh 256-bit key is drawn (node:crypto) and written to `arrival-order.json` in the unit; the
 *   precommit record (signed, before any data) binds its SHA-256 (`arrivalOrder.sha256`). The key never travels to
 *   the host: the policy host runs sandboxed without read access to the campaigns folder (src/bridges/sandbox.ts).
 *   The seal's manifest covers the file, so a verifier holds the key and can reproduce every permutation.
 * - Within segment (wave, condition, task), units run in ascending order of their rank
 *   HMAC-SHA256(key, "imep.arrival-order.v1\0" wave "\0" condition "\0" task "\0" scopeId) (hex, ties impossible in
 *   practice and broken by scopeId). A keyed PRF rather than a seeded xoshiro: a 32-bit seed could be searched by a
 *   host that sees a few facts in the cue; an HMAC under an unknown 256-bit key cannot.
 * - Rows are unchanged: the runner's reorder buffer (row-sink.ts) still appends rows in seq (plan) order, and rows of
 *   a policy that keeps no state across units do not depend on the order units ran in. Units without a key (every
 *   in-process policy, and hosted units precommitted before this version) run in plan order, as before.
 *
 * What the host receives is then: a fresh random episode token per reset (remote-policy.ts), the slot, and the
 * method-visible observations — nothing indexes the plan.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ImepError } from '../core/index.js';
import { writeFileAtomic } from './io/atomic-write.js';
import {
  ARRIVAL_ORDER_FILE,
  ARRIVAL_ORDER_VERSION,
  ArrivalKeyFileSchema,
  type ArrivalKeyFile,
  type ArrivalOrderCommitment,
} from './records/arrival-order-record.js';

/** A fresh key file (256 random bits). */
export function newArrivalKey(): ArrivalKeyFile {
  return { kind: 'imep.arrival-order', version: ARRIVAL_ORDER_VERSION, key: randomBytes(32).toString('hex') };
}

/** The file's bytes: its canonical JSON (keys sorted, no whitespace; the three fields are plain strings and a number). */
export function arrivalKeyBytes(file: ArrivalKeyFile): Uint8Array {
  return Buffer.from(JSON.stringify({ key: file.key, kind: file.kind, version: file.version }), 'utf8');
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function arrivalCommitment(file: ArrivalKeyFile): ArrivalOrderCommitment {
  return { version: ARRIVAL_ORDER_VERSION, file: ARRIVAL_ORDER_FILE, sha256: sha256Hex(arrivalKeyBytes(file)) };
}

export async function writeArrivalKey(path: string, file: ArrivalKeyFile): Promise<void> {
  await writeFileAtomic(path, arrivalKeyBytes(file));
}

/**
 * The key of a unit whose precommit committed one (null when it did not): the file must exist, parse, and hash to
 * the commitment, else E_UNIT_TAMPERED naming the file.
 */
export async function readArrivalKey(
  path: string,
  commitment: ArrivalOrderCommitment | undefined,
): Promise<string | null> {
  if (commitment === undefined) return null;
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `${ARRIVAL_ORDER_FILE} is missing, but the precommit committed an arrival-order key`,
      { file: path, cause: e, hint: 'run `imep campaign verify` to see what changed' },
    );
  }
  if (sha256Hex(bytes) !== commitment.sha256) {
    throw new ImepError('E_UNIT_TAMPERED', `${ARRIVAL_ORDER_FILE} does not match the SHA-256 its precommit committed`, {
      file: path,
      hint: 'run `imep campaign verify` to see what changed',
    });
  }
  const parsed = ArrivalKeyFileSchema.safeParse(JSON.parse(bytes.toString('utf8')));
  if (!parsed.success)
    throw new ImepError('E_UNIT_TAMPERED', `${ARRIVAL_ORDER_FILE} is not an arrival-order key file`, { file: path });
  return parsed.data.key;
}

export interface SegmentKey {
  readonly wave: number;
  readonly condition: string;
  readonly task: string;
}

/** The unit's rank within its segment: HMAC-SHA256 under the key, hex. */
export function arrivalRank(key: string, segment: SegmentKey, scopeId: string): string {
  return createHmac('sha256', Buffer.from(key, 'hex'))
    .update(
      `imep.arrival-order.v${ARRIVAL_ORDER_VERSION}\0${segment.wave}\0${segment.condition}\0${segment.task}\0${scopeId}`,
      'utf8',
    )
    .digest('hex');
}

/** The units of one segment in the order they reach the policy: by rank under `key`, or as given when key is null. */
export function arrivalOrder<U extends { readonly scopeId: string }>(
  key: string | null,
  segment: SegmentKey,
  units: readonly U[],
): U[] {
  if (key === null) return [...units];
  const ranked = units.map((u) => ({ u, rank: arrivalRank(key, segment, u.scopeId) }));
  ranked.sort((a, b) =>
    a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : a.u.scopeId < b.u.scopeId ? -1 : a.u.scopeId > b.u.scopeId ? 1 : 0,
  );
  return ranked.map((r) => r.u);
}
