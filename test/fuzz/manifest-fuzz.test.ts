/**
 * Property: a mutated chain manifest (structural, semantic and textual mutations of generated
 * ChainDrawers-lite manifests) is either valid or refused with E_MANIFEST_INVALID naming the file —
 * never another exception, never a hang. Seeded; `IMEP_FUZZ_SEED` / `IMEP_FUZZ_RUNS` explore more.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import { parseManifest } from '../../src/chainbench/manifest-io.js';
import { KNOWN_MANIFEST_FINDINGS, knownFinding } from './known-findings.js';
import { baseManifests, manifestCaseArb, runManifestCase } from './manifest-cases.js';
import { emptyTally, formatTally, record } from './outcome.js';

const SEED = Number(process.env['IMEP_FUZZ_SEED'] ?? 20260103);
const RUNS = Number(process.env['IMEP_FUZZ_RUNS'] ?? 600);
const FILE = 'chains/fuzzed-manifest.json';
const CASE_MS = 5000;

describe('chain manifests under fuzzing', () => {
  it('the base manifests are valid', () => {
    for (const m of baseManifests()) expect(() => parseManifest(JSON.stringify(m), { file: FILE })).not.toThrow();
  });

  it(`${RUNS} seeded mutations are valid or refused with E_MANIFEST_INVALID naming the file`, () => {
    const tally = emptyTally();
    fc.assert(
      fc.property(manifestCaseArb, (c) => {
        const t0 = performance.now();
        const o = runManifestCase(c, FILE);
        const ms = performance.now() - t0;
        const known = knownFinding(o, KNOWN_MANIFEST_FINDINGS);
        record(tally, o, ms, c.label, known);
        if (o.kind === 'crash' && known === null) throw new Error(`${c.label}: ${o.reason}`);
        if (ms > CASE_MS) throw new Error(`${c.label}: took ${ms.toFixed(0)} ms`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    console.log(formatTally(`chain manifests (seed ${SEED})`, tally));
    expect(tally.refused).toBeGreaterThan(tally.cases / 2);
    expect(tally.accepted).toBeGreaterThan(0);
  });

  it('a manifest that is not JSON is refused in ONE line', () => {
    const text = JSON.stringify(baseManifests()[0], null, 2);
    let line = '';
    try {
      const at = text.indexOf('[\n') + 2; // a stray token inside an array: V8 quotes the text around it
      parseManifest(`${text.slice(0, at)}y${text.slice(at)}`, { file: FILE });
    } catch (e) {
      line = isImepError(e) ? e.oneLine() : String(e);
    }
    expect(line).toContain(FILE);
    expect(line).not.toMatch(/[\r\n\u2028\u2029]/);
  });

  it('a lone surrogate in a manifest string is E_MANIFEST_INVALID', () => {
    const m = structuredClone(baseManifests()[0]) as { generator: { prng: { name: string } } };
    m.generator.prng.name = 'x\ud800';
    let code: string | undefined;
    try {
      parseManifest(JSON.stringify(m), { file: FILE });
    } catch (e) {
      code = isImepError(e) ? e.code : 'not ImepError';
    }
    expect(code).toBe('E_MANIFEST_INVALID');
  });
});
