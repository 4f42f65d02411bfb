/**
 * The report as data: titled sections of tables, every cell formatted by code from the adjudication
 * (and the sealed rows / unit records for provenance) — no number is typed by hand. Rendered to Markdown
 * (markdown.ts) and to self-contained HTML (html.ts). An estimand whose number a failed path/wiring gate
 * withholds (rule i) is shown as "withheld", never with its value; so is every number when all cells
 * were excluded by competence.
 */
import { invalidBecause } from '../adjudication/validity.js';
import type { Adjudication, AvailableEstimand, EstimandResult, Interval } from '../adjudication/index.js';
import type { Verdict } from '../adjudication/verdict-types.js';
import type { ReportInputs } from './load.js';
import { describeSimulatorEnvironment } from './simulator-environment-text.js';
import { firstQueryTable } from './first-query-table.js';
import { verdictRows } from './verdict-claims.js';
import { powerTables } from './power-table.js';
import { pValue, signedPp } from './text-table.js';

export interface Table {
  readonly caption?: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface Section {
  readonly id: string;
  readonly title: string;
  readonly intro?: string;
  readonly tables: readonly Table[];
  readonly notes?: readonly string[];
}

export interface ReportModel {
  readonly title: string;
  readonly summary: readonly string[];
  readonly sections: readonly Section[];
}

export const ppText = (x: number): string => `${signedPp(x)} pp`;
export const rateText = (x: number): string => `${(100 * x).toFixed(2)}%`;
export const intervalText = (lo: number, hi: number): string => `[${signedPp(lo)}, ${signedPp(hi)}] pp`;

function conditionsText(e: EstimandResult): string {
  const c = e.conditions;
  if (c.target !== undefined) return `${c.target} − ${c.sham} (vs ${c.reference})`;
  if (c.oracle !== undefined) return `${c.oracle} − ${c.none}`;
  if (c.condition !== undefined) return c.condition;
  return `${c.reference} vs ${c.intervention}`;
}

function countsText(e: AvailableEstimand): string {
  const k = e.counts;
  if (k.b !== undefined) return `b=${k.b}, c=${k.c}, n=${k.n}`;
  if (k.bPrime !== undefined) return `b′=${k.bPrime}, c′=${k.cPrime}, n=${k.n}`;
  return `${k.successes}/${k.n}`;
}

function estimateText(e: AvailableEstimand): string {
  return e.kind === 'successRate' ? rateText(e.estimate) : ppText(e.estimate);
}

function ivText(e: AvailableEstimand, iv: Interval): string {
  return e.kind === 'successRate' ? `[${rateText(iv.lower)}, ${rateText(iv.upper)}]` : intervalText(iv.lower, iv.upper);
}

export function withheldReasons(a: Adjudication, e: EstimandResult): string[] {
  const excludedAll = a.design.tasks.length > 0 && a.design.tasks.every((t) => a.design.excludedTasks.includes(t));
  if (excludedAll) return ['every cell excluded by competence'];
  return invalidBecause(e, a.gates);
}

function estimandTable(a: Adjudication): Table {
  const rows: string[][] = [];
  for (const e of a.estimands) {
    const cohort = `${e.cohort.resolved}/${e.cohort.paired}`;
    const removed = e.cohort.removed.total === 0 ? '0' : `${e.cohort.removed.total} (${Object.entries(e.cohort.removed.byCode).map(([k, v]) => `${k}: ${v}`).join(', ')})`;
    const head = [e.id, e.kind, conditionsText(e), cohort, removed, String(e.cohort.unresolved)];
    const withheld = withheldReasons(a, e);
    if (withheld.length > 0 || e.status !== 'available') {
      rows.push([...head, 'withheld', 'withheld', '—', '—', withheld.join('; ') || (e.status === 'unavailable' ? e.reason : '')]);
      continue;
    }
    const tests = e.tests.map((t) => `${t.id.replace('mcnemar-exact/', 'McNemar ')} p=${pValue(t.p)}`).join('; ');
    const ident = e.identification ? `identification [${signedPp(e.identification.lower)}, ${signedPp(e.identification.upper)}] pp` : '';
    e.intervals.forEach((iv, k) => {
      const env = iv.envelope ? ` (envelope ${intervalText(iv.envelope.lower, iv.envelope.upper)})` : '';
      const first = k === 0;
      rows.push([
        ...(first ? head : ['', '', '', '', '', '']),
        first ? countsText(e) : '',
        first ? estimateText(e) : '',
        `${ivText(e, iv)}${env}`,
        iv.label,
        first ? [tests, ident].filter((s) => s !== '').join('; ') : '',
      ]);
    });
  }
  return { header: ['estimand', 'kind', 'conditions', 'n resolved/paired', 'removed', 'unresolved', 'counts', 'estimate', 'interval', 'label', 'tests / notes'], rows };
}

function verdictTable(a: Adjudication, protocol: ReportInputs['protocol']): Table {
  return verdictRows(a, protocol);
}

function questionTables(a: Adjudication): Table[] {
  const main: Table = {
    header: ['question', 'registered verdict', 'criteria', 'reason'],
    rows: a.questions.map((q) => [q.question, q.verdict, q.registered.map((r) => `${r.criterion}: ${r.verdict}`).join(', ') || '—', q.reason]),
  };
  const retro = a.questions.flatMap((q) => q.retrospective.map((r) => [q.question, r.id, r.rule, r.verdict, r.lower === null ? '—' : ppText(r.lower), r.floor === null ? '—' : ppText(r.floor), r.reason]));
  return [main, { caption: 'Retrospective readings (post hoc; never a registered verdict)', header: ['question', 'reading', 'rule', 'verdict', 'lower bound', 'floor', 'detail'], rows: retro }];
}

function gateTable(a: Adjudication): Table {
  return {
    header: ['gate', 'kind', 'hard', 'on fail', 'passed', 'detail'],
    rows: a.gates.map((g) => [g.gate, g.kind, g.hard ? 'yes' : 'no', g.onFail, g.evaluable ? (g.passed ? 'passed' : 'FAILED') : 'not evaluable', g.detail]),
  };
}

function holmTable(a: Adjudication): Table {
  return {
    header: ['family', 'α', 'test', 'contrast', 'status', 'p', 'Holm-adjusted p', 'rejected'],
    rows: a.holm.flatMap((f) =>
      f.members.map((m) => [f.id, String(f.alpha), f.test, m.estimand, m.status, m.p === null ? '— (p = 1 in the family)' : pValue(m.p), m.adjusted === null ? '—' : pValue(m.adjusted), m.rejected === null ? '—' : m.rejected ? 'yes' : 'no']),
    ),
  };
}

function conditionTable(a: Adjudication): Table {
  return {
    caption: 'Per-condition summaries (the figures’ data)',
    header: ['condition', 'wave', 'kind', 'rows ok/failed/removed/unavailable', 'success', 'Wilson 95%', 'b, c vs anchor', 'ρ', 'ρ CP 95%', 'coverage'],
    rows: a.conditions.map((c) => {
      const withheld = a.gates.some((g) => g.hard && g.onFail === 'invalid' && !g.passed && g.failing.includes(c.condition));
      const s = c.success;
      const v = c.vsAnchor;
      return [
        c.condition,
        String(c.wave),
        c.kind,
        `${c.rows.ok}/${c.rows.failed}/${c.rows.removed}/${c.rows.unavailable}`,
        withheld ? 'withheld' : s ? `${s.successes}/${s.n} (${rateText(s.rate)})` : '—',
        withheld || !s ? '—' : `[${rateText(s.wilson95.lower)}, ${rateText(s.wilson95.upper)}]`,
        withheld || !v ? '—' : `b=${v.b}, c=${v.c} vs ${v.anchor} (n=${v.n})`,
        withheld || !v ? '—' : rateText(v.rho),
        withheld || !v ? '—' : `[${rateText(v.rhoCp95.lower)}, ${rateText(v.rhoCp95.upper)}]`,
        c.coverage ? `${c.coverage.covered}/${c.coverage.units} (${rateText(c.coverage.rate)})` : '—',
      ];
    }),
  };
}

function amendmentTables(inputs: ReportInputs): Table[] {
  const a = inputs.adjudication;
  const log = [
    ...a.amendments.log.map((m) => [m.id, m.at, m.classification, m.stateAtAmendment, m.affects.join(', '), m.text, 'listed in the adjudication']),
    ...inputs.laterAmendments.map((m) => [m.id, m.at, m.classification, m.stateAtAmendment, m.affects.join(', '), m.text, 'written after the adjudication']),
  ];
  return [
    { caption: 'Amendment log (amendments.jsonl; each classified by when it was written)', header: ['id', 'at', 'classification', 'state', 'affects', 'text', 'status'], rows: log },
    { caption: 'Amendments recorded inside the frozen protocol', header: ['id', 'date', 'stage', 'summary'], rows: a.amendments.protocol.map((m) => [m.id, m.date, m.stage, m.summary]) },
  ];
}

/** How each run session's policy host was isolated; "not recorded" for a hosted policy run before IMEP recorded it. */
function policyIsolationRows(inputs: ReportInputs): string[][] {
  if (inputs.protocol.policy === undefined) return [];
  return inputs.run.sessions.map((s, i) => [`policy host, session ${i + 1} (${s.action})`, s.policyIsolation ?? 'isolation: not recorded (run before IMEP recorded it)']);
}

/** What the bridged simulator of each run session reported about its stack (packages, renderer), where it did. */
function simulatorEnvironmentRows(inputs: ReportInputs): string[][] {
  return inputs.run.sessions.flatMap((s, i) => (s.simulatorEnvironment === undefined ? [] : [[`simulator stack, session ${i + 1} (${s.action})`, describeSimulatorEnvironment(s.simulatorEnvironment)]]));
}

function provenanceTable(inputs: ReportInputs): Table {
  const a = inputs.adjudication;
  const p = a.provenance;
  const check = inputs.crossChecks.at(-1);
  const rows: string[][] = [
    ['unit', a.unit.id],
    ['state', inputs.snapshot.state],
    ['protocol', `${p.protocolId} (sha256 ${p.protocolHash})`],
    ['plan hash', p.planHash],
    ['precommit sha256', p.precommitSha256],
    ['rows', `${p.rowCount} rows, sha256 ${p.rowsSha256}`],
    ['code identity', `git ${p.code.gitCommit ?? 'unknown'}${p.code.dirty ? ' (dirty)' : ''}, imep ${p.code.packageVersion}`],
    ...Object.entries(p.checkpointHashes).map(([k, v]) => [`checkpoint ${k}`, v]),
    ['node', p.nodeVersion],
    ['prng', `${p.prng.name} v${p.prng.version}`],
    ['seal root', `${inputs.seal.merkle.root} (${inputs.seal.merkle.scheme})`],
    ['adjudicator', `${a.adjudicator.name} v${a.adjudicator.version}; ${inputs.adjudicationFile} sha256 ${inputs.adjudicationSha256}`],
    ...policyIsolationRows(inputs),
    ...simulatorEnvironmentRows(inputs),
    ['adjudicated by', `${a.operator.id}; conditions ran by ${a.ranBy.join(', ') || '—'}${a.sameOperatorOverride ? `; same-operator override: ${a.sameOperatorOverride.reason}` : ''}`],
    ...(inputs.identityWarning ? [['adjudicator identity', `warning: ${inputs.identityWarning}`]] : []),
    ['cross-check', check ? `${check.outcome} (${check.method})` : 'not yet'],
    ['closeout root', inputs.closeout ? `${inputs.closeout.merkle.root} (closed ${inputs.closeout.closedAt})` : 'not closed'],
  ];
  return { header: ['item', 'value'], rows };
}

function goNoGoTable(a: Adjudication): Table {
  return {
    caption: `campaign status: ${a.goNoGo.status}${a.goNoGo.descriptiveGates.length > 0 ? ` (descriptive gates failed: ${a.goNoGo.descriptiveGates.join(', ')})` : ''}`,
    header: ['rule', 'subject', 'passed', 'observed', 'required', 'outcome', 'detail'],
    rows: a.goNoGo.rules.map((r) => [r.rule, r.subject, r.passed ? 'yes' : 'NO', r.observed === null ? '—' : String(Number(r.observed.toPrecision(6))), String(r.expected), r.outcome, r.detail]),
  };
}

export function reportModel(inputs: ReportInputs): ReportModel {
  const a = inputs.adjudication;
  const power = powerTables(inputs.protocol, a);
  const words = a.verdicts.map((v) => `${v.criterion}: ${v.verdict}`).join(' · ');
  return {
    title: `IMEP report — unit ${a.unit.id} (${a.provenance.protocolId})`,
    summary: [
      `Campaign status: ${a.goNoGo.status}. State: ${inputs.snapshot.state}. Seal root ${a.unit.sealRoot}.`,
      `Verdicts: ${words || 'none registered'}.`,
      `Every number below is generated by code from the sealed rows (${a.provenance.rowCount} rows) and the stored adjudication; none is typed by hand.`,
    ],
    sections: [
      { id: 'verdicts', title: 'Verdicts', intro: 'Each criterion\'s registered claim in words, whether its rule was met, the verdict word that answers the claim (holds: shown; not detected: the bound excludes it; unresolved: neither), and the bound beside the margin. Routed on bounds, never on point estimates; invalid and excluded withhold the number.', tables: [verdictTable(a, inputs.protocol)] },
      { id: 'questions', title: 'Q1–Q4', tables: questionTables(a) },
      { id: 'estimands', title: 'Estimands', intro: 'Each estimand with every interval and its coverage label (bounds are labelled at the coverage of the quantity bounded).', tables: [estimandTable(a)] },
      { id: 'gates', title: 'Gates', tables: [gateTable(a)] },
      { id: 'holm', title: 'Holm families', intro: 'An unavailable or invalid contrast keeps its slot at p = 1.', tables: [holmTable(a)] },
      { id: 'go-no-go', title: 'Go / no-go', tables: [goNoGoTable(a)] },
      { id: 'conditions', title: 'Conditions', tables: [conditionTable(a)] },
      { id: 'first-query', title: 'First memory query', tables: [firstQueryTable(inputs.rows, inputs.protocol.conditions.map((c) => c.id))] },
      { id: 'power', title: 'Power analysis (MDE)', intro: 'The frozen minimum-detectable-effect table, and the same analysis at what was observed.', ...power },
      { id: 'amendments', title: 'Amendments', tables: amendmentTables(inputs) },
      { id: 'provenance', title: 'Provenance', tables: [provenanceTable(inputs)] },
    ],
  };
}
