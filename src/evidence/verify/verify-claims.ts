import type { ManifestEntry } from '../manifest.js';
import { SEAL_EXCLUDED } from '../transitions/seal.js';
import { UNIT_FILES } from '../unit-layout.js';
import type { VerifyIssue } from './verify-types.js';

/**
 * Which record may bind which path (used by verify.ts). A manifest entry is a claim: "this path holds
 * these bytes". Each record may claim only its own scope, so that no later record can take over an
 * earlier one's file and vouch for changed bytes:
 *   seal.json `files`                   every file of the unit at the seal, but never seal.json,
 *                                       amendments.jsonl, closeout.json or anything under adjudication/
 *                                       (seal.ts refuses a unit with files there);
 *   adjudication-NNN.json `artifacts`   only files under adjudication/NNN/ — the folder of its own number;
 *   closeout.json `files`               only what a closeout binds (closeout.ts): seal.json, amendments.jsonl
 *                                       and files under adjudication/ (records, and artifacts, which are then
 *                                       bound twice — by their record and by the closeout — and checked
 *                                       against both).
 * A path the seal binds can be claimed by no other record. A refused claim is reported on the record
 * that makes it ('modified': imep never writes such a record), naming its field and the path, and it is
 * not used: the file stays judged by the manifest that really covers it.
 */

export interface Claim {
  readonly entry: ManifestEntry;
  /** The record and field that claim it, e.g. 'seal.json files'. */
  readonly by: string;
}

/** Why `path` is outside a record's scope, or null when the record may claim it. */
export type ClaimScope = (path: string) => string | null;

const ADJ_PREFIX = `${UNIT_FILES.adjudicationDir}/`;

/** A relative '/'-separated path with no empty, '.' or '..' segment. */
function plainPath(path: string): boolean {
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..') && !path.includes('\\');
}

export const sealScope: ClaimScope = (path) => {
  if (!plainPath(path)) return 'not a plain relative path';
  if (SEAL_EXCLUDED.includes(path)) return `${path} is never in the seal manifest`;
  if (path.startsWith(ADJ_PREFIX)) return `${UNIT_FILES.adjudicationDir}/ is written after the seal`;
  return null;
};

export function artifactScope(nnn: string): ClaimScope {
  const folder = `${ADJ_PREFIX}${nnn}/`;
  return (path) => {
    if (!plainPath(path)) return 'not a plain relative path';
    if (!path.startsWith(folder))
      return `it lies outside ${folder}, the only folder adjudication ${nnn}'s artifacts may be in`;
    return null;
  };
}

export const closeoutScope: ClaimScope = (path) => {
  if (!plainPath(path)) return 'not a plain relative path';
  if (path === UNIT_FILES.seal || path === UNIT_FILES.amendments || path.startsWith(ADJ_PREFIX)) return null;
  return `a closeout binds only ${UNIT_FILES.seal}, ${UNIT_FILES.amendments} and ${ADJ_PREFIX}`;
};

export class Claims {
  private readonly byPath = new Map<string, Claim[]>();
  private readonly sealed = new Set<string>();
  readonly issues: VerifyIssue[] = [];

  /**
   * Registers a record's entries; returns the paths accepted. `exclusive` (the seal): no other record may
   * claim its paths afterwards.
   */
  add(
    record: string,
    field: string,
    entries: readonly ManifestEntry[],
    scope: ClaimScope,
    exclusive = false,
  ): string[] {
    const by = `${record} ${field}`;
    const accepted: string[] = [];
    const seen = new Set<string>();
    for (const entry of entries) {
      const path = entry.path;
      const reason = seen.has(path)
        ? 'it is listed twice'
        : this.sealed.has(path)
          ? `${UNIT_FILES.seal} binds it, and no later record may claim a sealed file`
          : scope(path);
      seen.add(path);
      if (reason !== null) {
        this.issues.push({
          path: record,
          kind: 'modified',
          detail: `its field '${field}' claims ${path}: ${reason} — imep never writes such a record`,
        });
        continue;
      }
      const list = this.byPath.get(path) ?? [];
      list.push({ entry, by });
      this.byPath.set(path, list);
      if (exclusive) this.sealed.add(path);
      accepted.push(path);
    }
    return accepted;
  }

  has(path: string): boolean {
    return this.byPath.has(path);
  }

  /** Every claimed path with its claims, in the order the records were added. */
  entries(): IterableIterator<[string, Claim[]]> {
    return this.byPath.entries();
  }

  paths(): IterableIterator<string> {
    return this.byPath.keys();
  }
}
