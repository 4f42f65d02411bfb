/**
 * The inputs of an adjudication, read from a verified sealed unit: the frozen protocol (protocol.json,
 * re-hashed against the precommit and re-validated by the protocol schema), the sealed rows
 * (rows/rows.jsonl, each validated against EpisodeRowSchema v1), the seal and the unit's spec block.
 * Nothing else is read: every number of an adjudication comes from these.
 */
import { ImepError, sha256Hex } from '../core/index.js';
import { ProtocolSchema, type Protocol } from '../protocol/index.js';
import {
  EpisodeRowSchema,
  type EpisodeRow,
  PrecommitRecordSchema,
  type PrecommitRecord,
  selfHashOk,
  EvidenceUnitV1Schema,
  UNIT_FILES,
  unitPaths,
  readSealed,
  readVerifiedRecord,
  sealedSha256,
  type VerifiedUnit,
  assertUnitVerified,
} from '../evidence/index.js';

export interface SealedInputs {
  readonly dir: string;
  readonly unitId: string;
  readonly protocol: Protocol;
  readonly protocolHash: string;
  readonly precommitSha256: string;
  readonly planHash: string;
  readonly rows: readonly EpisodeRow[];
  readonly rowsSha256: string;
  readonly sealRoot: string;
  readonly sealSha256: string;
  readonly code: { readonly gitCommit: string | null; readonly dirty: boolean | null; readonly packageVersion: string };
  readonly checkpointHashes: Readonly<Record<string, string>>;
  readonly packageVersions: Readonly<Record<string, string>>;
  readonly nodeVersion: string;
  readonly prng: { readonly name: string; readonly version: number };
}

/** Parses rows.jsonl text into v1 rows; a line that is not a v1 row throws naming the file and line. */
export function parseRows(text: string, file: string): EpisodeRow[] {
  const rows: EpisodeRow[] = [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ImepError('E_INTERNAL', `line ${i + 1} is not JSON`, { file, field: `line ${i + 1}` });
    }
    const r = EpisodeRowSchema.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new ImepError(
        'E_INTERNAL',
        `line ${i + 1} is not an episode row v1 (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'})`,
        {
          file,
          field: `line ${i + 1}`,
          hint: 'the adjudicator reads EpisodeRowSchema v1 rows only (src/evidence/records/episode-row.ts)',
        },
      );
    }
    rows.push(r.data);
  });
  return rows;
}

/** The frozen protocol of a verified unit: precommit.json and protocol.json each read once against the seal. */
export async function loadVerifiedProtocol(
  unit: VerifiedUnit,
): Promise<{ protocol: Protocol; protocolHash: string; precommit: PrecommitRecord }> {
  const paths = unitPaths(unit.dir);
  const precommit = await readVerifiedRecord(
    unit.dir,
    UNIT_FILES.precommit,
    sealedSha256(unit, UNIT_FILES.precommit),
    PrecommitRecordSchema,
  );
  if (!selfHashOk(precommit)) {
    throw new ImepError('E_UNIT_TAMPERED', 'precommit.json does not match its own SHA-256', {
      file: paths.precommit,
      hint: 'run `imep campaign verify` to see what changed',
    });
  }
  const bytes = await readSealed(unit, UNIT_FILES.protocol);
  const protocolHash = sha256Hex(bytes);
  if (protocolHash !== precommit.protocolHash) {
    throw new ImepError(
      'E_PROTOCOL_FROZEN',
      `the file hashes to ${protocolHash.slice(0, 12)}… but the precommit froze ${precommit.protocolHash.slice(0, 12)}…`,
      { file: paths.protocol },
    );
  }
  const planSha256 = sealedSha256(unit, UNIT_FILES.plan);
  if (planSha256 !== precommit.planSha256) {
    throw new ImepError('E_PROTOCOL_FROZEN', `the sealed plan.json is not the one the precommit froze`, {
      file: paths.plan,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ImepError('E_PROTOCOL_INVALID', 'the frozen protocol is not JSON', { file: paths.protocol });
  }
  const parsed = ProtocolSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ImepError(
      'E_PROTOCOL_INVALID',
      `the frozen protocol is not a valid protocol v1 (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'})`,
      {
        file: paths.protocol,
      },
    );
  }
  return { protocol: parsed.data, protocolHash, precommit };
}

/** The sealed rows of a verified unit, read once against the seal's entry. */
export async function loadVerifiedRows(unit: VerifiedUnit): Promise<{ rows: EpisodeRow[]; rowsSha256: string }> {
  const bytes = await readSealed(unit, UNIT_FILES.rows);
  return { rows: parseRows(bytes.toString('utf8'), unitPaths(unit.dir).rows), rowsSha256: sha256Hex(bytes) };
}

/**
 * Reads the sealed inputs of a verified unit (`assertUnitVerified`; verified here when not given). Each file
 * is read ONCE and its bytes checked against the seal's manifest entry before they are parsed
 * (verified-read.ts): nothing is computed on bytes other than the verified ones.
 */
export async function loadSealedInputs(dir: string, verified?: VerifiedUnit): Promise<SealedInputs> {
  const unit = verified ?? (await assertUnitVerified(dir));
  const paths = unitPaths(dir);
  const header = await readVerifiedRecord(
    dir,
    UNIT_FILES.header,
    sealedSha256(unit, UNIT_FILES.header),
    EvidenceUnitV1Schema,
  );
  const frozen = await loadVerifiedProtocol(unit);
  const { rows, rowsSha256 } = await loadVerifiedRows(unit);
  const spec = header.spec;
  if (spec === null) throw new ImepError('E_UNIT_TAMPERED', 'unit.json has no spec block', { file: paths.header });
  return {
    dir,
    unitId: header.id,
    protocol: frozen.protocol,
    protocolHash: frozen.protocolHash,
    precommitSha256: frozen.precommit.sha256,
    planHash: frozen.precommit.planHash,
    rows,
    rowsSha256,
    sealRoot: unit.seal.merkle.root,
    sealSha256: sha256Hex(unit.sealBytes),
    code: spec.code,
    checkpointHashes: spec.checkpointHashes,
    packageVersions: spec.packageVersions,
    nodeVersion: spec.nodeVersion,
    prng: spec.prng,
  };
}

/** The task names of a protocol, in envs order. */
export function protocolTasks(protocol: Protocol): string[] {
  return protocol.envs.map((e) => e.task ?? e.id);
}

/** The registered attempts (or chain positions) whose outcomes enter the estimands. */
export function registeredAttempts(protocol: Protocol): number[] {
  if (protocol.attempts) return [protocol.attempts.registered];
  if (protocol.chains) return [...protocol.chains.registered].sort((a, b) => a - b);
  return [1];
}
