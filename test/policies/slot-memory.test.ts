/**
 * The slot memories behind the external-memory policy (src/policies/memory/): one per bank kind, the same interface.
 * Episode: no scopes, every begin/end/reset empties the bank, every step written. Structured: scopes (the episode is
 * its own scope without one), writes only where the gate is > 0 (NaN and 0 are not), persistence across attempts.
 */
import { describe, expect, it } from 'vitest';
import { EpisodeBank, StructuredBank } from '../../src/banks/index.js';
import {
  EpisodeSlotMemory,
  StructuredSlotMemory,
  slotMemoryFor,
  type EncodedRows,
} from '../../src/policies/memory/index.js';
import type { EpisodeBankSpec, StructuredBankSpec } from '../../src/policies/manifest.js';

const episodeSpec: EpisodeBankSpec = {
  kind: 'episode',
  name: 'episode',
  capacity: 8,
  k: 2,
  consolidation: 'fifo',
  leaf: 'feature',
  order: 'read-before-write',
};

const structuredSpec: StructuredBankSpec = {
  kind: 'structured-pcmb',
  name: 'pcmb',
  capacity: 8,
  k: 2,
  gate: -1,
  mergeThreshold: 1,
  weights: { cognitive: 1, perceptual: 1 },
  leaf: 'cognitiveValue',
  keys: 'queryKey',
  write: 'gated',
  order: 'read-before-write',
};

/** Two rows of keys (2 values) and candidates (3 values); gates per row. */
function rows(gates?: number[]): EncodedRows {
  return {
    queryKeys: Float32Array.of(1, 0, 0, 1),
    candidates: Float32Array.of(1, 2, 3, 4, 5, 6),
    gates: gates === undefined ? undefined : Float32Array.from(gates),
  };
}

describe('slotMemoryFor', () => {
  it('makes the memory of the bank kind the manifest declares', () => {
    expect(slotMemoryFor(episodeSpec, 'within-episode', 2, 3).bank).toBeInstanceOf(EpisodeBank);
    expect(slotMemoryFor(structuredSpec, 'within-episode', 2, 3).bank).toBeInstanceOf(StructuredBank);
  });
});

/** Episode banks rank by cosine against the stored candidates: keys as long as the candidates (3 values). */
const episodeRows = (): EncodedRows => ({
  queryKeys: Float32Array.of(1, 0, 0, 4, 5, 6),
  candidates: Float32Array.of(1, 2, 3, 4, 5, 6),
  gates: undefined,
});

describe('EpisodeSlotMemory', () => {
  it('has no scope, writes every step (a copy of its row) and reads what earlier steps wrote', () => {
    const m = new EpisodeSlotMemory(episodeSpec, 3, 3);
    m.reset('ep');
    expect(m.scope()).toBeNull();
    expect(m.read(episodeRows(), 0, true).items).toHaveLength(0);
    const r = episodeRows();
    m.write(r, 1, 0);
    r.candidates.fill(0); // the bank kept a copy
    expect(Array.from(m.bank.entries()[0]!.feature.data)).toEqual([4, 5, 6]);
    const read = m.read(episodeRows(), 1, true);
    expect(read.items).toHaveLength(1);
    expect(read.ctx.episode).toBe('ep');
    m.beginScope('unit');
    expect(m.bank.size).toBe(0);
  });
});

describe('StructuredSlotMemory', () => {
  it('writes only where the gate is > 0, into the current scope (the episode without one)', () => {
    const m = new StructuredSlotMemory(structuredSpec, 'within-episode', 2, 3);
    m.reset('ep1');
    expect(m.scope()).toBe('ep1');
    m.write(rows([0, Number.NaN]), 0, 0);
    m.write(rows([0, Number.NaN]), 1, 0);
    expect(m.bank.records('ep1')).toHaveLength(0);
    m.write(rows([0, 0.5]), 1, 0);
    const recs = m.bank.records('ep1');
    expect(recs).toHaveLength(1);
    expect(Array.from(recs[0]!.payload.cognitiveValue.data)).toEqual([4, 5, 6]);
    expect(Array.from(recs[0]!.payload.perceptualValue.data)).toEqual([0]);
    expect(recs[0]!.sourceEpisode).toBe('ep1');
    const read = m.read(rows(), 1, false);
    expect(read.items).toHaveLength(1);
    expect(read.ctx.episode).toBe('ep1');
  });

  it('keeps a scope across resets with persistence across-attempts, empties it within-episode', () => {
    for (const [persistence, kept] of [
      ['across-attempts', 1],
      ['within-episode', 0],
    ] as const) {
      const m = new StructuredSlotMemory(structuredSpec, persistence, 2, 3);
      m.beginScope('unit');
      m.reset('unit/a1');
      expect(m.scope()).toBe('unit');
      m.write(rows([1, 1]), 0, 0);
      m.reset('unit/a2');
      expect(m.bank.records('unit')).toHaveLength(kept);
      m.endScope('unit');
      expect(m.bank.records('unit')).toHaveLength(0);
      expect(m.scope()).toBe('unit/a2');
    }
  });
});
