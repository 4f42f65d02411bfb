import { adjudicate, crossCheck, type AdjudicateInput, type CrossCheckInput } from './transitions/post-seal-write.js';
import { amend, type AmendInput } from './transitions/amend.js';
import type { Amendment } from './records/amendment.js';
import { closeout, type CloseoutInput } from './transitions/closeout-write.js';
import { createUnitDir, type CreateUnitInput } from './transitions/create-unit.js';
import {
  completeRun,
  failRun,
  resumeRun,
  startRun,
  type FailRunInput,
  type FormalRun,
  type ResumeReport,
  type RunOptions,
} from './transitions/formal-run.js';
import type { UnitState } from './lifecycle.js';
import { loadFrozenProtocol, precommit, type FrozenProtocol, type PrecommitInput } from './transitions/precommit.js';
import type { SeqLine } from './io/row-writer.js';
import { seal, type SealOptions } from './transitions/seal.js';
import { startSmallRun, type SmallRun, type SmallRunOptions } from './small-run.js';
import { unitStatus, type UnitStatusSummary } from './status.js';
import { readUnitState } from './unit-state.js';
import { verifyUnit, type VerifyOptions, type VerifyResult } from './verify/verify.js';

/**
 * Typed handles on an evidence unit, one per lifecycle state, so that illegal operations are not
 * representable: only an `OpenUnit` (a running formal run) has `appendRow`; a `SealedUnit` has no
 * append method at all; a `ClosedUnit` can only be read and verified. `loadUnit` returns the
 * handle for the state found on disk. Each method still re-checks the state on disk (another
 * process may have moved the unit on), refusing with E_OUT_OF_ORDER / E_UNIT_SEALED.
 */

interface UnitFace<S extends UnitState> {
  readonly dir: string;
  readonly id: string;
  readonly state: S;
  status(): Promise<UnitStatusSummary>;
}

interface Amendable {
  amend(input: AmendInput): Promise<Amendment>;
}

interface Verifiable {
  verify(opts?: VerifyOptions): Promise<VerifyResult>;
}

export interface CreatedUnit extends UnitFace<'created'> {
  precommit(input: PrecommitInput): Promise<PrecommittedUnit>;
}

export interface PrecommittedUnit extends UnitFace<'precommitted'>, Amendable {
  protocol(): Promise<FrozenProtocol>;
  probe(opts?: SmallRunOptions): Promise<SmallRun>;
  smoke(opts?: SmallRunOptions): Promise<SmallRun>;
  startRun(opts?: RunOptions): Promise<OpenUnit>;
}

/** A unit whose formal run was interrupted (or is running elsewhere): it must be resumed to append. */
export interface RunningUnit extends UnitFace<'running'>, Amendable {
  protocol(): Promise<FrozenProtocol>;
  resume(opts?: Omit<RunOptions, 'runId'>): Promise<{ unit: OpenUnit; report: ResumeReport }>;
  fail(input: FailRunInput): Promise<PrecommittedUnit>;
}

/** The only handle that can append rows. */
export interface OpenUnit extends UnitFace<'running'>, Amendable {
  readonly runId: string;
  readonly nextSeq: number;
  protocol(): Promise<FrozenProtocol>;
  appendRow(row: SeqLine): Promise<void>;
  appendTiming(timing: SeqLine): Promise<void>;
  appendTrace(stream: string, entry: SeqLine): Promise<void>;
  complete(opts?: { readonly now?: () => Date }): Promise<RunCompleteUnit>;
  fail(input: FailRunInput): Promise<PrecommittedUnit>;
}

export interface RunCompleteUnit extends UnitFace<'run-complete'>, Amendable {
  seal(opts?: SealOptions): Promise<SealedUnit>;
  fail(input: FailRunInput): Promise<PrecommittedUnit>;
}

export interface SealedUnit extends UnitFace<'sealed'>, Amendable, Verifiable {
  adjudicate(input: AdjudicateInput): Promise<AdjudicatedUnit>;
}

export interface AdjudicatedUnit extends UnitFace<'adjudicated'>, Amendable, Verifiable {
  /** Re-adjudication of the same sealed data (supersedes, never replaces). */
  adjudicate(input: AdjudicateInput): Promise<AdjudicatedUnit>;
  crossCheck(input: CrossCheckInput): Promise<CrossCheckedUnit>;
}

export interface CrossCheckedUnit extends UnitFace<'cross-checked'>, Amendable, Verifiable {
  closeout(input?: CloseoutInput): Promise<ClosedUnit>;
}

export interface ClosedUnit extends UnitFace<'closed'>, Verifiable {}

export type Unit =
  | CreatedUnit
  | PrecommittedUnit
  | RunningUnit
  | RunCompleteUnit
  | SealedUnit
  | AdjudicatedUnit
  | CrossCheckedUnit
  | ClosedUnit;

function face<S extends UnitState>(dir: string, id: string, state: S): UnitFace<S> {
  return { dir, id, state, status: () => unitStatus(dir) };
}

function precommitted(dir: string, id: string): PrecommittedUnit {
  return {
    ...face(dir, id, 'precommitted'),
    amend: (i) => amend(dir, i),
    protocol: () => loadFrozenProtocol(dir),
    probe: (o) => startSmallRun(dir, 'probe', o),
    smoke: (o) => startSmallRun(dir, 'smoke', o),
    startRun: async (o) => openUnit(dir, id, await startRun(dir, o)),
  };
}

function failer(dir: string, id: string): (input: FailRunInput) => Promise<PrecommittedUnit> {
  return async (input) => {
    await failRun(dir, input);
    return precommitted(dir, id);
  };
}

function openUnit(dir: string, id: string, run: FormalRun): OpenUnit {
  return {
    ...face(dir, id, 'running'),
    runId: run.runId,
    get nextSeq() {
      return run.nextSeq;
    },
    amend: (i) => amend(dir, i),
    protocol: () => loadFrozenProtocol(dir),
    appendRow: (row) => run.appendRow(row),
    appendTiming: (t) => run.appendTiming(t),
    appendTrace: (stream, e) => run.appendTrace(stream, e),
    complete: async (o) => {
      await completeRun(dir, o);
      return runComplete(dir, id);
    },
    fail: failer(dir, id),
  };
}

function runComplete(dir: string, id: string): RunCompleteUnit {
  return {
    ...face(dir, id, 'run-complete'),
    amend: (i) => amend(dir, i),
    seal: async (o) => {
      await seal(dir, o);
      return sealedFamily(dir, id, 'sealed');
    },
    fail: failer(dir, id),
  };
}

function sealedFamily(dir: string, id: string, state: 'sealed'): SealedUnit;
function sealedFamily(dir: string, id: string, state: 'adjudicated'): AdjudicatedUnit;
function sealedFamily(dir: string, id: string, state: 'cross-checked'): CrossCheckedUnit;
function sealedFamily(dir: string, id: string, state: 'closed'): ClosedUnit;
function sealedFamily(dir: string, id: string, state: 'sealed' | 'adjudicated' | 'cross-checked' | 'closed'): Unit {
  const verify = (o?: VerifyOptions): Promise<VerifyResult> => verifyUnit(dir, o);
  const adj = async (i: AdjudicateInput): Promise<AdjudicatedUnit> => {
    await adjudicate(dir, i);
    return sealedFamily(dir, id, 'adjudicated');
  };
  switch (state) {
    case 'sealed':
      return { ...face(dir, id, state), verify, amend: (i) => amend(dir, i), adjudicate: adj };
    case 'adjudicated':
      return {
        ...face(dir, id, state),
        verify,
        amend: (i) => amend(dir, i),
        adjudicate: adj,
        crossCheck: async (i) => {
          await crossCheck(dir, i);
          return sealedFamily(dir, id, 'cross-checked');
        },
      };
    case 'cross-checked':
      return {
        ...face(dir, id, state),
        verify,
        amend: (i) => amend(dir, i),
        closeout: async (i) => {
          await closeout(dir, i);
          return sealedFamily(dir, id, 'closed');
        },
      };
    case 'closed':
      return { ...face(dir, id, state), verify };
  }
}

/** Creates a new unit in an empty (or absent) directory. */
export async function createUnit(dir: string, input: CreateUnitInput): Promise<CreatedUnit> {
  const header = await createUnitDir(dir, input);
  return {
    ...face(dir, header.id, 'created'),
    precommit: async (i) => {
      await precommit(dir, i);
      return precommitted(dir, header.id);
    },
  };
}

/** The handle for the unit's current state on disk. */
export async function loadUnit(dir: string): Promise<Unit> {
  const { header, state } = await readUnitState(dir);
  const id = header.id;
  switch (state) {
    case 'created':
      return {
        ...face(dir, id, 'created'),
        precommit: async (i) => {
          await precommit(dir, i);
          return precommitted(dir, id);
        },
      };
    case 'precommitted':
      return precommitted(dir, id);
    case 'running':
      return {
        ...face(dir, id, 'running'),
        amend: (i) => amend(dir, i),
        protocol: () => loadFrozenProtocol(dir),
        resume: async (o) => {
          const { run, report } = await resumeRun(dir, o);
          return { unit: openUnit(dir, id, run), report };
        },
        fail: failer(dir, id),
      };
    case 'run-complete':
      return runComplete(dir, id);
    case 'sealed':
      return sealedFamily(dir, id, 'sealed');
    case 'adjudicated':
      return sealedFamily(dir, id, 'adjudicated');
    case 'cross-checked':
      return sealedFamily(dir, id, 'cross-checked');
    case 'closed':
      return sealedFamily(dir, id, 'closed');
  }
}
