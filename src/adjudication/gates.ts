/**
 * The registered gates, evaluated on the sealed rows (EpisodeRowSchema v1). Each gives
 * { gate, passed, observed, expected, detail, hard, failing }. A gate with nothing to check fails —
 * absence of evidence is not delivery. Every gate is evaluable from rows v1 (`evaluable: true`).
 *
 *   competence     per task (cell): reference success ≥ minSuccess and the Wilson lower bound above the
 *                  floor, on the registered attempts of the first wave that runs the reference
 *   path           every ok row of each `reads` condition made ≥ 1 read; every read of each
 *                  `emptyReads` condition returned empty (all attempts from its installation point on)
 *   replicate      C against its reference: outcome changes on the registered attempts ≤ maxChanged and
 *                  identical action digests on every attempt pair (both counts reported). Under registered
 *                  per-condition execution noise (simulator.executionNoise, scope per-condition) C executes its
 *                  own noise draw, so its executed actions differ from the reference's by design: the digests
 *                  are counted and reported but not required to agree (the outcome tolerance still is)
 *   survival       G_surv: coverage (units whose every decision query was covered) ≥ minCoverage per
 *                  substituting condition, on the registered attempts
 *   sham-validity  the sham flips ≥ minFlips outcomes against its wave's anchor, and substitutions
 *                  APPLIED / reads WITH HISTORY ≥ min (the paper's amendment: an empty read cannot be
 *                  substituted, so never divide by all reads unless the protocol registered 'all-reads');
 *                  with requireContentChange, no applied substitution left the content unchanged (reads
 *                  of every attempt from the sham's installation point on)
 *   read-canary    the canary (reads returning known-wrong content, kinds with the read-canary role) changes ≥ minChanged outcomes
 *                  against its wave's anchor and substituted ≥ 1 read; else the read path is not exercised and the
 *                  guarded conditions' numbers are withheld (failing = canary + guards)
 *   empty-read     identical empty-read positions per (task, seed, attempt) across the conditions (each
 *                  condition in each wave that runs it), or each condition's empty reads = the prediction
 *   clock          for each listed condition (declared to keep the scope's query clock) in each wave that
 *                  runs it: the first-query clock (EpisodeRow.reads.firstQuery.clock) equals the wave
 *                  anchor's on every paired unit, on the checked attempt
 *   candidate      the same for the first-query candidate count (reads.firstQuery.candidates): installation
 *                  keeps the candidate set. The gate has no distribution option (schema-gates.ts registers
 *                  only `conditions`), so per-unit equality is checked — which implies equal distributions.
 *   clock and candidate pair rows by (task, seed, attempt) within the wave, ok rows of both only; the
 *   checked attempt is the condition's registered installation point (installAt.attempt: the first query
 *   after the clear or install), else the registered attempts. A pair where exactly one row made a query
 *   is a mismatch; a pair where neither did is counted (noQuery) but checks nothing. Each condition × wave
 *   passes when compared > 0 and mismatches = 0.
 * Tasks excluded by competence are left out of every other gate. After the registered gates come the validity
 * checks every protocol runs (protocol `validity`): informative-removal (removal-check.ts) and blocked-reads
 * (blocked-reads-check.ts).
 */
import { simulatorFaces } from '../core/index.js';
import type { Gate, Protocol } from '../protocol/index.js';
import { wilson } from '../stats/index.js';
import type { EpisodeRow } from '../evidence/index.js';
import { blockedReads } from './blocked-reads-check.js';
import { outcomeOf, type RowIndex } from './joint-cohort.js';
import { informativeRemoval } from './removal-check.js';
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
  return wavesRunning(ctx.protocol, condition)
    .flatMap((w) => ctx.index.rowsOf(w, condition))
    .filter((r) => r.status === 'ok' && !ctx.excludedTasks.has(r.task));
}

/** The first attempt a condition acts on: its registered installation point, else 1 (every attempt). */
function fromAttempt(protocol: Protocol, condition: string): number {
  const c = protocol.conditions.find((x) => x.id === condition);
  return c !== undefined && 'installAt' in c && c.installAt !== undefined ? c.installAt.attempt : 1;
}

function firstWave(ctx: GateContext, conditions: readonly string[]): number | undefined {
  return ctx.protocol.waves.find((w) => conditions.every((c) => w.conditions.includes(c)))?.id;
}

/** Whether the protocol registers execution noise drawn independently per condition (then C's actions differ from A's). */
function perConditionNoise(protocol: Protocol): boolean {
  return simulatorFaces.get(protocol.simulator.kind)?.executionNoise?.(protocol.simulator)?.scope === 'per-condition';
}

function key(r: EpisodeRow): string {
  return `${r.task}\u001f${r.seed}\u001f${r.attempt}`;
}

function competence(g: Extract<Gate, { kind: 'competence' }>, ctx: GateContext): Result {
  const wave = firstWave(ctx, [g.condition]);
  const rows = wave === undefined ? [] : ctx.index.registeredRowsOf(wave, g.condition);
  const tasks = ctx.index.tasks.map((task) => {
    const ys = rows
      .filter((r) => r.task === task)
      .map((r) => outcomeOf(r, 'success'))
      .filter((y) => y !== null);
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
    ...emptyReads.map(
      (r) => `${r.condition}: ${r.allEmpty}/${r.rows} episodes with every read empty (${r.empty}/${r.reads} reads)`,
    ),
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
    new Map(
      (wave === undefined ? [] : ctx.index.rowsOf(wave, c))
        .filter((r) => !ctx.excludedTasks.has(r.task))
        .map((r) => [key(r), r]),
    );
  const cRows = rowsOf(g.condition);
  const aRows = rowsOf(g.reference);
  let pairs = 0,
    changed = 0,
    digestPairs = 0,
    digestMismatches = 0;
  for (const [k, c] of cRows) {
    const a = aRows.get(k);
    if (a === undefined || a.status !== 'ok' || c.status !== 'ok') continue;
    digestPairs++;
    if (a.actionDigest !== c.actionDigest) digestMismatches++;
    if (!ctx.index.registered.has(c.attempt)) continue;
    const ya = outcomeOf(a, 'success'),
      yc = outcomeOf(c, 'success');
    if (ya === null || yc === null) continue;
    pairs++;
    if (ya !== yc) changed++;
  }
  const noisy = perConditionNoise(ctx.protocol);
  const passed = pairs > 0 && changed <= g.maxChanged && (noisy || digestMismatches === 0);
  return {
    passed,
    evaluable: true,
    observed: { pairs, changed, digestPairs, digestMismatches },
    expected: {
      maxChanged: g.maxChanged,
      digestMismatches: noisy ? 'not required (per-condition execution noise)' : 0,
    },
    detail: `${g.condition} changes ${changed}/${pairs} outcomes against ${g.reference}; action digests differ in ${digestMismatches}/${digestPairs} episode pairs${noisy ? ' (per-condition execution noise: each condition executes its own draw, digests are not required to agree)' : ''}`,
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
  const cohort =
    wave === undefined
      ? null
      : ctx.index.cohort([anchor, g.sham], 'success', ctx.excludedTasks, `gates.${g.id}`, wave.id);
  let flips = 0;
  if (cohort?.status === 'available') {
    for (const u of cohort.units) {
      const a = u.outcomes[anchor],
        s = u.outcomes[g.sham];
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
    observed: {
      anchor,
      flips,
      readsTotal,
      readsWithHistory,
      substituted,
      substitutedUnchanged,
      applied,
      denominator,
      fraction,
    },
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

/**
 * read-canary: the canary's reads return known-wrong content; a policy that acts on what memory.read returns must
 * change some outcomes against the wave anchor. One that does not — it keeps its own copy of its memory and ignores
 * the reads, or needs no memory at all — leaves every read intervention measuring nothing, so the guarded
 * conditions' numbers are withheld. A canary that substituted no read cannot test anything and fails too.
 */
function readCanary(g: Extract<Gate, { kind: 'read-canary' }>, ctx: GateContext): Result {
  const wave = ctx.protocol.waves.find((w) => w.conditions.includes(g.canary));
  const anchor = wave?.anchor ?? g.canary;
  const cohort =
    wave === undefined
      ? null
      : ctx.index.cohort([anchor, g.canary], 'success', ctx.excludedTasks, `gates.${g.id}`, wave.id);
  let pairs = 0,
    changed = 0;
  if (cohort?.status === 'available') {
    for (const u of cohort.units) {
      const a = u.outcomes[anchor],
        c = u.outcomes[g.canary];
      if (a === null || c === null) continue;
      pairs++;
      if (a !== c) changed++;
    }
  }
  const from = fromAttempt(ctx.protocol, g.canary);
  const rows = okRows(ctx, g.canary).filter((r) => r.attempt >= from);
  const readsWithHistory = rows.reduce((s, r) => s + r.reads.withHistory, 0);
  const applied = rows.reduce((s, r) => s + r.reads.substituted + r.reads.substitutedUnchanged, 0);
  const acted = applied > 0;
  const passed = pairs > 0 && acted && changed >= g.minChanged;
  const guarded = g.guards.join(', ');
  const detail = passed
    ? `read path exercised: ${g.canary} (wrong content at ${applied}/${readsWithHistory} reads with history) changes ${changed}/${pairs} outcomes against ${anchor}`
    : !acted
      ? `read path not tested: ${g.canary} substituted no read (${applied}/${readsWithHistory} reads with history), so it cannot show that decisions depend on what memory.read returns — the numbers of ${guarded} are withheld`
      : `read path not exercised: ${g.canary} (wrong content at ${applied}/${readsWithHistory} reads with history) changes ${changed}/${pairs} outcomes against ${anchor}, fewer than ${g.minChanged}: the policy's decisions do not depend on what memory.read returns (it may keep its own copy of its memory, or need none) — the numbers of ${guarded} are withheld`;
  return {
    passed,
    evaluable: true,
    observed: { anchor, pairs, changed, readsWithHistory, applied },
    expected: { minChanged: g.minChanged, applied: '> 0' },
    detail,
    failing: passed ? [] : [...new Set([g.canary, ...g.guards])],
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
  const emptyReads = series.map((s) => ({
    condition: s.id,
    episodes: s.rows.length,
    empty: s.rows.reduce((t, r) => t + r.reads.empty, 0),
  }));
  if (g.rule === 'predicted-count') {
    const failing = [
      ...new Set(
        series.filter((s, k) => s.rows.length === 0 || emptyReads[k]?.empty !== g.predicted).map((s) => s.condition),
      ),
    ];
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
  let compared = 0,
    mismatches = 0;
  for (const [k, pos] of first) {
    const others = positions
      .slice(1)
      .map((m) => m.get(k))
      .filter((p): p is string => p !== undefined);
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

/** The attempts the clock and candidate gates check for a condition: its installation point, else the registered ones. */
function checkedAttempts(ctx: GateContext, condition: string): number[] {
  const c = ctx.protocol.conditions.find((x) => x.id === condition);
  if (c !== undefined && 'installAt' in c && c.installAt !== undefined) return [c.installAt.attempt];
  return [...ctx.index.registered].sort((a, b) => a - b);
}

function firstQuery(g: Extract<Gate, { kind: 'clock' | 'candidate' }>, ctx: GateContext): Result {
  const value = (r: EpisodeRow): number | null =>
    r.reads.firstQuery === null ? null : g.kind === 'clock' ? r.reads.firstQuery.clock : r.reads.firstQuery.candidates;
  const series = g.conditions.flatMap((condition) =>
    ctx.protocol.waves
      .filter((w) => w.conditions.includes(condition))
      .map((wave) => {
        const attempts = checkedAttempts(ctx, condition);
        const usable = (r: EpisodeRow): boolean =>
          r.status === 'ok' && !ctx.excludedTasks.has(r.task) && attempts.includes(r.attempt);
        const reference = new Map(
          ctx.index
            .rowsOf(wave.id, wave.anchor)
            .filter(usable)
            .map((r) => [key(r), r]),
        );
        let pairs = 0,
          compared = 0,
          mismatches = 0,
          noQuery = 0;
        for (const r of ctx.index.rowsOf(wave.id, condition).filter(usable)) {
          const a = reference.get(key(r));
          if (a === undefined) continue;
          pairs++;
          const x = value(r),
            y = value(a);
          if (x === null && y === null) {
            noQuery++;
            continue;
          }
          compared++;
          if (x !== y) mismatches++;
        }
        return {
          condition: `${condition}@w${wave.id}`,
          id: condition,
          reference: wave.anchor,
          attempts,
          pairs,
          compared,
          mismatches,
          noQuery,
        };
      }),
  );
  const bad = series.filter((s) => s.compared === 0 || s.mismatches > 0);
  const failing = [...new Set(bad.map((s) => s.id))];
  const what = g.kind === 'clock' ? 'first-query clock' : 'first-query candidate count';
  return {
    passed: series.length > 0 && failing.length === 0,
    evaluable: true,
    observed: {
      conditions: series.map(({ condition, reference, pairs, compared, mismatches, noQuery }) => ({
        condition,
        reference,
        pairs,
        compared,
        mismatches,
        noQuery,
      })),
    },
    expected: { rule: `the ${what} equals the wave anchor's on every paired unit`, mismatches: 0 },
    detail:
      series.length === 0
        ? `no wave runs ${g.conditions.join(', ')}`
        : series
            .map(
              (s) =>
                `${s.condition}: ${what} differs from ${s.reference} in ${s.mismatches}/${s.compared} units (attempt ${s.attempts.join(', ')}${s.noQuery > 0 ? `; ${s.noQuery} pairs made no query` : ''})`,
            )
            .join('; '),
    failing: series.length === 0 ? [...g.conditions] : failing,
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
    case 'read-canary':
      return readCanary(g, ctx);
    case 'clock':
    case 'candidate':
      return firstQuery(g, ctx);
  }
}

export function evaluateGate(g: Gate, ctx: GateContext): GateResult {
  return { gate: g.id, kind: g.kind, hard: g.hard, onFail: g.onFail, ...evaluate(g, ctx) };
}

/** Tasks excluded by hard competence gates with onFail 'exclude'. */
export function excludedTasksOf(results: readonly GateResult[]): Set<string> {
  const out = new Set<string>();
  for (const r of results)
    if (r.kind === 'competence' && r.hard && r.onFail === 'exclude') for (const t of r.failing) out.add(t);
  return out;
}

/** Competence gates first (they decide the exclusions), then every other gate on the competent tasks. */
export function evaluateGates(
  protocol: Protocol,
  index: RowIndex,
): { results: GateResult[]; excludedTasks: Set<string> } {
  const none = new Set<string>();
  const competenceResults = new Map<string, GateResult>();
  for (const g of protocol.gates)
    if (g.kind === 'competence') competenceResults.set(g.id, evaluateGate(g, { protocol, index, excludedTasks: none }));
  const excludedTasks = excludedTasksOf([...competenceResults.values()]);
  const ctx = { protocol, index, excludedTasks };
  const results = protocol.gates.map((g) => competenceResults.get(g.id) ?? evaluateGate(g, ctx));
  // the validity checks every protocol runs (protocol `validity`), after the registered gates
  results.push(informativeRemoval(protocol, index, excludedTasks));
  const blocked = blockedReads(protocol, index, excludedTasks);
  if (blocked !== null) results.push(blocked);
  return { results, excludedTasks };
}
