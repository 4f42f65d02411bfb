import { z } from 'zod';
import { ImepError } from '../../core/index.js';
import { readRecord, writeRecord } from '../io/record-file.js';
import { EvidenceUnitV1Schema, type EvidenceUnit } from './evidence-unit.js';
import { unitPaths } from '../unit-layout.js';

/**
 * unit.json reader/writer. The reader branches on `version` (inspect_ai style): version 1 is the
 * only one so far; a newer version is refused with a hint to upgrade rather than misread.
 */

export async function readUnitHeader(dir: string): Promise<EvidenceUnit> {
  const file = unitPaths(dir).header;
  const r = await readRecord(file, EvidenceUnitV1Schema);
  if (r.kind === 'missing') {
    throw new ImepError('E_IO', 'no evidence unit here (unit.json not found)', {
      file,
      hint: 'check the unit path; `imep campaign run FILE` (or `imep campaign precommit FILE`) creates a unit from a protocol file',
    });
  }
  if (r.kind === 'bad') {
    const version = await peekVersion(file);
    if (version !== undefined && version > 1) {
      throw new ImepError('E_USAGE', `unit.json has version ${version}; this imep reads version 1`, {
        file,
        hint: 'upgrade imep to read this unit',
      });
    }
    throw new ImepError('E_UNIT_TAMPERED', `unit.json ${r.reason}`, {
      file,
      hint: 'run `imep campaign verify` to see what changed',
    });
  }
  return r.value;
}

async function peekVersion(file: string): Promise<number | undefined> {
  const r = await readRecord(file, z.looseObject({ version: z.number() }));
  return r.kind === 'ok' ? r.value.version : undefined;
}

export async function writeUnitHeader(dir: string, header: EvidenceUnit): Promise<void> {
  await writeRecord(unitPaths(dir).header, EvidenceUnitV1Schema.parse(header));
}
