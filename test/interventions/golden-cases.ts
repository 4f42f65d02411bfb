/**
 * Fixed inputs for the golden-digest test (bit-identical.test.ts): every operator on every dtype, with
 * non-finite elements, constant and tiny leaves, sizes across the bulk-draw chunk, and long leaves. Each case
 * hashes the output bytes, the non-finite count and the stream position after the operator (the next draws).
 *
 * Only long-stable APIs are used, so the same file runs against the pre-speed-up sources: the digests pinned in
 * bit-identical.test.ts were produced that way (commit 53b2e2e, `npx tsx` on a `git archive` of its src/).
 */
import { createHash } from 'node:crypto';
import { Prng } from '../../src/core/prng.js';
import { tensorFrom, type FloatDtype, type FloatTensor } from '../../src/core/tensor.js';
import { applyToItems, emptyLeafStats } from '../../src/interventions/leaf-operator.js';
import { fillStandardNormal } from '../../src/interventions/normal.js';
import { oneUlpOperator } from '../../src/interventions/one-ulp.js';
import { permuteOperator } from '../../src/interventions/permute.js';
import { resampleOperator } from '../../src/interventions/resample.js';
import { ULP_DIRECTIONS } from '../../src/interventions/ulp.js';

const DTYPES: readonly FloatDtype[] = ['float32', 'float64', 'float16', 'bfloat16'];
const SIZES = [1, 2, 3, 17, 4095, 4096, 4097, 9001];

function leafValues(g: Prng, n: number, kind: number): number[] {
  return Array.from({ length: n }, (_, i) => {
    if (kind === 1) return 2.5; // constant
    const r = g.nextFloat();
    if (kind === 2 && r < 0.03) return Number.NaN;
    if (kind === 2 && r < 0.05) return i % 2 === 0 ? Infinity : -Infinity;
    if (kind === 2 && r < 0.07) return i % 2 === 0 ? 0 : -0;
    return g.nextNormal() * 3 + 0.5;
  });
}

function hashTensor(h: ReturnType<typeof createHash>, t: FloatTensor): void {
  h.update(`${t.dtype}[${t.shape.join(',')}]`);
  h.update(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

/** name → SHA-256 hex of the case's outputs. */
export function goldenDigests(): Record<string, string> {
  const out: Record<string, string> = {};
  const g = new Prng('golden/inputs');
  const ops = [
    ...ULP_DIRECTIONS.map((d) => [`U:${d}`, oneUlpOperator(d)] as const),
    ['S_pi', permuteOperator] as const,
    ['T_mu', resampleOperator] as const,
  ];
  for (const dtype of DTYPES) {
    const items = [];
    for (const [slot, n] of SIZES.entries()) {
      for (let kind = 0; kind < 3; kind++) {
        const t = tensorFrom(dtype, leafValues(g, n, kind));
        items.push({
          identity: { slot: slot * 3 + kind, scope: 'golden', sourceEpisode: 'e', timestep: 0, version: 0 },
          leaves: { a: t, b: t },
        });
      }
    }
    for (const [name, op] of ops) {
      const prng = new Prng(`golden/${dtype}/${name}`);
      const stats = emptyLeafStats();
      const res = applyToItems(items, op, prng, stats);
      const h = createHash('sha256');
      for (const item of res) for (const k of Object.keys(item.leaves)) hashTensor(h, item.leaves[k] as FloatTensor);
      h.update(
        `stats ${stats.leaves} ${stats.elements} ${stats.nonFinite} next ${prng.nextUint32()} ${prng.nextUint32()}`,
      );
      out[`${dtype} ${name}`] = h.digest('hex');
    }
  }
  // Standard normals across chunk boundaries, with the stream position after.
  for (const n of [0, 1, 4095, 4096, 4097, 50_000]) {
    const prng = new Prng(`golden/normals/${n}`);
    const z = new Float64Array(n);
    fillStandardNormal(prng, z);
    const h = createHash('sha256');
    h.update(new Uint8Array(z.buffer));
    h.update(`next ${prng.nextUint32()}`);
    out[`normals ${n}`] = h.digest('hex');
  }
  return out;
}
