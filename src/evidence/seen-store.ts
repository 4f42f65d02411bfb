/**
 * What this machine has seen of each evidence unit (issue #32 item 8): a small append-only store under IMEP's state
 * folder — `~/.imep/seen/`, or `IMEP_SEEN_DIR` — with one JSON-lines file per unit instance (unit id + the SHA-256 of
 * its precommit.json, so a re-run of the same protocol, which precommits anew, is another instance). Each line records
 * a stage and the roots the machine saw the unit at, when, and by which command (it ran it, sealed, adjudicated or
 * closed it out, verified it, or trusted a key from it). Every line carries the store's format name and version; a file is rewritten whole through a
 * temporary file and a rename (old lines + the new one), so it is never half-written.
 *
 * A later look at the unit is a ROLLBACK when, against the lines since the last accepted rollback:
 *   - it shows a lower stage than one seen (closeout.json deleted; sealed- or adjudicated-stage files restored), or
 *   - its seal root differs from one seen (the same precommit sealed over other files), or
 *   - it is closed out under a closeout root other than one seen closed, or
 *   - its latest adjudication has a lower number than one seen, or the same number with other bytes (a
 *     re-adjudication deleted: stage and seal root stay 'adjudicated' and the same), or
 *   - it holds fewer amendments than seen (post-seal amendments deleted from amendments.jsonl).
 * Version 2 lines add the adjudication and amendment count; version 1 lines (written before them) are still read,
 * and compared on stage and roots only.
 * A default `verify` proves only that the files match the unit's own manifests: a unit rolled back to an earlier,
 * intact stage verifies. This store lets a machine that saw the later stage refuse it (E_ROLLBACK); a machine that
 * never saw it cannot tell — there the cited root and stage (`--expected-root`, `--expected-stage`) are the defence.
 */
import { readFile, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ImepError, isImepError } from '../core/index.js';
import { ioError, writeFileAtomic } from './io/atomic-write.js';

export const SEEN_FORMAT = 'imep-seen';
export const SEEN_VERSION = 2;
/** The versions a store file may hold (1: before the adjudication and amendment count were recorded). */
export const SEEN_VERSIONS_READ = [1, 2] as const;
export const SEEN_DIR_ENV = 'IMEP_SEEN_DIR';

export const SEEN_STAGES = ['sealed', 'adjudicated', 'closed'] as const;
export type SeenStage = (typeof SEEN_STAGES)[number];
export const SEEN_EVENTS = ['verify', 'seal', 'adjudicate', 'closeout', 'run', 'trust', 'accept-rollback'] as const;
export type SeenEvent = (typeof SEEN_EVENTS)[number];

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);

const SeenAdjudicationSchema = z.strictObject({
  /** NNN of the latest adjudication/adjudication-NNN.json. */
  n: z.number().int().min(1).max(999),
  /** The SHA-256 of that record's bytes. */
  sha256: Hex64,
});
export type SeenAdjudication = z.infer<typeof SeenAdjudicationSchema>;

const SeenLineV1Schema = z.strictObject({
  format: z.literal(SEEN_FORMAT),
  version: z.literal(1),
  unitId: z.string().min(1).max(200),
  precommitSha256: Hex64,
  stage: z.enum(SEEN_STAGES),
  /** The root a reviewer cites at that stage: the closeout's when closed, else the seal's. */
  root: Hex64,
  sealRoot: Hex64,
  at: z.string().min(1).max(64),
  event: z.enum(SEEN_EVENTS),
  /** The unit folder as given to the command (informative only). */
  dir: z.string().max(4096),
});

const SeenLineV2Schema = SeenLineV1Schema.extend({
  version: z.literal(SEEN_VERSION),
  /** The latest adjudication record the unit held (null: none). */
  adjudication: SeenAdjudicationSchema.nullable(),
  /** The lines of amendments.jsonl (pre- and post-seal). */
  amendments: z.number().int().min(0),
});

export const SeenLineSchema = z.discriminatedUnion('version', [SeenLineV1Schema, SeenLineV2Schema]);
export type SeenLine = z.infer<typeof SeenLineSchema>;

/** What a command saw of a unit just now. */
export interface SeenState {
  readonly unitId: string;
  readonly precommitSha256: string;
  readonly stage: SeenStage;
  readonly root: string;
  readonly sealRoot: string;
  /** The latest adjudication record (null: none). */
  readonly adjudication: SeenAdjudication | null;
  /** The lines of amendments.jsonl. */
  readonly amendments: number;
}

/** The store folder: IMEP_SEEN_DIR, else ~/.imep/seen. */
export function seenDir(): string {
  const fromEnv = process.env[SEEN_DIR_ENV];
  return fromEnv ? fromEnv : join(homedir(), '.imep', 'seen');
}

/** The store file of one unit instance. */
export function seenFile(s: Pick<SeenState, 'unitId' | 'precommitSha256'>, dir = seenDir()): string {
  const safe = s.unitId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
  return join(dir, `${safe}.${s.precommitSha256.slice(0, 16)}.jsonl`);
}

/** Every line of a unit's store file ([] when it has none); a line that is not this format refuses, naming the file. */
export async function readSeen(s: Pick<SeenState, 'unitId' | 'precommitSha256'>, dir = seenDir()): Promise<SeenLine[]> {
  const file = seenFile(s, dir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return [];
    throw ioError(file, 'read', e);
  }
  const lines: SeenLine[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    if (raw === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    const r = SeenLineSchema.safeParse(parsed);
    if (!r.success || r.data.unitId !== s.unitId || r.data.precommitSha256 !== s.precommitSha256) {
      throw new ImepError(
        'E_USAGE',
        `line ${i + 1} is not a ${SEEN_FORMAT} v1 or v${SEEN_VERSION} record of this unit`,
        {
          file,
          hint: `this machine's record of what it saw of the unit is damaged: inspect it; move it aside to forget the unit (${SEEN_DIR_ENV} picks another store)`,
        },
      );
    }
    lines.push(r.data);
  }
  return lines;
}

const sameAdjudication = (a: SeenAdjudication | null, b: SeenAdjudication | null): boolean =>
  a === null || b === null ? a === b : a.n === b.n && a.sha256 === b.sha256;

const rank = (stage: SeenStage): number => SEEN_STAGES.indexOf(stage);

/** The lines that count: those after the last accepted rollback (which itself sets the new baseline). */
function current(lines: readonly SeenLine[]): SeenLine[] {
  let from = 0;
  lines.forEach((l, i) => {
    if (l.event === 'accept-rollback') from = i;
  });
  return lines.slice(from);
}

/** The seen line that `now` rolls back, or null. */
export function rollbackOf(lines: readonly SeenLine[], now: SeenState): SeenLine | null {
  const seen = current(lines);
  const lower = seen.filter((l) => rank(l.stage) > rank(now.stage)).sort((a, b) => rank(b.stage) - rank(a.stage))[0];
  if (lower !== undefined) return lower;
  const otherSeal = seen.find((l) => l.sealRoot !== now.sealRoot);
  if (otherSeal !== undefined) return otherSeal;
  if (now.stage === 'closed') {
    const otherCloseout = seen.find((l) => l.stage === 'closed' && l.root !== now.root);
    if (otherCloseout !== undefined) return otherCloseout;
  }
  for (const l of seen) {
    if (l.version === 1) continue; // recorded before adjudications and amendments were
    const was = l.adjudication;
    const is = now.adjudication;
    if (was !== null && (is === null || is.n < was.n || (is.n === was.n && is.sha256 !== was.sha256))) return l;
    if (now.amendments < l.amendments) return l;
  }
  return null;
}

const short = (root: string): string => `${root.slice(0, 12)}…`;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Stage, roots and (when recorded) the latest adjudication and the amendment count. */
function describeState(
  s: Pick<SeenState, 'stage' | 'root' | 'sealRoot'> & Partial<Pick<SeenState, 'adjudication' | 'amendments'>>,
): string {
  const more =
    s.amendments === undefined || s.adjudication === undefined
      ? ''
      : `, ${s.adjudication === null ? 'no adjudication' : `adjudication ${String(s.adjudication.n).padStart(3, '0')} ${short(s.adjudication.sha256)}`}, ${plural(s.amendments, 'amendment')}`;
  return `stage '${s.stage}' (root ${short(s.root)}, seal root ${short(s.sealRoot)}${more})`;
}

/** The one line of a refusal: what was seen before, when, by what, and what the unit shows now. */
export function describeRollback(seen: SeenLine, now: SeenState): string {
  const was = describeState(seen);
  const is = describeState(now);
  return `unit ${now.unitId} was rolled back: this machine saw it at ${was} on ${seen.at} (${seen.event}), and it now shows ${is}`;
}

/** The refusal of a rollback (exit code: src/cli/exit-codes.ts). */
export function rollbackError(seen: SeenLine, now: SeenState, dir = seenDir()): ImepError {
  return new ImepError('E_ROLLBACK', describeRollback(seen, now), {
    file: seenFile(now, dir),
    hint: "restore the unit from an intact copy; if the rollback is intended, run `imep campaign verify UNIT --accept-rollback` (recorded in this machine's store), or move the store file named here aside to forget the unit",
  });
}

/**
 * Records what a command saw (appended unless the last counting line already says the same), after refusing a
 * rollback — unless `acceptRollback`, which records the new state as an accepted rollback (the new baseline).
 * Returns the line the refusal would have named when a rollback was accepted, else null.
 */
export async function rememberSeen(
  now: SeenState,
  how: { event: Exclude<SeenEvent, 'accept-rollback'>; dir: string; acceptRollback?: boolean; at?: Date },
  storeDir = seenDir(),
): Promise<SeenLine | null> {
  const lines = await readSeen(now, storeDir);
  const rolled = rollbackOf(lines, now);
  if (rolled !== null && how.acceptRollback !== true) throw rollbackError(rolled, now, storeDir);
  const last = current(lines).at(-1);
  const same =
    rolled === null &&
    last !== undefined &&
    last.stage === now.stage &&
    last.root === now.root &&
    last.sealRoot === now.sealRoot &&
    last.version === SEEN_VERSION &&
    sameAdjudication(last.adjudication, now.adjudication) &&
    last.amendments === now.amendments;
  if (same) return null;
  const line: SeenLine = {
    format: SEEN_FORMAT,
    version: SEEN_VERSION,
    unitId: now.unitId,
    precommitSha256: now.precommitSha256,
    stage: now.stage,
    root: now.root,
    sealRoot: now.sealRoot,
    adjudication: now.adjudication,
    amendments: now.amendments,
    at: (how.at ?? new Date()).toISOString(),
    event: rolled !== null ? 'accept-rollback' : how.event,
    dir: how.dir.slice(0, 4096),
  };
  const file = seenFile(now, storeDir);
  const hint = `this machine records the units it saw in ${storeDir}: make it writable, or set ${SEEN_DIR_ENV} to a writable folder`;
  await mkdir(storeDir, { recursive: true, mode: 0o700 }).catch((e: unknown) => {
    throw ioError(storeDir, 'create', e, hint);
  });
  const text = [...lines, line].map((l) => JSON.stringify(l)).join('\n') + '\n';
  await writeFileAtomic(file, text, 0o600).catch((e: unknown) => {
    throw isImepError(e) ? new ImepError(e.code, e.message, { file, hint, cause: e }) : ioError(file, 'write', e, hint);
  });
  return rolled;
}
