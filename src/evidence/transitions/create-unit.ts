import { mkdir, readdir } from 'node:fs/promises';
import { makeDirs, ImepError } from '../../core/index.js';
import { fsyncDir, ioError } from '../io/atomic-write.js';
import { currentOperator } from '../operator.js';
import { writeUnitHeader } from '../records/unit-header.js';
import { UnitIdSchema, UNIT_FILES, UNIT_SCHEMA_VERSION, type Operator } from '../unit-layout.js';
import type { EvidenceUnit } from '../records/evidence-unit.js';

export interface CreateUnitInput {
  readonly id: string;
  readonly operator?: Operator;
  readonly now?: () => Date;
}

/**
 * Creates an empty evidence unit in `dir` (which must not exist or be empty): the layout's
 * directories, then unit.json (status 'created') last, so a crash leaves no half-made unit that
 * looks real.
 */
export async function createUnitDir(dir: string, input: CreateUnitInput): Promise<EvidenceUnit> {
  const id = UnitIdSchema.safeParse(input.id);
  if (!id.success) {
    throw new ImepError('E_USAGE', `bad unit id '${input.id}': ${id.error.issues[0]?.message ?? 'invalid'}`, {
      field: 'id',
    });
  }
  const existing = await readdir(dir).catch((e: unknown) => {
    if ((e as { code?: string }).code === 'ENOENT') return [] as string[];
    throw ioError(dir, 'list', e);
  });
  if (existing.length > 0) {
    throw new ImepError('E_USAGE', 'the directory is not empty; an evidence unit needs a fresh directory', {
      file: dir,
      hint: 'choose a new path (units are never overwritten)',
    });
  }
  try {
    await makeDirs(dir);
    for (const sub of [
      UNIT_FILES.rowsDir,
      UNIT_FILES.tracesDir,
      UNIT_FILES.probeDir,
      UNIT_FILES.smokeDir,
      UNIT_FILES.adjudicationDir,
    ]) {
      await mkdir(`${dir}/${sub}`);
    }
  } catch (e) {
    throw ioError(dir, 'create the unit directories', e);
  }
  await fsyncDir(dir);
  const header: EvidenceUnit = {
    kind: 'imep.evidence-unit',
    version: UNIT_SCHEMA_VERSION,
    id: id.data,
    status: 'created',
    createdAt: (input.now ?? (() => new Date()))().toISOString(),
    createdBy: input.operator ?? currentOperator(),
    spec: null,
  };
  await writeUnitHeader(dir, header);
  return header;
}
