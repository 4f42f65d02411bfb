/**
 * The verdicts in words for the terminal (and the report's claim column): a bare verdict word misleads — "Q1: not
 * detected" reads as "no memory effect" when what the bound excludes is the registered claim "D_N lies below
 * +10.00 pp". So every verdict line carries its claim in words and the bound it routed on:
 *
 *   Q1: not detected — claim "D_N lies below +10.00 pp" excluded: D_N [+60.64, +69.44] pp (≥90% (Bonferroni, …))
 *
 * and a run ends with one line of what was found, derived generically from the adjudication (per condition
 * successes/n, each estimand's point and interval):
 *
 *   found: A 400/400, S_pi 270/400, …; D_N +65.50 pp [+60.64, +69.44], …
 *
 * The competence gate says the rate and the threshold it compared. Pure, no I/O.
 */
import { claimText, type Criterion, type Gate, type Protocol } from '../protocol/index.js';
import { readCanaryNote } from './read-canary-note.js';
import type { Adjudication, EstimandResult, GateResult } from './types.js';
import type { RoutedBound, Verdict } from './verdict-types.js';

/** A proportion as signed percentage points: 0.655 → "+65.50". */
export function signedPpText(x: number, digits = 2): string {
  const s = (100 * x).toFixed(digits);
  return x > 0 || (x === 0 && !Object.is(x, -0)) ? `+${s}` : s;
}
const interval = (lo: number, hi: number): string => `[${signedPpText(lo)}, ${signedPpText(hi)}]`;
const percent = (x: number, digits = 1): string => `${(100 * x).toFixed(digits)}%`;
const pText = (p: number): string =>
  p === 0 ? '0 (underflow)' : p < 1e-4 ? p.toExponential(2) : Number(p.toPrecision(3)).toString();

/** The claim without its "how it is judged" tail: "D_N lies below +10.00 pp". */
function shortClaim(v: Verdict, c: Criterion | undefined): string {
  if (c === undefined) return `${v.estimand} (${v.rule})`;
  const words = claimText(c);
  if (c.rule === 'p-below' || c.rule === 'point-below') return words;
  const cut = words.indexOf(': ');
  return cut < 0 ? words : words.slice(0, cut);
}

/** The bound a verdict routed on, in the terminal's short form. */
export function boundWords(estimand: string, b: RoutedBound, than?: string): string {
  if (b.routedOn === 'test')
    return `p = ${pText(b.p ?? 1)} vs α = ${b.threshold}; ${estimand} ${signedPpText(b.estimate)} pp ${interval(b.lower, b.upper)}`;
  if (b.routedOn === 'point')
    return `${estimand} ${signedPpText(b.estimate)} pp vs ${than === undefined ? '' : `${than} `}${signedPpText(b.threshold)} pp`;
  const comp =
    b.companions.length > 0
      ? ` vs ${b.companions.map((x) => `UB ${x.estimand} ${signedPpText(x.upper)} pp`).join(', ')}`
      : '';
  return `${estimand} ${interval(b.lower, b.upper)} pp${comp} (${b.label})`;
}

const RELATION: Record<Verdict['verdict'], string> = {
  holds: 'shown',
  'not detected': 'excluded',
  unresolved: 'neither shown nor excluded',
  invalid: 'not judged, number withheld',
  excluded: 'not judged, cell excluded',
  descriptive: 'not judged, descriptive only',
};

/** One terminal verdict line: the word, its claim in words, what the word says of the claim, and the bound. */
export function verdictLine(v: Verdict, c: Criterion | undefined): string {
  const head = `${v.criterion}: ${v.verdict} — claim "${shortClaim(v, c)}" ${RELATION[v.verdict]}`;
  if (v.verdict === 'invalid' || v.verdict === 'excluded') return `${head} (${v.because.join(', ')})`;
  const because = v.verdict === 'descriptive' ? ` (${v.because.join(', ')})` : '';
  if (v.bound === null) return `${head}${because}: ${v.reason}`;
  return `${head}${because}: ${boundWords(v.estimand, v.bound, c?.rule === 'point-below' ? c.than : undefined)}`;
}

/** The verdict lines of an adjudication, each with its registered criterion. */
export function verdictLines(a: Adjudication, criteria: readonly Criterion[]): string[] {
  const byId = new Map(criteria.map((c) => [c.id, c]));
  return a.verdicts.map((v) => verdictLine(v, byId.get(v.criterion)));
}

type Observed = { task?: unknown; successes?: unknown; n?: unknown; rate?: unknown; wilsonLower?: unknown };
const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/**
 * A competence gate in words with the rate and the threshold it compared, per task:
 * "competence gate competence: A succeeds 400/400 = 100.0% ≥ 50.0% required (Wilson 95% lower 99.0% > 33.3%): passed".
 * Null for any other gate kind.
 */
export function competenceText(g: GateResult, condition: string): string | null {
  if (g.kind !== 'competence') return null;
  const minSuccess = num(g.expected['minSuccess']);
  const wilsonAbove = num(g.expected['wilsonLowerAbove']);
  const level = num(g.expected['level']) ?? 0.95;
  const tasks = Array.isArray(g.observed['tasks']) ? (g.observed['tasks'] as readonly Observed[]) : [];
  const many = tasks.length > 1;
  const parts = tasks.map((t) => {
    const s = num(t.successes) ?? 0;
    const n = num(t.n) ?? 0;
    const rate = num(t.rate);
    const lower = num(t.wilsonLower);
    const where = many ? ` in ${String(t.task)}` : '';
    if (n === 0 || rate === null) return `${condition}${where} has no resolved episode`;
    const cmp = minSuccess === null ? '' : ` ${rate >= minSuccess ? '≥' : '<'} ${percent(minSuccess)} required`;
    const wil =
      wilsonAbove === null || lower === null
        ? ''
        : ` (Wilson ${Math.round(100 * level)}% lower ${percent(lower)} ${lower > wilsonAbove ? '>' : '≤'} ${percent(wilsonAbove)} required)`;
    return `${condition} succeeds${where} ${s}/${n} = ${percent(rate)}${cmp}${wil}`;
  });
  const verdict = g.passed ? 'passed' : `FAILED — ${g.failing.join(', ')} excluded`;
  return `competence gate ${g.gate}: ${parts.join('; ') || 'no task'}: ${verdict}`;
}

/** The competence gates of an adjudication in words, one line each (the condition from the registered gate). */
export function competenceLines(gates: readonly GateResult[], registered: readonly Gate[]): string[] {
  const conditionOf = new Map(registered.map((g) => [g.id, g.kind === 'competence' ? g.condition : '']));
  return gates
    .map((g) => competenceText(g, conditionOf.get(g.gate) || 'the reference condition'))
    .filter((x): x is string => x !== null);
}

function conditionCounts(a: Adjudication): string[] {
  const byCondition = new Map<string, { wave: number; text: string }[]>();
  for (const c of a.conditions) {
    const text = c.success === null ? 'no resolved rows' : `${c.success.successes}/${c.success.n}`;
    byCondition.set(c.condition, [...(byCondition.get(c.condition) ?? []), { wave: c.wave, text }]);
  }
  return [...byCondition].flatMap(([condition, waves]) =>
    new Set(waves.map((w) => w.text)).size === 1
      ? [`${condition} ${waves[0]?.text ?? ''}`]
      : waves.map((w) => `${condition}@w${w.wave} ${w.text}`),
  );
}

/** Estimands that are rates (never negative): printed without a sign. */
const RATE_KINDS: ReadonlySet<string> = new Set(['successRate', 'rho']);
const ratePp = (x: number): string => (100 * x).toFixed(2);

function estimandText(e: EstimandResult, routed: RoutedBound | undefined): string {
  if (e.status !== 'available') return `${e.id} unavailable`;
  const f = RATE_KINDS.has(e.kind) ? ratePp : (x: number): string => signedPpText(x);
  const lower = routed?.lower ?? e.intervals[0]?.lower;
  const upper = routed?.upper ?? e.intervals[0]?.upper;
  const iv = lower === undefined || upper === undefined ? '' : ` [${f(lower)}, ${f(upper)}]`;
  return `${e.id} ${f(e.estimate)} pp${iv}`;
}

/**
 * The one line of what was found: every condition's successes/n (a condition run in several waves with different
 * counts is listed per wave), then every registered estimand's point estimate and interval — the interval a
 * verdict routed on where one did (a bound rule's, not a test's), else the estimand's first.
 */
export function foundLine(a: Adjudication): string {
  const routed = new Map<string, RoutedBound>();
  for (const v of a.verdicts)
    if (v.bound !== undefined && v.bound !== null && v.bound.routedOn === 'bound' && !routed.has(v.estimand))
      routed.set(v.estimand, v.bound);
  const estimands = a.estimands.map((e) => estimandText(e, routed.get(e.id)));
  return `found: ${conditionCounts(a).join(', ')}; ${estimands.join(', ')}`;
}

/**
 * What the terminal prints under "adjudicated …" (campaign adjudicate, campaign run --through closeout): every verdict
 * line, the competence gates with their rates and thresholds, the read-path canary; each indented by two spaces.
 */
export function adjudicationLines(a: Adjudication, protocol: Protocol): string[] {
  return [
    ...verdictLines(a, protocol.criteria),
    ...competenceLines(a.gates, protocol.gates),
    readCanaryNote(a.gates),
  ].map((l) => `  ${l}`);
}
