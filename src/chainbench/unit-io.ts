/**
 * ChainBench evidence units, on src/evidence's unit machinery (create → precommit → formal run → seal;
 * verify on read). Decisions (decision-unit.ts) and replays (replay-unit.ts) are each one unit:
 *
 *   protocol.json  what is frozen before any row exists: for decisions the whole chain manifest, its
 *                  hash, the conditions, seed and fallback; for a replay the decisions unit's seal root,
 *                  the executor and the planned executions' conditions — precommit.json records their
 *                  SHA-256 with the code identity (git commit, dirty flag, package versions), signed
 *   plan.json      the per-chain plan; plannedRows = one row per chain (a chain is ChainBench's unit)
 *   rows/rows.jsonl  one durable canonical-JSON row per chain, in manifest order
 *   seal.json      SHA-256 manifest of every file + Merkle root, signed (src/signing); files read-only
 *
 * A unit is built in a hidden sibling folder and renamed into place only once sealed, so a refusal or a
 * crash never leaves a half-made unit under the real name. `imep campaign verify DIR` verifies one like
 * any campaign unit. `openSealedUnit` refuses a plain file, an unsealed unit, another kind of unit and
 * a tampered one (E_UNIT_TAMPERED naming the first bad file) before anything is read from it.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { z } from 'zod';
import { ImepError, canonicalHash, type JsonValue } from '../core/index.js';
import {
  createUnit,
  detectCodeIdentity,
  detectPackageVersions,
  loadFrozenProtocol,
  readRows,
  isSealedState,
  readUnitState,
  UnitIdSchema,
  unitPaths,
  type Operator,
  assertUnitIntact,
  type VerifyOk,
  fsyncDir,
  readSeal,
  type SealRecord,
} from '../evidence/index.js';
import { packageRoot } from '../bridges/supervisor.js';
import type { PrecommitRecord } from '../evidence/index.js';

export interface BuildUnitInput {
  /** The unit folder to create (must not exist, or be empty). */
  readonly dir: string;
  /** Unit id (default: the folder's name). */
  readonly id?: string;
  /** What is frozen (must carry a `kind`). */
  readonly protocol: { readonly kind: string } & Readonly<Record<string, unknown>>;
  readonly plan: unknown;
  readonly plannedRows: number;
  readonly operator?: Operator;
  readonly now?: () => Date;
  /** Produces the rows in order; `append` makes each one durable before resolving. */
  readonly produce: (append: (row: Readonly<Record<string, unknown>>) => Promise<void>) => Promise<void>;
}

export interface BuiltUnit {
  readonly dir: string;
  readonly id: string;
  readonly seal: SealRecord;
  readonly rows: number;
}

/** Packages whose versions a ChainBench unit records. */
const RECORDED_PACKAGES = ['commander', 'msgpackr', 'zeromq', 'zod'];

async function isNonEmpty(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length > 0;
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return false;
    if ((e as { code?: string }).code === 'ENOTDIR') return true;
    throw new ImepError('E_IO', `cannot list: ${e instanceof Error ? e.message : String(e)}`, { file: dir, cause: e });
  }
}

async function removeTree(dir: string): Promise<void> {
  const walk = async (d: string): Promise<void> => {
    await chmod(d, 0o755).catch(() => undefined);
    let names: Dirent[] = [];
    try {
      names = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const n of names) if (n.isDirectory()) await walk(join(d, n.name));
  };
  await walk(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Creates, precommits, runs and seals a unit; renames it into place last. */
export async function buildSealedUnit(input: BuildUnitInput): Promise<BuiltUnit> {
  const dir = resolve(input.dir);
  const id = input.id ?? basename(dir);
  const idOk = UnitIdSchema.safeParse(id);
  if (!idOk.success) {
    throw new ImepError('E_USAGE', `the unit id '${id}' is not usable: ${idOk.error.issues[0]?.message ?? 'invalid'}`, {
      file: dir,
      field: '--out',
      hint: 'name the unit folder with letters, digits, ".", "_" or "-"',
    });
  }
  if (await isNonEmpty(dir)) {
    throw new ImepError(
      'E_USAGE',
      'exists and is not empty; an evidence unit needs a fresh folder (units are never overwritten)',
      { file: dir, field: '--out', hint: 'choose a new --out path' },
    );
  }
  const parent = dirname(dir);
  await mkdir(parent, { recursive: true }).catch((e: unknown) => {
    throw new ImepError('E_IO', `cannot create: ${e instanceof Error ? e.message : String(e)}`, {
      file: parent,
      cause: e,
    });
  });
  const tmp = join(parent, `.${basename(dir)}.tmp-${process.pid}-${randomBytes(3).toString('hex')}`);
  const root = packageRoot();
  const common = { ...(input.operator ? { operator: input.operator } : {}), ...(input.now ? { now: input.now } : {}) };
  try {
    const created = await createUnit(tmp, { id, ...common });
    const precommitted = await created.precommit({
      protocol: input.protocol,
      plan: input.plan,
      planHash: canonicalHash(input.plan),
      plannedRows: input.plannedRows,
      code: await detectCodeIdentity(root),
      checkpointHashes: {},
      seeds: [],
      packageVersions: await detectPackageVersions(root, RECORDED_PACKAGES),
      ...common,
    });
    const open = await precommitted.startRun(common);
    let seq = 0;
    await input.produce(async (row) => {
      if ('seq' in row) throw new ImepError('E_INTERNAL', 'a ChainBench row must not carry its own seq');
      await open.appendRow({ seq, ...row });
      seq++;
    });
    const complete = await open.complete(input.now ? { now: input.now } : {});
    await complete.seal(common);
    await rename(tmp, dir);
    await fsyncDir(parent);
  } catch (e) {
    await removeTree(tmp).catch(() => undefined);
    throw e;
  }
  const sealed = await openSealedUnit(dir, input.protocol.kind, 'unit');
  return { dir, id, seal: sealed.seal, rows: sealed.rows.length };
}

export interface SealedUnitRead {
  readonly dir: string;
  readonly unitId: string;
  readonly protocol: JsonValue;
  readonly protocolHash: string;
  readonly precommit: PrecommitRecord;
  readonly seal: SealRecord;
  readonly verified: VerifyOk;
  readonly rows: readonly Readonly<Record<string, unknown>>[];
}

/**
 * Opens a sealed ChainBench unit of the given protocol kind: verified first (every file re-hashed,
 * signatures checked), then its frozen protocol and rows read. `what` names the unit in messages
 * (e.g. '--decisions').
 */
export async function openSealedUnit(dirArg: string, kind: string, what: string): Promise<SealedUnitRead> {
  const dir = resolve(dirArg);
  const st = await stat(dir).catch((e: unknown) => {
    throw new ImepError('E_IO', `no such evidence unit (${(e as { code?: string }).code ?? String(e)})`, {
      file: dir,
      field: what,
    });
  });
  if (!st.isDirectory()) {
    throw new ImepError('E_USAGE', 'is a file, not a sealed evidence unit folder', {
      file: dir,
      field: what,
      hint: '`imep chainbench decide MANIFEST --out DIR` writes decisions as a sealed unit; pass that folder',
    });
  }
  const snap = await readUnitState(dir);
  if (!isSealedState(snap.state)) {
    throw new ImepError(
      'E_OUT_OF_ORDER',
      `unit ${snap.header.id} is ${snap.state}, not sealed; only sealed units are read`,
      {
        file: dir,
        field: what,
        hint: 'a ChainBench unit is sealed when its command finishes; run the command again into a fresh folder',
      },
    );
  }
  const verified = await assertUnitIntact(dir);
  const frozen = await loadFrozenProtocol(dir);
  const found = (frozen.protocol as { kind?: unknown } | null)?.kind;
  if (found !== kind) {
    throw new ImepError('E_USAGE', `is a unit of kind ${JSON.stringify(found ?? null)}, not ${kind}`, {
      file: join(dir, 'protocol.json'),
      field: what,
    });
  }
  const { rows, torn } = await readRows(unitPaths(dir).rows);
  if (torn !== null)
    throw new ImepError('E_UNIT_TAMPERED', 'rows.jsonl ends in a torn line', { file: unitPaths(dir).rows });
  return {
    dir,
    unitId: verified.unitId,
    protocol: frozen.protocol,
    protocolHash: frozen.protocolHash,
    precommit: frozen.precommit,
    seal: await readSeal(dir),
    verified,
    rows,
  };
}

/** Parses a unit's row with a schema; E_UNIT_TAMPERED naming the row and field when it does not fit. */
export function parseRow<S extends z.ZodType>(schema: S, row: unknown, file: string, seq: number): z.output<S> {
  const r = schema.safeParse(row);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new ImepError('E_UNIT_TAMPERED', `row ${seq}: ${issue?.message ?? 'invalid'}`, {
    file,
    field: (issue?.path ?? []).map(String).join('.') || '(row)',
  });
}
