/**
 * The report of a suite protocol (a benchmark task set run in one protocol, src/protocol/suite-expand.ts): one
 * section per task — its success rate per condition with exact (Clopper–Pearson 95%) intervals from the sealed rows,
 * its per-task verdicts (criteria on `<id>@<task>` estimands) and its filmstrips — after a section naming the
 * benchmark, the pooled verdicts and the multiplicity families (the Holm families the suite registered). Every number
 * comes from the sealed rows or the stored adjudication by code. A protocol without `suite` gets no section here.
 */
import type { Adjudication } from '../adjudication/index.js';
import type { EpisodeRow } from '../evidence/index.js';
import { clopperPearsonLower, clopperPearsonUpper } from '../stats/index.js';
import { filmstripHtml, filmstripMarkdown, type Filmstrips } from './filmstrip.js';
import type { ReportInputs } from './load.js';
import type { Section, Table } from './model.js';
import { pValue } from './text-table.js';
import { verdictRows } from './verdict-claims.js';

const rate = (x: number): string => `${(100 * x).toFixed(2)}%`;

/** Success per (wave, condition) on one task's registered attempts: k/n, rate and the exact two-sided 95% interval. */
function successTable(a: Adjudication, rows: readonly EpisodeRow[], task: string): Table {
  const registered = new Set(a.design.registeredAttempts);
  const out: string[][] = [];
  for (const w of a.design.waves) {
    for (const condition of w.conditions) {
      const mine = rows.filter(
        (r) =>
          r.task === task &&
          r.wave === w.id &&
          r.condition === condition &&
          registered.has(r.attempt) &&
          r.status === 'ok' &&
          r.success !== null,
      );
      const n = mine.length;
      const k = mine.filter((r) => r.success === true).length;
      out.push([
        condition,
        String(w.id),
        n === 0 ? '—' : `${k}/${n} (${rate(k / n)})`,
        n === 0 ? '—' : `[${rate(clopperPearsonLower(k, n, 0.025))}, ${rate(clopperPearsonUpper(k, n, 0.025))}]`,
      ]);
    }
  }
  return {
    caption: `Success on ${task} per condition (registered attempts, resolved ok rows; descriptive)`,
    header: ['condition', 'wave', 'success', 'Clopper–Pearson 95%'],
    rows: out,
  };
}

function holmRows(a: Adjudication, families: ReadonlySet<string>): string[][] {
  return a.holm
    .filter((f) => families.has(f.id))
    .flatMap((f) =>
      f.members.map((m) => [
        f.id,
        String(f.alpha),
        m.estimand,
        m.p === null ? '— (p = 1 in the family)' : pValue(m.p),
        m.adjusted === null ? '—' : pValue(m.adjusted),
        m.rejected === null ? '—' : m.rejected ? 'yes' : 'no',
      ]),
    );
}

/** The suite's sections (none without `suite`). */
export function suiteSections(inputs: ReportInputs, strips: Filmstrips): Section[] {
  const p = inputs.protocol;
  const suite = p.suite;
  if (suite === undefined) return [];
  const a = inputs.adjudication;
  const tasks = p.envs.map((e) => e.task ?? e.id);
  const taskOf = new Map(p.estimands.map((e) => [e.id, e.task]));
  const criterionTask = (estimand: string): string | undefined => taskOf.get(estimand);
  const pooled = { ...a, verdicts: a.verdicts.filter((v) => criterionTask(v.estimand) === undefined) };
  const suiteFamilies = new Set(
    p.holmFamilies.filter((f) => f.contrasts.every((c) => criterionTask(c) !== undefined)).map((f) => f.id),
  );
  const head: Section = {
    id: 'suite',
    title: `Suite: ${suite.benchmark}`,
    intro: `${tasks.length} task${tasks.length === 1 ? '' : 's'} of the benchmark ${suite.benchmark}: ${tasks.join(', ')}. Per-task estimands and criteria are named <id>@<task> and registered with the protocol; ${suite.multiplicity ? `each per-task criterion decides on its Holm-adjusted p within its family over the tasks (α = ${suite.multiplicity.alpha})` : 'no multiplicity adjustment was registered: each per-task verdict is at its own α'}.`,
    tables: [
      { caption: 'Pooled verdicts (over every task)', ...verdictRows(pooled, p) },
      {
        caption: 'Multiplicity: the Holm families over the tasks',
        header: ['family', 'α', 'contrast', 'p', 'Holm-adjusted p', 'rejected'],
        rows: holmRows(a, suiteFamilies),
      },
    ],
  };
  return [
    head,
    ...tasks.flatMap((task, k): Section[] => {
      const verdicts = a.verdicts.filter((v) => criterionTask(v.estimand) === task);
      const pairs = strips.pairs.filter((x) => x.task === task);
      const tables: Section = {
        id: `task-${k + 1}`,
        title: `Task ${task}`,
        tables: [
          successTable(a, inputs.rows, task),
          ...(verdicts.length > 0 ? [{ caption: `Verdicts on ${task}`, ...verdictRows({ ...a, verdicts }, p) }] : []),
        ],
        notes: pairs.length === 0 ? [`No filmstrip pair on ${task}.`] : [],
      };
      if (pairs.length === 0) return [tables];
      const mine: Filmstrips = { ...strips, pairs, note: `The filmstrip pairs on ${task}.` };
      const episodes: Section = {
        id: `task-${k + 1}-episodes`,
        title: `Task ${task}: the episodes`,
        tables: [],
        raw: { html: filmstripHtml(mine), markdown: filmstripMarkdown(mine) },
      };
      return [tables, episodes];
    }),
  ];
}
