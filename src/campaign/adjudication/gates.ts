/**
 * The registered gates, evaluated on the sealed rows (EpisodeRowSchema v1). Each gives
 * { gate, passed, observed, expected, detail, hard, failing }. A gate with nothing to check fails —
 * absence of evidence is not delivery — and a gate whose evidence rows v1 do not carry (clock,
 * candidate) is reported `evaluable: false` and fails.
 *
 *   competence     per task (cell): reference success ≥ minSuccess and the Wilson lower bound above the
 *                  floor, on the registered attempts of the first wave that runs the reference
 *   path           every ok row of each `reads` condition made ≥ 1 read; every read of each
 *                  `emptyReads` condition returned empty (all attempts from its installation point on)
 *   replicate      C against its reference: outcome changes on the registered attempts ≤ maxChanged and
 *                  identical action digests on every attempt pair (both counts reported)
 *   survival       G_surv: coverage (units whose every decision query was covered) ≥ minCoverage per
 *                  substituting condition, on the registered attempts
 *   sham-validity  the sham flips ≥ minFlips outcomes against its wave's anchor, and substitutions
 *                  APPLIED / reads WITH HISTORY ≥ min (the paper's amendment: an empty read cannot be
 *                  substituted, so never divide by all reads unless the protocol registered 'all-reads');
 *                  with requireContentChange, no applied substitution left the content unchanged (reads
 *                  of every attempt from the sham's installation point on)
 *   empty-read     identical empty-read positions per (task, seed, attempt) across the conditions (each
 *                  condition in each wave that runs it), or each condition's empty reads = the prediction
 *   clock, candidate  not in rows v1: not evaluable, failed
 * Tasks excluded by competence are left out of every other gate.
 */
import type { Gate, Protocol } from '../../protocol/index.js';
import { wilson } from '../../stats/index.js';
import type { EpisodeRow } from '../episode-row.js';
import { outcomeOf, type RowIndex } from './joint-cohort.js';
import type { GateResult } from './types.js';

export interface GateContext {
  readonly protocol: Protocol;
  readonly index: RowIndex;
  readonly excludedTasks: ReadonlySet<string>;
}

type Result = Omit<GateResult, 'gate' | 'kind' | 'hard' | 'onFail'>;

function wavesRunning(protocol: Protocol, condition: string): number[] {
  return protocol.waves.filter((w) => w.conditions.includes(condition)).map((w) => w.id);
}

/** ok rows of a condition over every wave that runs it (all attempts), competent tasks only. */
function okRows(ctx: GateContext, condition: string): EpisodeRow[] {
  return wavesRunning(ctx.protocol, condition).flatMap((w) => ctx.index.rowsOf(w, condition)).filter((r) => r.status === 'ok' && !ctx.excludedTasks.has(r.task));
}

/** The first attempt a condition acts on: its registered installation point, else 1 (every attempt). */
function fromAttempt(protocol: Protocol, condition: string): number {
  const c = protocol.conditions.find((x) => x.id === condition);
  return c !== undefined && 'installAt' in c && c.installAt !== undefined ? c.installAt.attempt : 1;
}

function firstWave(ctx: GateContext, conditions: readonly string[]): number | undefined {
  return ctx.protocol.waves.find((w) => conditions.every((c) => w.conditions.includes(c)))?.id;
}

function key(r: EpisodeRow): string {
  return `${r.task}\u001f${r.seed}\u001f${r.attempt}`;
}

function competence(g: Extract<Gate, { kind: 'competence' }>, ctx: GateContext): Result {
  const wave = firstWave(ctx, [g.condition]);
  const rows = wave === undefined ? [] : ctx.index.registeredRowsOf(wave, g.condition);
  const tasks = ctx.index.tasks.map((task) => {
    const ys = rows.filter((r) => r.task === task).map((r) => outcomeOf(r, 'success')).filter((y) => y !== null);
    const n = ys.length;
    const successes = ys.filter((y) => y === 1).length;
    const wilsonLower = n === 0 ? null : wilson(successes, n, g.level)[0];
    const rate = n === 0 ? null : successes / n;
    const passed =
      n > 0 &&
      (g.minSuccess === undefined || (rate as number) >= g.minSuccess) &&
      (g.wilsonLowerAbove === undefined || (wilsonLower as number) > g.wilsonLowerAbove);
    return { task, successes, n, rate, wilsonLower, passed };
  });
  const failing = tasks.filter((t) => !t.passed).map((t) => t.task);
  return {
    passed: failing.length === 0,
    evaluable: true,
    observed: { wave: wave ?? null, tasks },
    expected: { minSuccess: g.minSuccess ?? null, wilsonLowerAbove: g.wilsonLowerAbove ?? null, level: g.level },
    detail:
      failing.length === 0
        ? `${g.condition} is competent in every task (${tasks.map((t) => `${t.task} ${t.successes}/${t.n}`).join(', ')})`
        : `${g.condition} fails competence in ${failing.join(', ')}: the cell${failing.length > 1 ? 's are' : ' is'} excluded`,
    failing,
  };
}

function path(g: Extract<Gate, { kind: 'path' }>, ctx: GateContext): Result {
  const reads = g.reads.map((condition) => {
    const rows = okRows(ctx, condition);
    return { condition, rows: rows.length, withReads: rows.filter((r) => r.reads.total > 0).length };
  });
  const emptyReads = (g.emptyReads ?? []).map((condition) => {
    const from = fromAttempt(ctx.protocol, condition);
    const rows = okRows(ctx, condition).filter((r) => r.attempt >= from);
    const allEmpty = rows.filter((r) => r.reads.total > 0 && r.reads.empty === r.reads.total).length;
    const total = rows.reduce((s, r) => s + r.reads.total, 0);
    const empty = rows.reduce((s, r) => s + r.reads.empty, 0);
    return { condition, rows: rows.length, allEmpty, reads: total, empty };
  });
  const failing = [
    ...reads.filter((r) => r.rows === 0 || r.withReads !== r.rows).map((r) => r.condition),
    ...emptyReads.filter((r) => r.rows === 0 || r.allEmpty !== r.rows).map((r) => r.condition),
  ];
  const parts = [
    ...reads.map((r) => `${r.condition}: ${r.withReads}/${r.rows} episodes read memory`),
    ...emptyReads.map((r) => `${r.condition}: ${r.allEmpty}/${r.rows} episodes with every read empty (${r.empty}/${r.reads} reads)`),
  ];
  return {
    passed: failing.length === 0,
    evaluable: true,
    observed: { reads, emptyReads },
    expected: { reads: 'every episode reads', emptyReads: 'every read empty' },
    detail: `${failing.length === 0 ? 'path holds' : `path fails for ${failing.join(', ')}`}: ${parts.join('; ')}`,
    failing,
  };
}

function replicate(g: Extract<Gate, { kind: 'replicate' }>, ctx: GateContext): Result {
  const wave = firstWave(ctx, [g.condition, g.reference]);
  const rowsOf = (c: string): Map<string, EpisodeRow> =>
    new Map((wave === undefined ? [] : ctx.index.rowsOf(wave, c)).filter((r) => !ctx.excludedTasks.has(r.task)).map((r) => [key(r), r]));
  const cRows = rowsOf(g.condition);
  const aRows = rowsOf(g.reference);
  let pairs = 0, changed = 0, digestPairs = 0, digestMismatches = 0;
  for (const [k, c] of cRows) {
    const a = aRows.get(k);
    if (a === undefined || a.status !== 'ok' || c.status !== 'ok') continue;
    digestPairs++;
    if (a.actionDigest !== c.actionDigest) digestMismatches++;
    if (!ctx.index.registered.has(c.attempt)) continue;
    const ya = outcomeOf(a, 'success'), yc = outcomeOf(c, 'success');
    if (ya === null || yc === null) continue;
    pairs++;
    if (ya !== yc) changed++;
  }
  const passed = pairs > 0 && changed <= g.maxChanged && digestMismatches === 0;
  return {
    passed,
    evaluable: true,
    observed: { pairs, changed, digestPairs, digestMismatches },
    expected: { maxChanged: g.maxChanged, digestMismatches: 0 },
    detail: `${g.condition} changes ${changed}/${pairs} outcomes against ${g.reference}; action digests differ in ${digestMismatches}/${digestPairs} episode pairs`,
    failing: passed ? [] : [g.condition],
  };
}

function survival(g: Extract<Gate, { kind: 'survival' }>, ctx: GateContext): Result {
  const conditions = g.conditions.map((condition) => {
    const rows = okRows(ctx, condition).filter((r) => ctx.index.registered.has(r.attempt));
    const covered = rows.filter((r) => r.reads.covered === true).length;
    return { condition, units: rows.length, covered, coverage: rows.length === 0 ? null : covered / rows.length };
  });
  const failing = conditions.filter((c) => c.coverage === null || c.coverage < g.minCoverage).map((c) => c.condition);
  return {
    passed: failing.length === 0,
    evaluable: true,
    observed: { conditions },
    expected: { minCoverage: g.minCoverage },
    detail: conditions.map((c) => `${c.condition}: ${c.covered}/${c.units} units covered`).join('; '),
    failing,
  };
}

function shamValidity(g: Extract<Gate, { kind: 'sham-validity' }>, ctx: GateContext): Result {
  const wave = ctx.protocol.waves.find((w) => w.conditions.includes(g.sham));
  const anchor = wave?.anchor ?? g.sham;
  const cohort = wave === undefined ? null : ctx.index.cohort([anchor, g.sham], 'success', ctx.excludedTasks, `gates.${g.id}`, wave.id);
  let flips = 0;
  if (cohort?.status === 'available') {
    for (const u of cohort.units) {
      const a = u.outcomes[anchor], s = u.outcomes[g.sham];
      if (a !== null && s !== null && a !== s) flips++;
    }
  }
  const from = fromAttempt(ctx.protocol, g.sham);
  const rows = okRows(ctx, g.sham).filter((r) => r.attempt >= from);
  const sum = (f: (r: EpisodeRow) => number): number => rows.reduce((s, r) => s + f(r), 0);
  const readsTotal = sum((r) => r.reads.total);
  const readsWithHistory = sum((r) => r.reads.withHistory);
  const substituted = sum((r) => r.reads.substituted);
  const substitutedUnchanged = sum((r) => r.reads.substitutedUnchanged);
  const applied = substituted + substitutedUnchanged;
  const denominator = g.substitutionFraction.denominator === 'reads-with-history' ? readsWithHistory : readsTotal;
  const fraction = denominator === 0 ? null : applied / denominator;
  const flipsOk = flips >= g.minFlips;
  const fractionOk = fraction !== null && fraction >= g.substitutionFraction.min;
  const changeOk = !g.requireContentChange || substitutedUnchanged === 0;
  const passed = flipsOk && fractionOk && changeOk;
  const why = [
    flipsOk ? null : `${g.sham} flips ${flips} < ${g.minFlips} outcomes`,
    fractionOk ? null : `substitution fraction ${applied}/${denominator} < ${g.substitutionFraction.min}`,
    changeOk ? null : `${substitutedUnchanged} applied substitutions left the content unchanged`,
  ].filter((s): s is string => s !== null);
  return {
    passed,
    evaluable: true,
    observed: { anchor, flips, readsTotal, readsWithHistory, substituted, substitutedUnchanged, applied, denominator, fraction },
    expected: {
      minFlips: g.minFlips,
      min: g.substitutionFraction.min,
      denominatorKind: g.substitutionFraction.denominator,
      requireContentChange: g.requireContentChange,
    },
    detail:
      `${g.sham} flips ${flips} outcomes against ${anchor}; substitutions applied ${applied}/${denominator} ` +
      `(${g.substitutionFraction.denominator === 'reads-with-history' ? 'reads with history' : 'all reads'}; ${readsTotal} reads in all)` +
      (why.length > 0 ? ` — fails: ${why.join('; ')}` : ''),
    failing: passed ? [] : [g.sham],
  };
}

function emptyRead(g: Extract<Gate, { kind: 'empty-read' }>, ctx: GateContext): Result {
  const series = g.conditions.flatMap((condition) =>
    wavesRunning(ctx.protocol, condition).map((wave) => ({
      id: `${condition}@w${wave}`,
      condition,
      rows: ctx.index.rowsOf(wave, condition).filter((r) => r.status === 'ok' && !ctx.excludedTasks.has(r.task)),
    })),
  );
  const emptyReads = series.map((s) => ({ condition: s.id, episodes: s.rows.length, empty: s.rows.reduce((t, r) => t + r.reads.empty, 0) }));
  if (g.rule === 'predicted-count') {
    const failing = [...new Set(series.filter((s, k) => s.rows.length === 0 || emptyReads[k]?.empty !== g.predicted).map((s) => s.condition))];
    return {
      passed: failing.length === 0 && g.predicted !== undefined,
      evaluable: true,
      observed: { emptyReads },
      expected: { rule: g.rule, predicted: g.predicted ?? null },
      detail: `${emptyReads.map((e) => `${e.condition}: ${e.empty}`).join(', ')} empty reads (predicted ${g.predicted ?? 'none registered'})`,
      failing: g.predicted === undefined ? [...g.conditions] : failing,
    };
  }
  const positions = series.map((s) => new Map(s.rows.map((r) => [key(r), r.reads.emptyPositions.join(',')])));
  const first = positions[0] ?? new Map<string, string>();
  let compared = 0, mismatches = 0;
  for (const [k, pos] of first) {
    const others = positions.slice(1).map((m) => m.get(k)).filter((p): p is string => p !== undefined);
    if (others.length === 0) continue;
    compared++;
    if (others.some((p) => p !== pos)) mismatches++;
  }
  const passed = compared > 0 && mismatches === 0;
  return {
    passed,
    evaluable: true,
    observed: { compared, mismatches, emptyReads },
    expected: { rule: g.rule, mismatches: 0 },
    detail: `empty-read positions differ in ${mismatches}/${compared} units across ${series.map((s) => s.id).join(', ')}`,
    failing: passed ? [] : [...g.conditions],
  };
}

function notEvaluable(g: Extract<Gate, { kind: 'clock' | 'candidate' }>): Result {
  const what = g.kind === 'clock' ? 'query-clock values' : 'first-query candidate and selected counts';
  return {
    passed: false,
    evaluable: false,
    observed: {},
    expected: { conditions: g.conditions.join(', ') },
    detail: `episode rows v1 carry no ${what}; the ${g.kind} gate cannot pass on absent evidence`,
    failing: [...g.conditions],
  };
}

function evaluate(g: Gate, ctx: GateContext): Result {
  switch (g.kind) {
    case 'competence':
      return competence(g, ctx);
    case 'path':
      return path(g, ctx);
    case 'replicate':
      return replicate(g, ctx);
    case 'survival':
      return survival(g, ctx);
    case 'sham-validity':
      return shamValidity(g, ctx);
    case 'empty-read':
      return emptyRead(g, ctx);
    case 'clock':
    case 'candidate':
      return notEvaluable(g);
  }
}

export function evaluateGate(g: Gate, ctx: GateContext): GateResult {
  return { gate: g.id, kind: g.kind, hard: g.hard, onFail: g.onFail, ...evaluate(g, ctx) };
}

/** Tasks excluded by hard competence gates with onFail 'exclude'. */
export function excludedTasksOf(results: readonly GateResult[]): Set<string> {
  const out = new Set<string>();
  for (const r of results) if (r.kind === 'competence' && r.hard && r.onFail === 'exclude') for (const t of r.failing) out.add(t);
  return out;
}

/** Competence gates first (they decide the exclusions), then every other gate on the competent tasks. */
export function evaluateGates(protocol: Protocol, index: RowIndex): { results: GateResult[]; excludedTasks: Set<string> } {
  const none = new Set<string>();
  const competenceResults = new Map<string, GateResult>();
  for (const g of protocol.gates) if (g.kind === 'competence') competenceResults.set(g.id, evaluateGate(g, { protocol, index, excludedTasks: none }));
  const excludedTasks = excludedTasksOf([...competenceResults.values()]);
  const ctx = { protocol, index, excludedTasks };
  const results = protocol.gates.map((g) => competenceResults.get(g.id) ?? evaluateGate(g, ctx));
  return { results, excludedTasks };
}
