import { lstat, readdir } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { ImepError } from '../core/index.js';
import { ioError } from './io/atomic-write.js';
import { assertAllowed, type UnitAction, type UnitState } from './lifecycle.js';
import { readUnitHeader } from './records/unit-header.js';
import { ADJUDICATION_RECORD_RE, CROSS_CHECK_RECORD_RE, unitPaths } from './unit-layout.js';
import type { EvidenceUnit } from './records/evidence-unit.js';

/**
 * Finds a unit's lifecycle state from disk. Pre-seal states come from unit.json `status`; after
 * the seal: closeout.json present → closed; a cross-check record → cross-checked; an adjudication
 * record → adjudicated; else sealed. `sealInterrupted` marks unit.json saying 'sealed' with no
 * seal.json and no post-seal record — a seal that crashed between its two writes (or a deleted
 * seal; verification tells which story fits, and only re-sealing is allowed from there).
 * Only regular files count as records: a directory or link named like a record (closeout.json,
 * adjudication-NNN.json) changes no state — verification reports it as stray or modified.
 */

export interface UnitSnapshot {
  readonly dir: string;
  readonly header: EvidenceUnit;
  readonly state: UnitState;
  readonly sealInterrupted: boolean;
}

/** Whether `path` exists (any type), or — with `fileOnly` — is a regular file (links not followed). */
async function exists(path: string, fileOnly = false): Promise<boolean> {
  try {
    const st = await lstat(path);
    return !fileOnly || st.isFile();
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return false;
    throw ioError(path, 'stat', e);
  }
}

/** The record files in adjudication/ (regular files only), sorted by name. */
export async function listAdjudicationRecords(
  dir: string,
): Promise<{ adjudications: string[]; crossChecks: string[] }> {
  const adjDir = unitPaths(dir).adjudicationDir;
  let found: Dirent[];
  try {
    found = await readdir(adjDir, { withFileTypes: true });
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return { adjudications: [], crossChecks: [] };
    throw ioError(adjDir, 'list', e);
  }
  const names = found
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .sort();
  return {
    adjudications: names.filter((n) => ADJUDICATION_RECORD_RE.test(n)),
    crossChecks: names.filter((n) => CROSS_CHECK_RECORD_RE.test(n)),
  };
}

export async function readUnitState(dir: string): Promise<UnitSnapshot> {
  const header = await readUnitHeader(dir);
  const paths = unitPaths(dir);
  const sealed = await exists(paths.seal);
  if (header.status !== 'sealed') {
    if (sealed) {
      throw new ImepError('E_UNIT_TAMPERED', `unit.json says '${header.status}' but seal.json exists`, {
        file: paths.header,
        hint: 'run `imep campaign verify` to see what changed',
      });
    }
    return { dir, header, state: header.status, sealInterrupted: false };
  }
  const closed = await exists(paths.closeout, true);
  const { adjudications, crossChecks } = await listAdjudicationRecords(dir);
  const state: UnitState = closed
    ? 'closed'
    : crossChecks.length > 0
      ? 'cross-checked'
      : adjudications.length > 0
        ? 'adjudicated'
        : 'sealed';
  return { dir, header, state, sealInterrupted: !sealed && state === 'sealed' };
}

/** Reads the state and throws the lifecycle refusal unless `action` is allowed now. */
export async function requireAction(dir: string, action: UnitAction): Promise<UnitSnapshot> {
  const snap = await readUnitState(dir);
  if (!(action === 'seal' && snap.sealInterrupted)) assertAllowed(snap.header.id, snap.state, action, dir);
  return snap;
}
