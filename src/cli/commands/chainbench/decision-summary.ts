/**
 * The summary `imep chainbench decide` and `show` print for a sealed decisions unit: the accuracy table, the
 * no-memory floor, G, and the C/U/S/T ladder with θ — computed from the unit's verified rows (or as JSON).
 */
import { pp, signedPp, textTable } from '../../../report/index.js';
import { summarizeDecisions, type DecisionSummary, type DecisionUnitRead } from '../../../chainbench/index.js';

/** An interval in percentage points. */
export function ci(i: { lower: number; upper: number }): string {
  return `[${pp(i.lower, 1)}, ${pp(i.upper, 1)}]`;
}

function accuracyTable(s: DecisionSummary): string {
  return textTable(
    [
      ['condition', 'label', 'cohort', 'n', 'correct', 'accuracy %', 'CP 95% CI', 'floor %'],
      ...s.rows.map((r) => [
        r.condition,
        r.label,
        r.cohort,
        String(r.n),
        String(r.correct),
        pp(r.accuracy, 1),
        ci(r.ci),
        pp(r.chanceFloor, 1),
      ]),
    ],
    ['l', 'l', 'l', 'r', 'r', 'r', 'l', 'r'],
  );
}

function ladderLines(L: NonNullable<DecisionSummary['ladder']>): string[] {
  const lines = [
    '',
    `decision ladder on curated records (${L.chains} chains; C reproduces ${L.reproduced}/${L.rows[0]?.n ?? 0} archived decisions)`,
    textTable(
      [
        ['condition', 'n', 'changed', 'ρ %', 'CP 95% CI', 'correct'],
        ...L.rows.map((r) => [
          r.condition,
          String(r.n),
          String(r.changed),
          pp(r.rho, 1),
          ci(r.rhoCi),
          String(r.correct),
        ]),
      ],
      ['l', 'r', 'r', 'r', 'l', 'r'],
    ),
  ];
  if (L.theta !== null) {
    const th = L.theta;
    lines.push(
      `θ = ρ_T − ρ_S on the ${th.chains} chains with both an S and a T row (ρ_T ${pp(th.rhoT, 1)} %, ρ_S ${pp(th.rhoS, 1)} % there) = ${th.estimate.toFixed(3)}, chain-bootstrap 95% [${th.bootstrap.lower.toFixed(3)}, ${th.bootstrap.upper.toFixed(3)}]`,
    );
  }
  return lines;
}

function decisionReport(s: DecisionSummary): string {
  const lines = [accuracyTable(s)];
  if (s.noMemoryFloor !== null) {
    const f = s.noMemoryFloor;
    lines.push(
      `no-memory accuracy CI ${ci(f.ci)} ${f.contains ? 'contains' : 'EXCLUDES'} the chance floor ${pp(f.floor, 1)}% (non-rejection is not equivalence)`,
    );
  }
  if (s.G !== null) {
    const g = s.G;
    lines.push(
      `G = Acc(full) − Acc(none) = ${signedPp(g.estimate, 1)} pp (n=${g.n}, full-only ${g.referenceOnly}, none-only ${g.againstOnly}); ` +
        `chain-bootstrap 95% ${ci(g.bootstrap)}, Newcombe 95% ${ci(g.newcombe)}`,
    );
  }
  if (s.ladder !== null) lines.push(...ladderLines(s.ladder));
  return lines.join('\n');
}

/** The decisions unit's summary: the report and the unit's line, or one JSON object. */
export function decisionSummaryOf(d: DecisionUnitRead, json: boolean): string {
  const summary = summarizeDecisions(d.manifest, d.table, {
    bootstrapSeed: d.protocol.summary.bootstrapSeed,
    replicates: d.protocol.summary.replicates,
  });
  const u = d.unit;
  if (json)
    return JSON.stringify(
      { unit: u.dir, unitId: u.unitId, sealRoot: u.seal.merkle.root, manifestHash: d.manifestHash, summary },
      null,
      2,
    );
  return [
    decisionReport(summary),
    `decisions unit ${u.dir}: ${d.rows.length} chain rows, sealed, Merkle root ${u.seal.merkle.root} (manifest sha256 ${d.manifestHash}, seed ${d.protocol.seed}, fallback ${d.protocol.fallback})`,
  ].join('\n');
}
