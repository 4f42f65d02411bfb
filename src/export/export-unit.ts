/**
 * `imep export`'s work: verifies a sealed unit (a unit that fails any integrity check is refused with
 * E_UNIT_TAMPERED, exit 3; unsealed units are refused, E_OUT_OF_ORDER — their rows are not evidence yet), reads
 * rows/rows.jsonl and rows/timings.jsonl once against the verified hashes, and writes rows.parquet and
 * episodes.parquet (tables.ts) with the unit's identity in each file's key-value metadata (EXPORT_METADATA_KEYS).
 * The files go OUTSIDE the unit (a file inside it would be a stray that fails verification).
 */
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { ImepError, makeDirs } from '../core/index.js';
import {
  EpisodeRowSchema,
  EpisodeTimingSchema,
  MERKLE_SCHEME,
  NEXT_COMMAND,
  UNIT_FILES,
  assertUnitVerified,
  isSealedState,
  readSealed,
  readUnitState,
  sealedSha256,
  writeFileAtomic,
  type EpisodeRow,
  type EpisodeTiming,
} from '../evidence/index.js';
import { parquetBytes } from './parquet-file.js';
import { EPISODE_FIELDS, ROW_FIELDS, episodeSummary } from './tables.js';
import type { z } from 'zod';

const require = createRequire(import.meta.url);
const IMEP_VERSION = (require('../../package.json') as { version: string }).version;

/** The key-value metadata every exported file carries (docs/campaigns.md, `imep export`). */
export const EXPORT_METADATA_KEYS = [
  'imep.table',
  'imep.unit_id',
  'imep.stage',
  'imep.merkle_root',
  'imep.merkle_scheme',
  'imep.seal_root',
  'imep.protocol_hash',
  'imep.rows_sha256',
  'imep.imep_version',
] as const;

export interface ExportOptions {
  /** Where to write; default `<folder of the unit>/exports/<unit folder name>`. */
  readonly outDir?: string;
}

export interface ExportResult {
  readonly unitId: string;
  readonly stage: 'sealed' | 'adjudicated' | 'closed';
  readonly root: string;
  readonly rowsFile: string;
  readonly episodesFile: string;
  readonly rows: number;
}

/** The default folder: exports/<unit> beside the unit, as reports/<unit> is for `imep report`. */
export function defaultExportDir(unitDir: string): string {
  const abs = resolve(unitDir);
  return join(dirname(abs), 'exports', basename(abs));
}

/** Each line of a JSON-lines file: the object as written (every key) and its parse by `schema`. */
function parseLines<S extends z.ZodType>(
  bytes: Buffer,
  path: string,
  schema: S,
): { raw: Record<string, unknown>[]; parsed: z.infer<S>[] } {
  const text = bytes.toString('utf8');
  const lines = text.length === 0 ? [] : text.replace(/\n$/, '').split('\n');
  const raw: Record<string, unknown>[] = [];
  const parsed: z.infer<S>[] = [];
  lines.forEach((line, i) => {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new ImepError('E_MANIFEST_INVALID', `${path} line ${i + 1} is not JSON`, { field: path });
    }
    const r = schema.safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new ImepError(
        'E_MANIFEST_INVALID',
        `${path} line ${i + 1}: ${issue?.path.join('.') ?? ''} ${issue?.message ?? 'does not match'}; this IMEP cannot export it — use the IMEP version that wrote the unit`,
        { field: path },
      );
    }
    raw.push(json as Record<string, unknown>);
    parsed.push(r.data as z.infer<S>);
  });
  return { raw, parsed };
}

/** Exports a sealed (or adjudicated, or closed) unit's rows as Parquet. */
export async function exportUnit(unitDir: string, opts: ExportOptions = {}): Promise<ExportResult> {
  const snapshot = await readUnitState(unitDir);
  if (!isSealedState(snapshot.state)) {
    const next =
      snapshot.state === 'created' || snapshot.state === 'precommitted'
        ? 'imep campaign run <its protocol file>'
        : `${NEXT_COMMAND[snapshot.state]} ${unitDir}`;
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snapshot.header.id} is '${snapshot.state}'; \`imep export\` exports sealed evidence only; next: \`${next}\`, which seals it`,
    );
  }
  const outDir = resolve(opts.outDir ?? defaultExportDir(unitDir));
  const inside = relative(resolve(unitDir), outDir);
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) {
    throw new ImepError('E_USAGE', `--out ${outDir} is inside the unit; a file there would fail its verification`, {
      field: '--out',
      hint: 'name a folder outside the unit (the default is exports/<unit> beside it)',
    });
  }
  const unit = await assertUnitVerified(unitDir);
  const rows = parseLines(await readSealed(unit, UNIT_FILES.rows), UNIT_FILES.rows, EpisodeRowSchema);
  // a unit whose seal lists no timings file exports null timing columns
  const timings = new Map<number, EpisodeTiming>();
  if (sealedSha256(unit, UNIT_FILES.timings) !== undefined) {
    const bytes = await readSealed(unit, UNIT_FILES.timings);
    for (const t of parseLines(bytes, UNIT_FILES.timings, EpisodeTimingSchema).parsed as EpisodeTiming[]) {
      timings.set(t.seq, t);
    }
  }

  const r = unit.result;
  const common: [string, string][] = [
    ['imep.unit_id', r.unitId],
    ['imep.stage', r.stage],
    ['imep.merkle_root', r.root],
    ['imep.merkle_scheme', MERKLE_SCHEME],
    ['imep.seal_root', r.sealRoot],
    ['imep.protocol_hash', unit.seal.protocolHash],
    ['imep.rows_sha256', unit.hashes.get(UNIT_FILES.rows) ?? ''],
    ['imep.imep_version', IMEP_VERSION],
  ];
  const createdBy = `imep version ${IMEP_VERSION}`;
  const rowsFile = join(outDir, 'rows.parquet');
  const episodesFile = join(outDir, 'episodes.parquet');
  const rowsParquet = parquetBytes({
    fields: ROW_FIELDS,
    rows: rows.raw,
    metadata: [['imep.table', 'rows'], ...common],
    createdBy,
  });
  const episodesParquet = parquetBytes({
    fields: EPISODE_FIELDS,
    rows: (rows.parsed as EpisodeRow[]).map((row) => episodeSummary(row, timings.get(row.seq))),
    metadata: [['imep.table', 'episodes'], ...common],
    createdBy,
  });
  await makeDirs(outDir);
  await writeFileAtomic(rowsFile, rowsParquet);
  await writeFileAtomic(episodesFile, episodesParquet);
  return { unitId: r.unitId, stage: r.stage, root: r.root, rowsFile, episodesFile, rows: rows.raw.length };
}
