import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ImepError, sha256Hex, PRNG_NAME, PRNG_VERSION, canonicalBytes, type JsonValue } from '../../core/index.js';
import { ioError, writeFileAtomic } from '../io/atomic-write.js';
import { assertAllowed } from '../lifecycle.js';
import { checkFrozenPower } from '../frozen-power.js';
import type { Mde } from '../../protocol/index.js';
import { currentOperator } from '../operator.js';
import { readRequiredRecord, selfHashOk, withSelfHash, writeRecord } from '../io/record-file.js';
import { registerSeeds } from '../seed-registry.js';
import { writeUnitHeader } from '../records/unit-header.js';
import { SignatureBlockSchema, signRecord } from '../../signing/index.js';
import { Sha256HexSchema, unitPaths, type Operator } from '../unit-layout.js';
import { SeedBandSchema, type CodeIdentity, type SeedBand } from '../records/evidence-unit.js';
import { readUnitState, requireAction } from '../unit-state.js';
import type { HostedPolicyRecord } from '../records/hosted-policy-record.js';
import type { PolicyServerRecord } from '../records/policy-server-record.js';
import { arrivalCommitment, writeArrivalKey } from '../arrival-order.js';
import { ARRIVAL_ORDER_FILE, type ArrivalKeyFile } from '../records/arrival-order-record.js';
import { PrecommitRecordSchema, type PrecommitRecord } from '../records/precommit-record.js';
import { join } from 'node:path';

/**
 * Precommit: freezes the protocol and plan and records what will produce the evidence.
 *
 * Writes, in order: protocol.json (the protocol's canonical JSON bytes, src/core/canonical-json.ts;
 * protocolHash = their SHA-256, which is src/protocol's `protocolHash` of the validated protocol), plan.json (canonical bytes), precommit.json (the record below with its own SHA-256),
 * then unit.json → 'precommitted' with the spec block. unit.json is the commit point: a crash
 * before it leaves the unit 'created' and the precommit can simply be run again. When a seed
 * registry is given, the seed bands are registered FIRST, so an overlap refuses the precommit
 * before anything in the unit changes.
 *
 * After precommit, `loadFrozenProtocol` re-hashes protocol.json on every load; a different hash is
 * refused with E_PROTOCOL_FROZEN — changes go through `imep campaign amend`, which never edits
 * protocol.json.
 */

export interface PrecommitInput {
  /** The validated protocol (any JSON-serialisable object). */
  readonly protocol: unknown;
  /** The campaign plan and its hash as computed by the plan module. */
  readonly plan: unknown;
  readonly planHash: string;
  /** How many formal rows the plan will produce (rows done/planned; completion check). */
  readonly plannedRows: number;
  readonly code: CodeIdentity;
  readonly checkpointHashes: Readonly<Record<string, string>>;
  /** Digests of the simulator's input files (recorded only when non-empty). */
  readonly simulatorHashes?: Readonly<Record<string, string>>;
  /** The hosted policy's identity (runtime remote). */
  readonly hostedPolicy?: HostedPolicyRecord;
  /** The policy server's endpoint and metadata (runtime openpi-websocket | vla-eval). */
  readonly policyServer?: PolicyServerRecord;
  /** The arrival-order key (hosted policies): written to arrival-order.json, its SHA-256 recorded. */
  readonly arrivalKey?: ArrivalKeyFile;
  readonly seeds: readonly SeedBand[];
  /** Campaign ids whose seed bands the protocol declares it reuses. */
  readonly reuse?: readonly string[];
  readonly packageVersions?: Readonly<Record<string, string>>;
  readonly nodeVersion?: string;
  /** Path of the seed registry to register the bands in (skipped when absent). */
  readonly seedRegistry?: string;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

function usage(field: string, message: string): ImepError {
  return new ImepError('E_USAGE', message, { field });
}

export async function precommit(dir: string, input: PrecommitInput): Promise<PrecommitRecord> {
  const snap = await requireAction(dir, 'precommit');
  const paths = unitPaths(dir);
  if (!Number.isSafeInteger(input.plannedRows) || input.plannedRows < 1)
    throw usage('plannedRows', 'plannedRows must be a positive integer');
  const seeds = input.seeds.map((s, i) => {
    const r = SeedBandSchema.safeParse(s);
    if (!r.success) throw usage(`seeds[${i}]`, `bad seed band: ${r.error.issues[0]?.message ?? 'invalid'}`);
    return r.data;
  });
  for (const [name, hash] of Object.entries(input.checkpointHashes)) {
    if (!Sha256HexSchema.safeParse(hash).success)
      throw usage(`checkpointHashes.${name}`, 'checkpoint hash must be a lowercase SHA-256 hex digest');
  }
  // the frozen power analysis must be what its inputs produce, before anything is frozen
  checkFrozenPower((input.protocol as { mde?: Mde } | null)?.mde);
  const protocolBytes = canonicalBytes(input.protocol);
  const planBytes = canonicalBytes(input.plan);
  const protocolHash = sha256Hex(protocolBytes);
  const reuse = [...new Set(input.reuse ?? [])].sort();
  const now = (input.now ?? (() => new Date()))();
  const operator = input.operator ?? currentOperator();

  // signed first: a missing or unwritable key store refuses before anything is written
  const record: PrecommitRecord = withSelfHash(
    await signRecord(
      {
        kind: 'imep.precommit' as const,
        version: 1 as const,
        unitId: snap.header.id,
        protocolFile: 'protocol.json' as const,
        protocolHash,
        planFile: 'plan.json' as const,
        planHash: input.planHash,
        planSha256: sha256Hex(planBytes),
        plannedRows: input.plannedRows,
        code: input.code,
        checkpointHashes: { ...input.checkpointHashes },
        ...(input.simulatorHashes !== undefined && Object.keys(input.simulatorHashes).length > 0
          ? { simulatorHashes: { ...input.simulatorHashes } }
          : {}),
        ...(input.hostedPolicy === undefined ? {} : { hostedPolicy: input.hostedPolicy }),
        ...(input.policyServer === undefined ? {} : { policyServer: input.policyServer }),
        ...(input.arrivalKey === undefined ? {} : { arrivalOrder: arrivalCommitment(input.arrivalKey) }),
        seeds,
        reuse,
        createdAt: now.toISOString(),
        operator,
      },
      { signer: operator.id, prev: null },
    ),
  );
  if (input.seedRegistry !== undefined) {
    await registerSeeds(input.seedRegistry, {
      campaignId: snap.header.id,
      bands: seeds,
      reuse,
      protocolHash,
      now: () => now,
    });
  }
  await writeFileAtomic(paths.protocol, protocolBytes);
  await writeFileAtomic(paths.plan, planBytes);
  if (input.arrivalKey !== undefined) await writeArrivalKey(join(dir, ARRIVAL_ORDER_FILE), input.arrivalKey);
  await writeRecord(paths.precommit, record);
  await writeUnitHeader(dir, {
    ...snap.header,
    status: 'precommitted',
    spec: {
      runId: null,
      protocolHash,
      planHash: input.planHash,
      code: input.code,
      packageVersions: { ...(input.packageVersions ?? {}) },
      nodeVersion: input.nodeVersion ?? process.version,
      checkpointHashes: { ...input.checkpointHashes },
      prng: { name: PRNG_NAME, version: PRNG_VERSION },
      seeds,
    },
  });
  return record;
}

/** Reads precommit.json and checks its own SHA-256 (E_UNIT_TAMPERED when it does not match). */
export async function readPrecommit(dir: string): Promise<PrecommitRecord> {
  const file = unitPaths(dir).precommit;
  const record = await readRequiredRecord(
    file,
    PrecommitRecordSchema,
    'the unit has not been precommitted: run `imep campaign precommit`',
  );
  if (!selfHashOk(record)) {
    throw new ImepError('E_UNIT_TAMPERED', 'precommit.json does not match its own SHA-256', {
      file,
      hint: 'run `imep campaign verify` to see what changed',
    });
  }
  return record;
}

export interface FrozenProtocol {
  readonly protocol: JsonValue;
  readonly protocolHash: string;
  readonly precommit: PrecommitRecord;
}

function frozenError(file: string, found: string, frozen: string): ImepError {
  return new ImepError(
    'E_PROTOCOL_FROZEN',
    `the file hashes to ${found.slice(0, 12)}… but the precommit froze ${frozen.slice(0, 12)}…`,
    {
      file,
      hint: 'the protocol cannot change after precommit: restore the frozen version; record changes with `imep campaign amend`',
    },
  );
}

/** Loads protocol.json, refusing (E_PROTOCOL_FROZEN) if its bytes — or plan.json's — no longer hash to what the precommit froze. */
export async function loadFrozenProtocol(dir: string): Promise<FrozenProtocol> {
  const snap = await readUnitState(dir);
  if (snap.state === 'created') assertAllowed(snap.header.id, snap.state, 'run', dir);
  const record = await readPrecommit(dir);
  const file = unitPaths(dir).protocol;
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw ioError(
      file,
      'read the frozen protocol',
      e,
      'restore protocol.json from the sealed copy; it is frozen at precommit',
    );
  }
  const found = sha256Hex(bytes);
  if (found !== record.protocolHash) throw frozenError(file, found, record.protocolHash);
  const planFile = unitPaths(dir).plan;
  const planFound = await readFile(planFile).then(
    (b) => sha256Hex(b),
    (e: unknown) =>
      Promise.reject(ioError(planFile, 'read the frozen plan', e, 'restore plan.json; it is frozen at precommit')),
  );
  if (planFound !== record.planSha256) throw frozenError(planFile, planFound, record.planSha256);
  return { protocol: JSON.parse(bytes.toString('utf8')) as JsonValue, protocolHash: found, precommit: record };
}

/**
 * Checks that a protocol loaded from its source (e.g. re-parsed from protocols/x.yaml, named by
 * `sourceFile`) is the one frozen in the unit; E_PROTOCOL_FROZEN otherwise.
 */
export async function assertProtocolUnchanged(dir: string, protocol: unknown, sourceFile: string): Promise<void> {
  const frozen = await loadFrozenProtocol(dir);
  const found = sha256Hex(canonicalBytes(protocol));
  if (found !== frozen.protocolHash) throw frozenError(sourceFile, found, frozen.protocolHash);
}
