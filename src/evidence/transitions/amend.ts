import { z } from 'zod';
import { ImepError, sha256Hex, canonicalJson } from '../../core/index.js';
import { withOwnerWrite } from '../io/atomic-write.js';
import {
  appendJsonLine,
  parseJsonLines,
  readJsonLines,
  repairTornTail,
  type JsonLinesRead,
} from '../io/durable-append.js';
import { hasFormalData } from './formal-run.js';
import { isSealedState, UNIT_STATES, type UnitState } from '../lifecycle.js';
import { currentOperator } from '../operator.js';
import { listSmallRuns } from '../small-run.js';
import { OperatorSchema, Sha256HexSchema, UNIT_FILES, unitPaths, type Operator } from '../unit-layout.js';
import { readVerified, type VerifiedUnit } from '../io/verified-read.js';
import { AmendmentSchema, type Amendment, type AmendmentClass } from '../records/amendment.js';
import { requireAction } from '../unit-state.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareSigner, signRecord, SignatureBlockSchema } from '../../signing/index.js';
import { amendmentPrevLink } from '../verify/amendment-signatures.js';

/**
 * The amendment log (amendments.jsonl): append-only and hash-chained — each line carries the
 * SHA-256 of the previous line's bytes, so the log cannot be edited or reordered without breaking
 * the chain. Amendments NEVER change protocol.json; they are listed in every status and report.
 *
 * The classification is derived, never chosen by the user, from the unit at the time:
 *   'after-formal-data' — the unit holds formal rows (current or in a failed run) or is sealed;
 *   'after-smoke'       — no formal data yet, but at least one probe or smoke run exists;
 *   'before-data'       — neither.
 * Amendments are accepted from 'precommitted' until 'cross-checked' (before precommit, edit the
 * protocol; after closeout, nothing can be added). The seal binds the log as it stood (prefix
 * hash); later amendments extend the chain and are bound by the closeout. A post-seal amendment is
 * signed by its author's key (unless IMEP_SIGNING=off), chained to seal.json (the first post-seal line)
 * or to the line before it, so it cannot be forged or moved without `imep campaign verify` refusing it.
 */

export interface AmendInput {
  readonly text: string;
  /** Protocol fields the amendment affects (e.g. `gates.shamValidity.denominator`). */
  readonly affects: readonly string[];
  readonly author?: Operator;
  readonly now?: () => Date;
}

export interface AmendmentLog {
  readonly amendments: Amendment[];
  /** SHA-256 of the last line's bytes (null for an empty log): the next line's prevSha256. */
  readonly headSha256: string | null;
  readonly bytes: number;
}

/** Reads and checks the amendment log (schema and hash chain); a torn tail is ignored (not committed). */
export async function readAmendments(dir: string): Promise<AmendmentLog> {
  const file = unitPaths(dir).amendments;
  const read = await readJsonLines(file);
  return checkAmendmentLines(read, file);
}

/**
 * Parses and checks amendment-log bytes already in memory (`file` names them in errors) — the same checks as
 * `readAmendments`, on a buffer read once and checked against a verified hash.
 */
export function parseAmendments(bytes: Buffer, file: string): AmendmentLog {
  return checkAmendmentLines(parseJsonLines(bytes, file), file);
}

/**
 * The amendment log of a verified unit, read ONCE against the hash the verification saw for amendments.jsonl
 * (its sealed prefix is bound by the seal, later lines by the hash chain and, once closed, by the closeout) and
 * parsed from those bytes; E_UNIT_TAMPERED naming the file when they differ. A unit that verified without the
 * file has an empty log (a file appearing after the verification is not read).
 */
export async function readVerifiedAmendments(unit: VerifiedUnit): Promise<AmendmentLog> {
  const expected = unit.hashes.get(UNIT_FILES.amendments);
  if (expected === undefined) return { amendments: [], headSha256: null, bytes: 0 };
  const bytes = await readVerified(unit.dir, UNIT_FILES.amendments, expected);
  return parseAmendments(bytes, join(unit.dir, UNIT_FILES.amendments));
}

function checkAmendmentLines(read: JsonLinesRead, file: string): AmendmentLog {
  const amendments: Amendment[] = [];
  let prev: string | null = null;
  read.lines.forEach((line, i) => {
    const parsed = AmendmentSchema.safeParse(line);
    const bad = (why: string): ImepError =>
      new ImepError('E_UNIT_TAMPERED', `amendment line ${i + 1} ${why}`, {
        file,
        hint: 'the amendment log is append-only; run `imep campaign verify`',
      });
    if (!parsed.success) throw bad(`is not an amendment: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    if (parsed.data.prevSha256 !== prev)
      throw bad('breaks the hash chain (an earlier line was changed, removed or reordered)');
    if (parsed.data.id !== `A${i + 1}`) throw bad(`has id ${parsed.data.id}; expected A${i + 1}`);
    amendments.push(parsed.data);
    prev = sha256Hex(canonicalJson(line));
  });
  return { amendments, headSha256: prev, bytes: read.completeBytes };
}

export function classifyAmendment(state: UnitState, formalData: boolean, smallRuns: number): AmendmentClass {
  if (formalData || isSealedState(state)) return 'after-formal-data';
  return smallRuns > 0 ? 'after-smoke' : 'before-data';
}

export async function amend(dir: string, input: AmendInput): Promise<Amendment> {
  const snap = await requireAction(dir, 'amend');
  if (input.text.trim() === '') throw new ImepError('E_USAGE', 'an amendment needs a text', { field: 'text' });
  if (input.affects.length === 0 || input.affects.some((f) => f.trim() === '')) {
    throw new ImepError('E_USAGE', 'an amendment must name the protocol fields it affects', { field: 'affects' });
  }
  const file = unitPaths(dir).amendments;
  const smallRuns = (await listSmallRuns(dir, 'probe')).length + (await listSmallRuns(dir, 'smoke')).length;
  const classification = classifyAmendment(snap.state, await hasFormalData(dir), smallRuns);
  const sealed = isSealedState(snap.state);
  const author = input.author ?? currentOperator();
  if (sealed) await prepareSigner(author.id);
  return withOwnerWrite(sealed ? [dir, file] : [], async () => {
    await repairTornTail(file);
    const log = await readAmendments(dir);
    const body: Amendment = {
      id: `A${log.amendments.length + 1}`,
      at: (input.now ?? (() => new Date()))().toISOString(),
      author,
      text: input.text.trim(),
      classification,
      stateAtAmendment: snap.state,
      affects: [...input.affects].map((f) => f.trim()),
      prevSha256: log.headSha256,
    };
    let amendment = body;
    if (sealed) {
      const sealBytes = await readFile(unitPaths(dir).seal);
      const sealedCount = (JSON.parse(sealBytes.toString('utf8')) as { amendments: { count: number } }).amendments
        .count;
      const prev = amendmentPrevLink(
        sha256Hex(sealBytes),
        log.amendments.length === sealedCount,
        `A${log.amendments.length}`,
        log.headSha256,
      );
      amendment = await signRecord(body, { signer: author.id, prev });
    }
    await appendJsonLine(file, AmendmentSchema.parse(amendment));
    return amendment;
  });
}
