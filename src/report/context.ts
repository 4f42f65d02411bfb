/**
 * The report's context, from the frozen protocol: what the campaign is (title, description), what it
 * claims (each registered criterion's claim in words = the hypotheses, grouped by question), what each
 * condition does (its registered description beside the glossary word for its kind), and a glossary of the
 * condition kinds and the verdict words. Also the frozen power analysis in one line per criterion, so the
 * MDE sits beside each result. Pure: protocol + adjudication in, tables out.
 */
import type { Adjudication } from '../adjudication/index.js';
import type { Protocol } from '../protocol/index.js';
import type { Table } from './model.js';
import { claimText } from './verdict-claims.js';

/** What each condition kind does (docs/architecture.md "Vocabulary"; the paper's ladder). */
export const CONDITION_GLOSSARY: readonly (readonly [string, string])[] = [
  ['A', 'reference: the policy reads its memory unmodified (the anchor every contrast is paired against)'],
  ['N', 'no access: memory reads are blocked, or the bank is cleared with its query clock kept'],
  ['O', 'oracle: the bank holds the correct fact (an upper reference for what memory could give)'],
  ['C', 'exact replicate: installs nothing — the determinism floor (any flip is nondeterminism)'],
  [
    'U',
    'one-ULP: every float leaf of the read records moved by one unit in the last place (numerical sensitivity control)',
  ],
  ['S', 'same-fact substitution: records from a donor episode with the same fact replace the reads'],
  ['T', 'different-fact substitution: records from a donor episode with a different fact replace the reads'],
  ['S_π', 'within-latent permutation of each retrieved record at every read (S_pi in files)'],
  ['T_μ', 'moment-matched resample of each retrieved record at every read (T_mu in files)'],
];

/** The verdict words and the statistics' letters. */
export const VERDICT_GLOSSARY: readonly (readonly [string, string])[] = [
  ['holds', 'the routing bound shows the registered claim (e.g. the lower bound lies above the margin)'],
  ['not detected', 'the routing bound excludes the claim; always printed with that bound'],
  ['unresolved', 'the bound neither shows nor excludes the claim (too few pairs, or too wide)'],
  ['invalid', 'a failed path/wiring gate withholds the number; no bound is shown'],
  ['excluded', 'a failed competence gate removed the cell; no bound is shown'],
  ['descriptive', 'a go/no-go rule downgraded the campaign: numbers shown, no verdict word'],
  ['met (registeredRuleMet)', "whether the registered rule's own condition is met (yes / no; — when withheld)"],
  ['b, c', 'paired units where the reference succeeds and the intervention fails (b), and the reverse (c)'],
  ['D', '(b − c)/n: positive when the intervention lowers success'],
  ['ρ', '(b + c)/n: the rate at which the intervention changes the outcome'],
  ['θ, θ̄', 'ρ_T − ρ_S (different-fact minus same-fact flips), and its task-weighted mean'],
  ['coverage', 'fraction of units whose every decision query selected ≥ 1 unmodified substituted record'],
];

const KIND_WORD: Readonly<Record<string, string>> = { S_pi: 'S_π', T_mu: 'T_μ' };

export function conditionKindWord(kind: string): string {
  return KIND_WORD[kind] ?? kind;
}

function kindMeaning(kind: string): string {
  const word = conditionKindWord(kind);
  return CONDITION_GLOSSARY.find(([k]) => k === word)?.[1] ?? '—';
}

export function hypothesesTable(p: Protocol): Table {
  const order = (q: string | undefined): number => (q === undefined ? 9 : Number(q.slice(1)));
  const criteria = [...p.criteria].sort((x, y) => order(x.question) - order(y.question));
  return {
    caption: 'Registered hypotheses: each criterion’s claim in words, frozen before any data',
    header: ['registered claim', 'criterion', 'question', 'role', 'description'],
    rows: criteria.map((c) => [claimText(c), c.id, c.question ?? '—', c.role, c.description ?? '—']),
  };
}

export function conditionsContextTable(p: Protocol): Table {
  const waves = (id: string): string =>
    p.waves
      .filter((w) => w.conditions.includes(id))
      .map((w) => `${w.id}${w.anchor === id ? ' (anchor)' : ''}`)
      .join(', ');
  return {
    caption: 'Conditions: the registered description, and what the kind means',
    header: ['condition', 'kind', 'waves', 'description', 'the kind means'],
    rows: p.conditions.map((c) => [
      c.id,
      conditionKindWord(c.kind),
      waves(c.id) || '—',
      c.description ?? '—',
      kindMeaning(c.kind),
    ]),
  };
}

export function glossaryTables(): Table[] {
  return [
    { caption: 'Condition kinds', header: ['term', 'meaning'], rows: CONDITION_GLOSSARY.map(([k, v]) => [k, v]) },
    {
      caption: 'Verdict words and statistics',
      header: ['term', 'meaning'],
      rows: VERDICT_GLOSSARY.map(([k, v]) => [k, v]),
    },
  ];
}

/** The context paragraphs: the protocol's title and description, and the design in one line. */
export function contextIntro(p: Protocol, a: Adjudication): string[] {
  const tasks = a.design.tasks.join(', ') || p.envs.map((e) => e.id).join(', ');
  const attempts = p.attempts
    ? `${p.attempts.count} attempt(s) per unit, attempt ${p.attempts.registered} registered`
    : `registered attempts ${a.design.registeredAttempts.join(', ')}`;
  return [
    p.title,
    ...(p.description ? [p.description] : []),
    `Design: ${p.n} seed-paired units per task and condition; tasks ${tasks}; ${attempts}; ${p.waves.length} wave(s).`,
  ];
}

/**
 * The frozen power analysis in words for one criterion's estimand: the registered MDE at each assumed
 * discordance when the protocol froze one for this estimand, else a plain "none frozen".
 */
export function frozenPowerText(p: Protocol, estimand: string): string {
  const m = p.mde;
  if (m === undefined) return 'no power analysis frozen';
  if (m.estimand !== undefined && m.estimand !== estimand) return `none for ${estimand} (frozen for ${m.estimand})`;
  const i = m.inputs;
  const mdes = m.outputs
    .map(
      (o) =>
        `${(100 * o.assumedDiscordance).toFixed(0)}%→${o.effect === null ? 'unreachable' : `${(100 * o.effect).toFixed(2)} pp`}`,
    )
    .join(', ');
  return `MDE at power ${i.power}, α ${i.alpha}, n ${i.n}: ${mdes} (assumed discordance→MDE)`;
}
