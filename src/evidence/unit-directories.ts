import { UNIT_FILES } from './unit-layout.js';

/**
 * The directories of a unit (used by seal.ts and verify.ts). No manifest lists directories; a directory
 * is accounted for when some entry (file, link…) lies below it — that entry is checked or reported
 * itself — or some path a manifest lists does (a missing file is reported as missing, not its folder
 * as stray), or when it is one the layout creates and may leave empty (unit-layout.ts): the top-level
 * rows/, traces/, probe/, smoke/, failed-runs/ and adjudication/, and the rows/ or traces/ folder of a
 * probe, smoke or failed run. Any other directory holds no file and is a stray: it carries no evidence,
 * yet readers that list folders would count one named like a record (unit state: `mkdir
 * adjudication/adjudication-001.json` would make a unit 'adjudicated') or a run (status).
 */

const LAYOUT_TOP: ReadonlySet<string> = new Set([
  UNIT_FILES.rowsDir,
  UNIT_FILES.tracesDir,
  UNIT_FILES.probeDir,
  UNIT_FILES.smokeDir,
  UNIT_FILES.failedRunsDir,
  UNIT_FILES.adjudicationDir,
]);
const RUN_SUBDIR_RE = new RegExp(
  `^(?:${UNIT_FILES.probeDir}|${UNIT_FILES.smokeDir}|${UNIT_FILES.failedRunsDir})/[^/]+/(?:rows|traces)$`,
);

export function isLayoutDirectory(path: string): boolean {
  return LAYOUT_TOP.has(path) || RUN_SUBDIR_RE.test(path);
}

/**
 * The stray directories: no path of `paths` (entries found, paths listed) below them and not made by the
 * layout — only the top-most one of each such subtree, in the order given.
 */
export function strayDirectories(directories: readonly string[], paths: Iterable<string>): string[] {
  const occupied = new Set<string>();
  for (const p of paths) {
    for (let i = p.lastIndexOf('/'); i > 0; i = p.lastIndexOf('/', i - 1)) occupied.add(p.slice(0, i));
  }
  const out: string[] = [];
  for (const d of directories) {
    if (occupied.has(d) || isLayoutDirectory(d) || out.some((o) => d.startsWith(`${o}/`))) continue;
    out.push(d);
  }
  return out;
}

export const STRAY_DIRECTORY_DETAIL = 'a directory holding no file, not part of the unit layout';
