import type { ReadContext } from './record.js';
import { arrayAt, checkHeader, objectAt, packSnapshot, unpackSnapshot } from './tensor-codec.js';
import { assertNonNegativeInteger, assertString, bankError } from './validate.js';

/**
 * Text memory for agentic chains: an append-only log of fact records and revocations (tombstones),
 * with a memory clock.
 *
 *  - Record ids are unique. Appending a record whose id exists with identical content (chainId,
 *    episode, fact, revision, expiresAt — writtenAt is not content) is an idempotent replay: no new
 *    log entry, status 'replayed'. Different content under an existing id is refused (E_BANK_INVALID).
 *  - `revoke(id)` appends a tombstone; the target is invalid from then on, permanently: a later
 *    (re-)append of that id does not revive it. Revoking an id twice is a replay (no new entry).
 *    A tombstone may precede its target.
 *  - A record is valid at memory time `now()` when it is not revoked and (expiresAt is absent or
 *    now < expiresAt). `writtenAt` is the clock at append; `advanceClock` moves the clock forward.
 *  - `resolve(key)` returns the latest valid record whose fact holds `key`: highest revision, then
 *    latest writtenAt, then latest log position. Reads go through the text read hook.
 */

export interface TextRecordInput {
  readonly id: string;
  readonly chainId: string;
  readonly episode: string;
  readonly fact: Readonly<Record<string, string>>;
  readonly revision: number;
  readonly expiresAt?: number;
}

export interface TextRecord extends TextRecordInput {
  /** Memory clock at the first append of this id. */
  readonly writtenAt: number;
}

export interface TextRevocation {
  readonly targetId: string;
  readonly writtenAt: number;
}

export type TextLogEntry =
  | { readonly kind: 'record'; readonly record: TextRecord }
  | { readonly kind: 'revoke'; readonly revocation: TextRevocation };

export interface AppendOutcome {
  readonly status: 'appended' | 'replayed';
  readonly record: TextRecord;
}

export interface TextReadOptions {
  /** Only records of this chain. */
  chainId?: string;
  /** Episode reported in the ReadContext (does not filter). */
  episode?: string;
  decisionStep?: boolean;
}

/** The read hook of text memory: receives the valid candidate records of a read, returns what the reader gets. */
export type TextReadHook = (records: readonly TextRecord[], ctx: ReadContext) => readonly TextRecord[];

export const identityTextReadHook: TextReadHook = (records) => records;

const FORMAT = 'imep-text-memory';
const VERSION = 1;

export class TextMemory {
  readonly bank: string;
  private clockValue = 0;
  private reads = 0;
  private readonly entries: TextLogEntry[] = [];
  private readonly byId = new Map<string, { record: TextRecord; position: number }>();
  private readonly revoked = new Set<string>();
  private hook: TextReadHook = identityTextReadHook;

  constructor(opts: { bank?: string } = {}) {
    this.bank = opts.bank ?? 'text';
    assertString(this.bank, 'bank');
  }

  setReadHook(hook: TextReadHook): void {
    this.hook = hook;
  }

  now(): number {
    return this.clockValue;
  }

  /** Moves the memory clock forward by `by` (a non-negative integer); returns the new time. */
  advanceClock(by = 1): number {
    assertNonNegativeInteger(by, 'by');
    // kept a safe integer, so that every state the clock reaches snapshots and restores exactly
    if (by > Number.MAX_SAFE_INTEGER - this.clockValue)
      throw bankError(`by: the clock ${this.clockValue} + ${by} would pass ${Number.MAX_SAFE_INTEGER}`, 'by');
    this.clockValue += by;
    return this.clockValue;
  }

  append(input: TextRecordInput): AppendOutcome {
    const record = normaliseRecord(input, this.clockValue, 'record');
    const existing = this.byId.get(record.id);
    if (existing !== undefined) {
      const diff = contentDifference(existing.record, record);
      if (diff !== null) {
        throw bankError(
          `append: id ${record.id} already holds different content (${diff}); use a new id or a new revision`,
          `record.${diff}`,
        );
      }
      return { status: 'replayed', record: existing.record };
    }
    this.push({ kind: 'record', record });
    return { status: 'appended', record };
  }

  revoke(targetId: string): { readonly status: 'revoked' | 'replayed' } {
    assertString(targetId, 'targetId');
    if (this.revoked.has(targetId)) return { status: 'replayed' };
    this.push({ kind: 'revoke', revocation: Object.freeze({ targetId, writtenAt: this.clockValue }) });
    return { status: 'revoked' };
  }

  /** The record stored under `id` (valid or not). */
  get(id: string): TextRecord | undefined {
    return this.byId.get(id)?.record;
  }

  isRevoked(id: string): boolean {
    return this.revoked.has(id);
  }

  /** Not revoked and not expired at the current memory time. */
  isValid(id: string): boolean {
    const r = this.byId.get(id)?.record;
    return r !== undefined && this.valid(r);
  }

  log(): readonly TextLogEntry[] {
    return [...this.entries];
  }

  /** The latest valid record holding fact `key` (see the rule above), after the read hook. */
  resolve(key: string, opts: TextReadOptions = {}): TextRecord | undefined {
    assertString(key, 'key');
    const candidates = this.validRecords(opts.chainId).filter((c) => Object.hasOwn(c.record.fact, key));
    let best: { record: TextRecord; position: number } | undefined;
    for (const c of candidates) if (best === undefined || later(c, best)) best = c;
    const out = this.read(best === undefined ? [] : [best.record], candidates.length, opts);
    return out[0];
  }

  /** Every valid record (log order), after the read hook. */
  readAll(opts: TextReadOptions = {}): readonly TextRecord[] {
    const candidates = this.validRecords(opts.chainId);
    return this.read(
      candidates.map((c) => c.record),
      candidates.length,
      opts,
    );
  }

  snapshot(): Uint8Array {
    return packSnapshot({
      format: FORMAT,
      version: VERSION,
      bank: this.bank,
      clock: this.clockValue,
      reads: this.reads,
      log: this.entries.map((e) =>
        e.kind === 'record'
          ? encodeRecord(e.record)
          : { kind: 'revoke', targetId: e.revocation.targetId, writtenAt: e.revocation.writtenAt },
      ),
    });
  }

  static restore(bytes: Uint8Array): TextMemory {
    const root = objectAt(unpackSnapshot(bytes, 'TextMemory.restore'), 'snapshot');
    checkHeader(root, FORMAT, VERSION);
    const bank = root['bank'];
    assertString(bank, 'bank');
    const memory = new TextMemory({ bank });
    const clock = root['clock'];
    const reads = root['reads'];
    assertNonNegativeInteger(clock, 'clock');
    assertNonNegativeInteger(reads, 'reads');
    arrayAt(root['log'], 'log').forEach((v, i) => {
      const at = `log[${i}]`;
      const o = objectAt(v, at);
      const writtenAt = o['writtenAt'];
      assertNonNegativeInteger(writtenAt, `${at}.writtenAt`);
      if (writtenAt > clock)
        throw bankError(`${at}.writtenAt: ${writtenAt} is after the clock ${clock}`, `${at}.writtenAt`);
      if (o['kind'] === 'revoke') {
        const targetId = o['targetId'];
        assertString(targetId, `${at}.targetId`);
        if (memory.revoked.has(targetId)) throw bankError(`${at}: ${targetId} revoked twice`, at);
        memory.push({ kind: 'revoke', revocation: Object.freeze({ targetId, writtenAt }) });
      } else if (o['kind'] === 'record') {
        const factEntries = arrayAt(o['fact'], `${at}.fact`);
        const fact: Record<string, string> = {};
        factEntries.forEach((p, j) => {
          const pair = arrayAt(p, `${at}.fact[${j}]`);
          if (pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string')
            throw bankError(`${at}.fact[${j}]: expected [key, value]`, `${at}.fact`);
          setFact(fact, pair[0], pair[1]);
        });
        const input = { ...o, fact } as unknown as TextRecordInput;
        const record = normaliseRecord(input, writtenAt, at);
        if (memory.byId.has(record.id)) throw bankError(`${at}: id ${record.id} appears twice`, `${at}.id`);
        memory.push({ kind: 'record', record });
      } else {
        throw bankError(`${at}.kind: unknown log entry kind ${String(o['kind'])}`, `${at}.kind`);
      }
    });
    memory.clockValue = clock;
    memory.reads = reads;
    return memory;
  }

  private push(entry: TextLogEntry): void {
    const position = this.entries.length;
    this.entries.push(Object.freeze(entry));
    if (entry.kind === 'record') this.byId.set(entry.record.id, { record: entry.record, position });
    else this.revoked.add(entry.revocation.targetId);
  }

  private valid(r: TextRecord): boolean {
    return !this.revoked.has(r.id) && (r.expiresAt === undefined || this.clockValue < r.expiresAt);
  }

  private validRecords(chainId: string | undefined): { record: TextRecord; position: number }[] {
    const out: { record: TextRecord; position: number }[] = [];
    for (const c of this.byId.values()) {
      if ((chainId === undefined || c.record.chainId === chainId) && this.valid(c.record)) out.push(c);
    }
    return out.sort((a, b) => a.position - b.position);
  }

  private read(records: readonly TextRecord[], candidateCount: number, opts: TextReadOptions): readonly TextRecord[] {
    this.reads += 1;
    const ctx: ReadContext = Object.freeze({
      bank: this.bank,
      scope: opts.chainId ?? '',
      episode: opts.episode ?? '',
      queryIndex: this.reads,
      decisionStep: opts.decisionStep ?? true,
      candidateCount,
    });
    return this.hook(records, ctx);
  }
}

function later(a: { record: TextRecord; position: number }, b: { record: TextRecord; position: number }): boolean {
  if (a.record.revision !== b.record.revision) return a.record.revision > b.record.revision;
  if (a.record.writtenAt !== b.record.writtenAt) return a.record.writtenAt > b.record.writtenAt;
  return a.position > b.position;
}

/** fact[key] = value as an own data property, whatever the key (an assignment to "__proto__" would set the prototype and drop the key). */
function setFact(fact: Record<string, string>, key: string, value: string): void {
  Object.defineProperty(fact, key, { value, enumerable: true, writable: true, configurable: true });
}

function normaliseRecord(input: TextRecordInput, writtenAt: number, field: string): TextRecord {
  if (typeof input !== 'object' || input === null) throw bankError(`${field}: not a record`, field);
  assertString(input.id, `${field}.id`);
  if (input.id === '') throw bankError(`${field}.id: must not be empty`, `${field}.id`);
  assertString(input.chainId, `${field}.chainId`);
  assertString(input.episode, `${field}.episode`);
  assertNonNegativeInteger(input.revision, `${field}.revision`);
  if (input.expiresAt !== undefined) assertNonNegativeInteger(input.expiresAt, `${field}.expiresAt`);
  const f: unknown = input.fact;
  if (typeof f !== 'object' || f === null || Array.isArray(f))
    throw bankError(`${field}.fact: must be a map of strings`, `${field}.fact`);
  const fact: Record<string, string> = {};
  for (const key of Object.keys(f).sort(compareCodeUnits)) {
    const value = (f as Record<string, unknown>)[key];
    if (typeof value !== 'string') throw bankError(`${field}.fact.${key}: must be a string`, `${field}.fact.${key}`);
    setFact(fact, key, value);
  }
  const base = {
    id: input.id,
    chainId: input.chainId,
    episode: input.episode,
    fact: Object.freeze(fact),
    revision: input.revision,
  };
  return Object.freeze(
    input.expiresAt === undefined ? { ...base, writtenAt } : { ...base, expiresAt: input.expiresAt, writtenAt },
  );
}

/** The first content field in which two records differ, or null. */
function contentDifference(a: TextRecord, b: TextRecord): string | null {
  if (a.chainId !== b.chainId) return 'chainId';
  if (a.episode !== b.episode) return 'episode';
  if (a.revision !== b.revision) return 'revision';
  if (a.expiresAt !== b.expiresAt) return 'expiresAt';
  const ka = Object.keys(a.fact);
  const kb = Object.keys(b.fact);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i] || a.fact[k] !== b.fact[k])) return 'fact';
  return null;
}

function encodeRecord(r: TextRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    kind: 'record',
    id: r.id,
    chainId: r.chainId,
    episode: r.episode,
    fact: Object.keys(r.fact).map((k) => [k, r.fact[k]]),
    revision: r.revision,
    writtenAt: r.writtenAt,
  };
  if (r.expiresAt !== undefined) out['expiresAt'] = r.expiresAt;
  return out;
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
