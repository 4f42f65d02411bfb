import { describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import { TextMemory } from '../../src/banks/text-memory.js';
import type { TextRecordInput } from '../../src/banks/text-memory.js';
import { packSnapshot } from '../../src/banks/tensor-codec.js';

const rec = (
  id: string,
  fact: Record<string, string>,
  revision = 0,
  extra: Partial<TextRecordInput> = {},
): TextRecordInput => ({
  id,
  chainId: 'c1',
  episode: 'e1',
  fact,
  revision,
  ...extra,
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isImepError(e)) return `${e.code}:${e.field ?? ''}`;
    throw e;
  }
  return 'none';
}

describe('TextMemory', () => {
  it('appends with the memory clock; an identical replay is idempotent', () => {
    const m = new TextMemory();
    m.advanceClock(3);
    const a = m.append(rec('r1', { drawer: 'left', color: 'red' }));
    expect(a.status).toBe('appended');
    expect(a.record.writtenAt).toBe(3);
    m.advanceClock();
    // same content, fact keys in another order → replay, original record kept
    const b = m.append(rec('r1', { color: 'red', drawer: 'left' }));
    expect(b).toEqual({ status: 'replayed', record: a.record });
    expect(m.log()).toHaveLength(1);
  });

  it('refuses different content under an existing id, naming the field', () => {
    const m = new TextMemory();
    m.append(rec('r1', { drawer: 'left' }));
    expect(refusal(() => m.append(rec('r1', { drawer: 'right' })))).toBe('E_BANK_INVALID:record.fact');
    expect(refusal(() => m.append(rec('r1', { drawer: 'left' }, 1)))).toBe('E_BANK_INVALID:record.revision');
    expect(refusal(() => m.append(rec('r1', { drawer: 'left' }, 0, { expiresAt: 9 })))).toBe(
      'E_BANK_INVALID:record.expiresAt',
    );
    expect(refusal(() => m.append(rec('r1', { drawer: 'left' }, 0, { chainId: 'c2' })))).toBe(
      'E_BANK_INVALID:record.chainId',
    );
    expect(refusal(() => m.append(rec('', { a: 'b' })))).toBe('E_BANK_INVALID:record.id');
    expect(refusal(() => m.append(rec('r2', { a: 3 as unknown as string })))).toBe('E_BANK_INVALID:record.fact.a');
    expect(refusal(() => m.append(rec('r2', { a: 'b' }, -1)))).toBe('E_BANK_INVALID:record.revision');
    expect(m.log()).toHaveLength(1);
  });

  it('resolves the latest valid revision of a fact key (revision, then writtenAt, then log order)', () => {
    const m = new TextMemory();
    m.append(rec('a', { drawer: 'left' }, 1));
    m.advanceClock();
    m.append(rec('b', { drawer: 'right' }, 3));
    m.append(rec('c', { drawer: 'middle' }, 2));
    m.append(rec('d', { cup: 'blue' }, 9));
    expect(m.resolve('drawer')?.id).toBe('b');
    expect(m.resolve('cup')?.fact).toEqual({ cup: 'blue' });
    expect(m.resolve('nothing')).toBeUndefined();
    m.append(rec('e', { drawer: 'top' }, 3)); // same revision as b, same writtenAt → later log position
    expect(m.resolve('drawer')?.id).toBe('e');
    m.advanceClock();
    m.append(rec('f', { drawer: 'bottom' }, 3, { chainId: 'c2' }));
    expect(m.resolve('drawer')?.id).toBe('f');
    expect(m.resolve('drawer', { chainId: 'c1' })?.id).toBe('e');
  });

  it('tombstones invalidate their target permanently; a re-append does not revive it', () => {
    const m = new TextMemory();
    m.append(rec('a', { drawer: 'left' }, 1));
    m.append(rec('b', { drawer: 'right' }, 2));
    expect(m.revoke('b')).toEqual({ status: 'revoked' });
    expect(m.revoke('b')).toEqual({ status: 'replayed' });
    expect(m.resolve('drawer')?.id).toBe('a');
    expect(m.append(rec('b', { drawer: 'right' }, 2)).status).toBe('replayed');
    expect(m.isValid('b')).toBe(false);
    expect(m.resolve('drawer')?.id).toBe('a');
    // a tombstone may precede its target
    m.revoke('z');
    expect(m.append(rec('z', { drawer: 'top' }, 7)).status).toBe('appended');
    expect(m.isValid('z')).toBe(false);
    expect(m.resolve('drawer')?.id).toBe('a');
    expect(m.log().map((e) => e.kind)).toEqual(['record', 'record', 'revoke', 'revoke', 'record']);
  });

  it('expires records against the memory clock (valid while now < expiresAt)', () => {
    const m = new TextMemory();
    m.append(rec('old', { drawer: 'left' }, 1));
    m.append(rec('new', { drawer: 'right' }, 2, { expiresAt: 2 }));
    expect(m.resolve('drawer')?.id).toBe('new');
    m.advanceClock(1);
    expect(m.resolve('drawer')?.id).toBe('new');
    m.advanceClock(1);
    expect(m.now()).toBe(2);
    expect(m.isValid('new')).toBe(false);
    expect(m.resolve('drawer')?.id).toBe('old');
    expect(refusal(() => m.advanceClock(-1))).toBe('E_BANK_INVALID:by');
  });

  it('reads go through the read hook with a ReadContext', () => {
    const m = new TextMemory();
    m.append(rec('a', { drawer: 'left' }, 1));
    m.append(rec('b', { drawer: 'right' }, 2));
    const ctxs: unknown[] = [];
    m.setReadHook((records, ctx) => {
      ctxs.push(ctx);
      return records.map((r) => ({ ...r, fact: { drawer: 'swapped' } }));
    });
    expect(m.resolve('drawer', { episode: 'e9' })?.fact['drawer']).toBe('swapped');
    expect(m.readAll({ chainId: 'c1' }).map((r) => r.id)).toEqual(['a', 'b']);
    expect(ctxs).toEqual([
      { bank: 'text', scope: '', episode: 'e9', queryIndex: 1, decisionStep: true, candidateCount: 2 },
      { bank: 'text', scope: 'c1', episode: '', queryIndex: 2, decisionStep: true, candidateCount: 2 },
    ]);
    expect(m.get('b')?.fact['drawer']).toBe('right'); // the hook changed only what the reader got
  });

  it('snapshots round-trip byte-identically and behave the same after restore', () => {
    const m = new TextMemory({ bank: 'text-planner' });
    m.append(rec('a', { z: '1', a: 'ü' }, 1, { expiresAt: 10 }));
    m.advanceClock(2);
    m.append(rec('b', { a: 'x' }, 2));
    m.revoke('b');
    m.revoke('q');
    m.resolve('a');
    m.advanceClock(1);
    const bytes = m.snapshot();
    const r = TextMemory.restore(bytes);
    expect(Buffer.from(r.snapshot()).equals(Buffer.from(bytes))).toBe(true);
    expect([r.bank, r.now(), r.log()]).toEqual([m.bank, m.now(), m.log()]);
    expect(r.resolve('a')?.id).toBe('a');
    expect(r.append(rec('q', { a: 'y' }, 5)).status).toBe('appended');
    expect(r.isValid('q')).toBe(false);
    expect(refusal(() => r.append(rec('b', { a: 'other' }, 2)))).toBe('E_BANK_INVALID:record.fact');
  });

  it('refuses malformed snapshots', () => {
    expect(
      refusal(() =>
        TextMemory.restore(
          packSnapshot({
            format: 'imep-text-memory',
            version: 1,
            bank: 't',
            clock: 0,
            reads: 0,
            log: [{ kind: 'record', id: 'a', chainId: 'c', episode: 'e', fact: [], revision: 0, writtenAt: 5 }],
          }),
        ),
      ),
    ).toBe('E_BANK_INVALID:log[0].writtenAt');
    expect(
      refusal(() =>
        TextMemory.restore(
          packSnapshot({
            format: 'imep-text-memory',
            version: 1,
            bank: 't',
            clock: 0,
            reads: 0,
            log: [{ kind: 'x', writtenAt: 0 }],
          }),
        ),
      ),
    ).toBe('E_BANK_INVALID:log[0].kind');
  });
});

describe('TextMemory edge keys and clock', () => {
  it('a fact key named "__proto__" is a key like any other: kept, compared, resolved, restored', () => {
    const m = new TextMemory();
    const fact = JSON.parse('{"__proto__":"x","k":"1"}') as Record<string, string>;
    expect(m.append({ id: 'r', chainId: 'c', episode: 'e', fact, revision: 0 }).status).toBe('appended');
    const stored = m.resolve('__proto__');
    expect(stored?.id).toBe('r');
    expect(Object.keys(stored?.fact ?? {})).toEqual(['__proto__', 'k']);
    expect(stored?.fact['__proto__']).toBe('x');
    // the same id with another "__proto__" value is different content: refused, not a replay
    const other = JSON.parse('{"__proto__":"DIFFERENT","k":"1"}') as Record<string, string>;
    expect(refusal(() => m.append({ id: 'r', chainId: 'c', episode: 'e', fact: other, revision: 0 }))).toBe(
      'E_BANK_INVALID:record.fact',
    );
    expect(m.append({ id: 'r', chainId: 'c', episode: 'e', fact, revision: 0 }).status).toBe('replayed');
    const bytes = m.snapshot();
    const back = TextMemory.restore(bytes);
    expect(Buffer.from(back.snapshot()).equals(Buffer.from(bytes))).toBe(true);
    expect(back.resolve('__proto__')?.fact['__proto__']).toBe('x');
  });

  it('the clock stays a safe integer, so every state snapshots and restores', () => {
    const m = new TextMemory();
    m.advanceClock(Number.MAX_SAFE_INTEGER - 1);
    expect(refusal(() => m.advanceClock(5))).toBe('E_BANK_INVALID:by');
    expect(m.now()).toBe(Number.MAX_SAFE_INTEGER - 1);
    expect(m.advanceClock(1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(TextMemory.restore(m.snapshot()).now()).toBe(Number.MAX_SAFE_INTEGER);
  });
});
