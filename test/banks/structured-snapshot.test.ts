import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tensorsBitEqual } from '../../src/core/tensor.js';
import type { FloatDtype, FloatTensor } from '../../src/core/tensor.js';
import { isImepError } from '../../src/core/errors.js';
import { PAYLOAD_FIELDS } from '../../src/banks/record.js';
import type { BankRecord, Payload } from '../../src/banks/record.js';
import { StructuredBank } from '../../src/banks/structured-bank.js';
import { packSnapshot } from '../../src/banks/tensor-codec.js';
import { basis, candidate, keys } from './helpers.js';

/** A tensor from raw storage bits: NaNs with payload bits, -0, subnormals and infinities all occur. */
function fromBits(dtype: FloatDtype, words: readonly number[], shape: readonly number[]): FloatTensor {
  if (dtype === 'float16' || dtype === 'bfloat16')
    return { dtype, shape, data: Uint16Array.from(words, (w) => w & 0xffff) };
  if (dtype === 'float32')
    return { dtype, shape, data: new Float32Array(Uint32Array.from(words, (w) => w >>> 0).buffer) };
  const u = new Uint32Array(words.length * 2);
  words.forEach((w, i) => {
    u[2 * i] = Math.imul(w, 0x9e3779b1) >>> 0;
    u[2 * i + 1] = w >>> 0;
  });
  return { dtype, shape, data: new Float64Array(u.buffer) };
}

const DTYPES: FloatDtype[] = ['float32', 'float16', 'bfloat16', 'float64'];
const special = fc.constantFrom(
  0x8000,
  0x7e01,
  0xfe00,
  0x7c00,
  0xffff,
  0x0001,
  0x7fc00001,
  0x80000000,
  0xff800000,
  0x7f800001,
);
const word = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), special);
const tensorArb = fc
  .record({
    dtype: fc.constantFrom(...DTYPES),
    rows: fc.integer({ min: 1, max: 2 }),
    cols: fc.integer({ min: 0, max: 3 }),
    words: fc.array(word, { minLength: 6, maxLength: 6 }),
  })
  .map((r) => fromBits(r.dtype, r.words.slice(0, r.rows * r.cols), r.rows === 1 ? [r.cols] : [r.rows, r.cols]));
const payloadArb = fc
  .tuple(...PAYLOAD_FIELDS.map(() => tensorArb))
  .map((ts) => Object.fromEntries(PAYLOAD_FIELDS.map((f, i) => [f, ts[i]])) as unknown as Payload);
const opArb = fc.oneof(
  fc.record({
    op: fc.constant('query' as const),
    scope: fc.constantFrom('a', 'b', 'ü'),
    i: fc.integer({ min: 0, max: 5 }),
  }),
  fc.record({
    op: fc.constant('write' as const),
    scope: fc.constantFrom('a', 'b', 'ü'),
    i: fc.integer({ min: 0, max: 5 }),
    j: fc.integer({ min: 0, max: 5 }),
    p: payloadArb,
    keyDtype: fc.constantFrom(...DTYPES),
  }),
  fc.record({ op: fc.constant('clear' as const), scope: fc.constantFrom('a', 'b', 'ü'), keepClock: fc.boolean() }),
);

function sameRecords(a: readonly BankRecord[], b: readonly BankRecord[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((r, n) => {
    const s = b[n] as BankRecord;
    return (
      r.slot === s.slot &&
      r.scope === s.scope &&
      r.sourceEpisode === s.sourceEpisode &&
      r.timestep === s.timestep &&
      r.version === s.version &&
      (['cognitiveKey', 'perceptualKey', 'stateSignature'] as const).every((k) =>
        tensorsBitEqual(r.keys[k], s.keys[k]),
      ) &&
      PAYLOAD_FIELDS.every((f) => tensorsBitEqual(r.payload[f], s.payload[f]))
    );
  });
}

describe('StructuredBank snapshots', () => {
  it('restore → snapshot is byte-identical and keeps records bit for bit (f16/bf16/NaN/-0 payloads; 400 seeded cases)', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.integer({ min: 1, max: 5 }), (ops, capacity) => {
        const bank = new StructuredBank({ capacity, mergeThreshold: 0.95 });
        for (const o of ops) {
          const ks = (i: number, j: number, dtype: FloatDtype = 'float32'): ReturnType<typeof keys> =>
            keys(basis(6, i, -0), basis(6, j, 0.5), basis(6, (i + j) % 6, 0.25), dtype);
          if (o.op === 'query') bank.query(o.scope, ks(o.i, o.i), { episode: 'q' });
          else if (o.op === 'write')
            bank.write(o.scope, { keys: ks(o.i, o.j, o.keyDtype), payload: o.p, sourceEpisode: `e${o.i}` });
          else bank.clearScope(o.scope, { keepClock: o.keepClock });
        }
        const bytes = bank.snapshot();
        const restored = StructuredBank.restore(bytes);
        expect(Buffer.from(restored.snapshot()).equals(Buffer.from(bytes))).toBe(true);
        expect(restored.scopes()).toEqual(bank.scopes());
        expect(restored.config).toEqual(bank.config);
        for (const s of bank.scopes()) {
          expect(restored.clock(s)).toBe(bank.clock(s));
          expect(sameRecords(restored.records(s), bank.records(s))).toBe(true);
          const scoped = new StructuredBank({ capacity });
          expect(scoped.restoreScope(bank.snapshotScope(s))).toBe(s);
          expect(sameRecords(scoped.records(s), bank.records(s))).toBe(true);
          expect(scoped.clock(s)).toBe(bank.clock(s));
        }
      }),
      { seed: 4242, numRuns: 400 },
    );
  });

  it('a restored bank behaves like the original (same selections and write decisions)', () => {
    const a = new StructuredBank({ capacity: 3 });
    for (let i = 0; i < 7; i++) {
      a.query('s', keys(basis(4, i % 4), basis(4, i % 4), basis(4, i % 4)), { episode: 'e' });
      a.write('s', candidate(keys(basis(4, i % 4, 0.1), basis(4, (i + 1) % 4), basis(4, (i * 3) % 4, 0.1)), i));
    }
    const b = StructuredBank.restore(a.snapshot());
    const q = keys(basis(4, 1), basis(4, 2), basis(4, 3));
    expect(b.query('s', q, { episode: 'x' }).selection).toEqual(a.query('s', q, { episode: 'x' }).selection);
    expect(b.write('s', candidate(q, 9))).toEqual(a.write('s', candidate(q, 9)));
    expect(Buffer.from(b.snapshot()).equals(Buffer.from(a.snapshot()))).toBe(true);
  });

  it('restore takes config overrides, and refuses records that do not fit', () => {
    const a = new StructuredBank({ capacity: 4, k: 2 });
    for (let i = 0; i < 4; i++) a.write('s', candidate(keys(basis(4, i), basis(4, i), basis(4, i)), i));
    expect(StructuredBank.restore(a.snapshot(), { k: 3 }).config.selector.k).toBe(3);
    expect(StructuredBank.restore(a.snapshot()).config.selector.k).toBe(2);
    expect(() => StructuredBank.restore(a.snapshot(), { capacity: 2 })).toThrow(/capacity/);
    expect(() => new StructuredBank({ capacity: 2 }).restoreScope(a.snapshotScope('s'))).toThrow(/capacity/);
  });

  it('refuses bytes that are not a bank snapshot, naming the problem', () => {
    const codeOf = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (e) {
        return isImepError(e) ? `${e.code}:${e.field ?? ''}` : 'other';
      }
      return undefined;
    };
    expect(codeOf(() => StructuredBank.restore(new Uint8Array([0xc1])))).toMatch(/^E_BANK_INVALID/);
    expect(codeOf(() => StructuredBank.restore(new Uint8Array([0x92, 1])))).toBe('E_BANK_INVALID:');
    expect(codeOf(() => StructuredBank.restore(packSnapshot({ format: 'nope', version: 1 })))).toBe(
      'E_BANK_INVALID:format',
    );
    expect(codeOf(() => StructuredBank.restore(packSnapshot({ format: 'imep-structured-bank', version: 2 })))).toBe(
      'E_BANK_INVALID:version',
    );
    const a = new StructuredBank();
    a.write('s', candidate(keys([1, 0], [1, 0], [1, 0]), 0));
    const scopeBytes = a.snapshotScope('s');
    expect(codeOf(() => StructuredBank.restore(scopeBytes))).toBe('E_BANK_INVALID:format');
    const tampered = a.snapshot();
    // flip the last tensor's byte count by truncation → decoding must fail cleanly, not crash
    expect(codeOf(() => StructuredBank.restore(tampered.subarray(0, tampered.length - 3)))).toMatch(/^E_BANK_INVALID/);
    expect(codeOf(() => a.snapshotScope('missing'))).toBe('E_BANK_INVALID:scope');
  });
});
