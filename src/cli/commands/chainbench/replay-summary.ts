/**
 * The summary `imep chainbench replay` and `show` print for a sealed replay unit: decision accuracy and task
 * success per condition, the execution ceiling, paired contrasts, the replay floor and the constructive
 * pairing — computed from the unit's verified rows (or as JSON).
 */
import { pp, signedPp, textTable } from '../../../report/index.js';
import {
  summarizeReplay,
  type ExecutorIdentity,
  type ReplaySummary,
  type ReplayUnitRead,
} from '../../../chainbench/index.js';
import { ci } from './decision-summary.js';

function conditionTable(s: ReplaySummary): string {
  return textTable(
    [
      ['condition', 'n', 'decision acc %', 'CP 95% CI', 'task success %', 'CP 95% CI', 'Acc·SR* %'],
      ...s.rows.map((r) => [
        r.condition,
        String(r.n),
        pp(r.accuracy, 1),
        ci(r.accuracyCi),
        pp(r.taskSuccess, 1),
        ci(r.taskSuccessCi),
        r.predictedFromCeiling === null
          ? '—'
          : `${pp(r.predictedFromCeiling, 1)}${r.predictionInsideCi ? '' : ' (outside CI)'}`,
      ]),
    ],
    ['l', 'r', 'r', 'l', 'r', 'l', 'r'],
  );
}

function contrastLines(s: ReplaySummary): string[] {
  if (s.contrasts.length === 0) return [];
  return [
    '',
    'paired task-success contrasts vs no-memory (Δ = SR_X − SR_N)',
    textTable(
      [
        ['condition', 'n', 'Δ pp', 'X-only', 'N-only', 'chain-bootstrap 95%'],
        ...s.contrasts.map((c) => [
          c.reference,
          String(c.n),
          signedPp(c.estimate, 1),
          String(c.referenceOnly),
          String(c.againstOnly),
          ci(c.bootstrap),
        ]),
      ],
      ['l', 'r', 'r', 'r', 'r', 'l'],
    ),
  ];
}

function replayReport(s: ReplaySummary): string {
  const lines = [
    conditionTable(s),
    `execution ceiling SR* = SR(oracle) = ${s.ceiling === null ? '—' : `${pp(s.ceiling, 1)}%`} (decision accuracy and task success are separate columns, never pooled)`,
    ...contrastLines(s),
  ];
  if (s.replayFloor !== null) {
    const f = s.replayFloor;
    lines.push(
      `replay floor R (oracle decision re-issued, replay executor seed): O-only ${f.b}, R-only ${f.c}, ρ = ${pp(f.rho, 1)}% ${ci(f.ci)} over ${f.n} chains`,
    );
  }
  const v = s.verification;
  lines.push(
    `constructive pairing: ${v.rows} rows looked up ${v.distinctExecutionKeys} executions ` +
      `(${v.distinctDecisionPairs} distinct (chain, decision) pairs + ${v.distinctExecutionKeys - v.distinctDecisionPairs} replay-floor); executor calls ${v.executions}, extra ${v.extraExecutions}`,
  );
  return lines.join('\n');
}

function replayJson(r: ReplayUnitRead, summary: ReplaySummary, ex: ExecutorIdentity): string {
  const u = r.unit;
  return JSON.stringify(
    {
      unit: u.dir,
      unitId: u.unitId,
      sealRoot: u.seal.merkle.root,
      decisions: r.protocol.decisions,
      executor: ex,
      proof: r.proof,
      summary,
      executions: r.replay.executions,
    },
    null,
    2,
  );
}

/** The replay unit's summary: the report, the pairing proof and the unit's line, or one JSON object. */
export function replaySummaryOf(r: ReplayUnitRead, json: boolean): string {
  const summary = summarizeReplay(r.replay, r.manifest, {
    bootstrapSeed: r.protocol.summary.bootstrapSeed,
    replicates: r.protocol.summary.replicates,
  });
  const u = r.unit;
  const ex = r.protocol.executor as ExecutorIdentity;
  if (json) return replayJson(r, summary, ex);
  const via =
    ex.kind === 'lite'
      ? 'lite executor (in process)'
      : `bridge ${ex.endpoint} → ${ex.server.name} ${ex.server.version}, env ${ex.env}`;
  return [
    replayReport(summary),
    `from the sealed rows: ${r.proof.executions} executions = ${r.proof.distinctDecisionPairs} distinct (chain, decision) pairs + ${r.proof.floorExecutions} replay-floor, each looked up by ≥1 condition`,
    `replay unit ${u.dir}: ${r.rows.length} chain rows via ${via}, sealed, Merkle root ${u.seal.merkle.root}; decisions unit ${r.protocol.decisions.unitId} (root ${r.protocol.decisions.sealRoot})`,
  ].join('\n');
}
