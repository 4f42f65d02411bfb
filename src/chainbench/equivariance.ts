/**
 * Label-equivariance audit of decision readouts.
 *
 * A readout is label-equivariant when consistently renaming every object/drawer identifier leaves its
 * decisions (drawer positions) unchanged: then, since renaming changes no answer, its score under R
 * renamings is exactly its identity score × R. The audit runs each readout on the identity inputs and
 * on R seeded renamings (renaming r uses Prng(seed).fork(`renaming/<r>`)), and reports per readout the
 * identity score, the summed renamed score against identity × R, and every (renaming, chain) whose
 * decision changed. Any change marks the readout non-equivariant: it leans on names (e.g. an
 * alphabetical tie-break), which the scores alone could hide. The renamings are fixed transformations
 * of the same chains, not new samples.
 */
import { Prng, type Seed } from '../core/index.js';
import type { ChainManifest } from './manifest-schema.js';
import type { ChainRecordSet } from './records.js';
import { identifiersOf, randomRenaming, renameManifest, renameRecords } from './renaming.js';

export interface AuditedReadout {
  readonly name: string;
  readonly decide: (
    manifest: ChainManifest,
    records: ChainRecordSet,
  ) => readonly { readonly chainId: string; readonly choice: number }[];
}

export interface EquivarianceViolation {
  readonly renaming: number;
  readonly chainId: string;
  readonly identityChoice: number | null;
  readonly renamedChoice: number | null;
}

export interface EquivarianceRow {
  readonly readout: string;
  /** Decisions on the identity inputs. */
  readonly n: number;
  readonly identityScore: number;
  readonly renamedScore: number;
  /** identityScore × renamings. */
  readonly expectedScore: number;
  /** (renaming, chain) decisions that differ from identity. */
  readonly violations: number;
  /** Distinct chains with at least one changed decision. */
  readonly chainsChanged: number;
  readonly equivariant: boolean;
  /** Up to 10 violations, for the report. */
  readonly examples: readonly EquivarianceViolation[];
}

export interface EquivarianceAudit {
  readonly seed: string;
  readonly renamings: number;
  readonly identifiers: number;
  readonly rows: readonly EquivarianceRow[];
}

function score(manifest: ChainManifest, decisions: ReadonlyMap<string, number>): number {
  let s = 0;
  for (const c of manifest.chains) if (decisions.get(c.id) === c.finalFact.drawer) s++;
  return s;
}

export function auditLabelEquivariance(args: {
  readonly manifest: ChainManifest;
  readonly records: ChainRecordSet;
  readonly readouts: readonly AuditedReadout[];
  readonly renamings: number;
  readonly seed: Seed;
}): EquivarianceAudit {
  const { manifest, records, readouts, renamings } = args;
  const ids = identifiersOf(manifest);
  const toMap = (ds: readonly { chainId: string; choice: number }[]): Map<string, number> =>
    new Map(ds.map((d) => [d.chainId, d.choice]));
  const identity = readouts.map((r) => toMap(r.decide(manifest, records)));
  const acc = readouts.map(() => ({
    renamedScore: 0,
    violations: 0,
    chains: new Set<string>(),
    examples: [] as EquivarianceViolation[],
  }));
  const root = new Prng(args.seed);
  for (let k = 1; k <= renamings; k++) {
    const map = randomRenaming(ids, root.fork(`renaming/${k}`));
    const m = renameManifest(manifest, map);
    const rec = renameRecords(records, map);
    readouts.forEach((r, i) => {
      const got = toMap(r.decide(m, rec));
      const base = identity[i] as Map<string, number>;
      const a = acc[i] as (typeof acc)[number];
      a.renamedScore += score(m, got);
      for (const c of manifest.chains) {
        const x = base.get(c.id);
        const y = got.get(c.id);
        if (x !== y) {
          a.violations++;
          a.chains.add(c.id);
          if (a.examples.length < 10)
            a.examples.push({ renaming: k, chainId: c.id, identityChoice: x ?? null, renamedChoice: y ?? null });
        }
      }
    });
  }
  return {
    seed: String(args.seed),
    renamings,
    identifiers: ids.length,
    rows: readouts.map((r, i) => {
      const base = identity[i] as Map<string, number>;
      const a = acc[i] as (typeof acc)[number];
      const identityScore = score(manifest, base);
      return {
        readout: r.name,
        n: base.size,
        identityScore,
        renamedScore: a.renamedScore,
        expectedScore: identityScore * renamings,
        violations: a.violations,
        chainsChanged: a.chains.size,
        equivariant: a.violations === 0,
        examples: a.examples,
      };
    }),
  };
}
