/**
 * The inputs of an adjudication, read from a verified sealed unit: the frozen protocol (protocol.json,
 * re-hashed against the precommit and re-validated by the protocol schema), the sealed rows
 * (rows/rows.jsonl, each validated against EpisodeRowSchema v1), the seal and the unit's spec block.
 * Nothing else is read: every number of an adjudication comes from these.
 */
import { readFile } from 'node:fs/promises';
import { ImepError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hash.js';
import { ProtocolSchema, type Protocol } from '../../protocol/index.js';
import { EpisodeRowSchema, type EpisodeRow } from '../episode-row.js';
import { loadFrozenProtocol } from '../precommit.js';
import { readSeal } from '../seal.js';
import { readUnitHeader } from '../unit-header.js';
import { unitPaths } from '../unit-layout.js';

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
      throw new ImepError('E_INTERNAL', `line ${i + 1} is not an episode row v1 (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'})`, {
        file,
        field: `line ${i + 1}`,
        hint: 'the adjudicator reads EpisodeRowSchema v1 rows only (src/campaign/episode-row.ts)',
      });
    }
    rows.push(r.data);
  });
  return rows;
}

/** Reads the sealed inputs. The caller verifies the unit first (assertUnitIntact). */
export async function loadSealedInputs(dir: string): Promise<SealedInputs> {
  const paths = unitPaths(dir);
  const header = await readUnitHeader(dir);
  const frozen = await loadFrozenProtocol(dir);
  const parsed = ProtocolSchema.safeParse(frozen.protocol);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ImepError('E_PROTOCOL_INVALID', `the frozen protocol is not a valid protocol v1 (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'})`, {
      file: paths.protocol,
    });
  }
  const seal = await readSeal(dir);
  const sealBytes = await readFile(paths.seal);
  let rowBytes: Buffer;
  try {
    rowBytes = await readFile(paths.rows);
  } catch (e) {
    throw new ImepError('E_IO', 'cannot read the sealed rows', { file: paths.rows, cause: e });
  }
  const spec = header.spec;
  if (spec === null) throw new ImepError('E_UNIT_TAMPERED', 'unit.json has no spec block', { file: paths.header });
  return {
    dir,
    unitId: header.id,
    protocol: parsed.data,
    protocolHash: frozen.protocolHash,
    precommitSha256: frozen.precommit.sha256,
    planHash: frozen.precommit.planHash,
    rows: parseRows(rowBytes.toString('utf8'), paths.rows),
    rowsSha256: sha256Hex(rowBytes),
    sealRoot: seal.merkle.root,
    sealSha256: sha256Hex(sealBytes),
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
