/**
 * Malformed chain manifests: mutations of generated ChainDrawers-lite manifests — structural (deleted
 * keys, wrong types, hostile strings, huge numbers, deep nesting, added keys), semantic (a number nudged
 * to a nearby integer, a boolean flipped, a string swapped for another of the manifest's strings, a
 * chain duplicated), and textual (truncation, binary garbage, flipped bits, duplicated keys, numbers
 * JSON cannot hold, deep nesting). The property: `parseManifest` (schema, every cross-field rule, the
 * query frames on the lite simulator) either accepts the manifest or throws E_MANIFEST_INVALID with one
 * line naming the file.
 */
import fc from 'fast-check';
import { generateChainManifest } from '../../src/chainbench/generator.js';
import { parseManifest } from '../../src/chainbench/manifest-io.js';
import {
  allPaths,
  applyTextMutation,
  applyTreeMutation,
  pathText,
  textMutationArb,
  treeMutationArb,
  type Path,
} from './mutate.js';
import { classifyThrown, type FuzzOutcome } from './outcome.js';

const BASE_SPECS = [
  { chains: 2, K: 2, seed: 1 },
  { chains: 3, K: [3, 4], seed: 7 },
  { chains: 2, K: 4, seed: 2024 },
] as const;

let bases: unknown[] | undefined;
export function baseManifests(): readonly unknown[] {
  bases ??= BASE_SPECS.map(
    (s) => JSON.parse(JSON.stringify(generateChainManifest({ chains: s.chains, K: s.K, seed: s.seed }))) as unknown,
  );
  return bases;
}

export interface ManifestCase {
  readonly label: string;
  readonly text: string;
}

type Semantic =
  | { readonly op: 'nudge'; readonly at: number; readonly to: number }
  | { readonly op: 'flip-bool'; readonly at: number }
  | { readonly op: 'swap-string'; readonly at: number; readonly from: number }
  | { readonly op: 'duplicate-chain'; readonly which: number };

const semanticArb: fc.Arbitrary<Semantic> = fc.oneof(
  fc.record({ op: fc.constant('nudge' as const), at: fc.nat(), to: fc.integer({ min: -2, max: 8 }) }),
  fc.record({ op: fc.constant('flip-bool' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('swap-string' as const), at: fc.nat(), from: fc.nat() }),
  fc.record({ op: fc.constant('duplicate-chain' as const), which: fc.nat() }),
);

function leaves(root: unknown, type: 'number' | 'boolean' | 'string'): Path[] {
  return allPaths(root).filter((p) => typeof get(root, p) === type);
}

function get(root: unknown, p: Path): unknown {
  let cur: unknown = root;
  for (const seg of p)
    cur = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>)[seg] : undefined;
  return cur;
}

function set(root: unknown, p: Path, v: unknown): void {
  const parent = get(root, p.slice(0, -1)) as Record<string | number, unknown>;
  parent[p[p.length - 1]!] = v;
}

function applySemantic(base: unknown, m: Semantic): { value: unknown; label: string } {
  const root = structuredClone(base) as { chains: unknown[] };
  switch (m.op) {
    case 'nudge': {
      const ps = leaves(root, 'number');
      const p = ps[m.at % ps.length]!;
      set(root, p, m.to);
      return { value: root, label: `nudge ${pathText(p)} → ${m.to}` };
    }
    case 'flip-bool': {
      const ps = leaves(root, 'boolean');
      if (ps.length === 0) return { value: root, label: 'no boolean' };
      const p = ps[m.at % ps.length]!;
      set(root, p, !get(root, p));
      return { value: root, label: `flip ${pathText(p)}` };
    }
    case 'swap-string': {
      const ps = leaves(root, 'string');
      const p = ps[m.at % ps.length]!;
      const v = get(root, ps[m.from % ps.length]!);
      set(root, p, v);
      return { value: root, label: `${pathText(p)} := ${JSON.stringify(v)}` };
    }
    case 'duplicate-chain': {
      const c = root.chains[m.which % root.chains.length];
      root.chains.push(structuredClone(c));
      return { value: root, label: `duplicate chain ${m.which % (root.chains.length - 1)}` };
    }
  }
}

function jsonDeepMember(base: string) {
  return (nest: string): Buffer => Buffer.from(base.replace(/^\{/, `{"zz_deep": ${nest}, `));
}

export const manifestCaseArb: fc.Arbitrary<ManifestCase> = fc
  .record({
    base: fc.nat(),
    edit: fc.oneof(
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('tree' as const), m: treeMutationArb }) },
      {
        weight: 3,
        arbitrary: fc.record({ kind: fc.constant('semantic' as const), m: semanticArb, m2: fc.option(semanticArb) }),
      },
      {
        weight: 3,
        arbitrary: fc.record({ kind: fc.constant('text' as const), m: textMutationArb, pretty: fc.boolean() }),
      },
    ),
  })
  .map(({ base, edit }) => {
    const all = baseManifests();
    const b = all[base % all.length];
    switch (edit.kind) {
      case 'tree': {
        const r = applyTreeMutation(b, edit.m);
        return { label: r.label, text: JSON.stringify(r.value) ?? 'null' };
      }
      case 'semantic': {
        const r1 = applySemantic(b, edit.m);
        const r2 = edit.m2 === null ? null : applySemantic(r1.value, edit.m2);
        return { label: [r1.label, r2?.label].filter(Boolean).join('; '), text: JSON.stringify(r2?.value ?? r1.value) };
      }
      case 'text': {
        const text = edit.pretty ? JSON.stringify(b, null, 2) : JSON.stringify(b);
        const r = applyTextMutation(Buffer.from(text), edit.m, jsonDeepMember(text));
        return { label: r.label, text: r.bytes.toString('utf8') };
      }
    }
  });

export function runManifestCase(c: ManifestCase, file: string): FuzzOutcome {
  try {
    parseManifest(c.text, { file });
    return { kind: 'accepted' };
  } catch (e) {
    return classifyThrown(e, file, ['E_MANIFEST_INVALID']);
  }
}
