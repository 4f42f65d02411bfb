/**
 * Synthetic sealed units for the adjudication, cross-check and report tests: a protocol object (validated
 * by the protocol schema and its cross-field checks), its plan, and one EpisodeRowSchema v1 row per
 * planned episode whose outcome and read summary come from a function of the episode — so every b, c,
 * b′, c′ is known in advance. The unit is driven through the store: create → precommit → run → seal.
 */
import { sha256Hex } from '../../src/core/hash.js';
import {
  completeRun,
  createUnit,
  explicitOperator,
  precommit,
  seal,
  startRun,
  amend,
} from '../../src/evidence/index.js';
import { EpisodeRowSchema, type EpisodeRow, type ReadSummary } from '../../src/evidence/records/episode-row.js';
import {
  assertCrossChecked,
  buildPlan,
  CriterionSchema,
  ProtocolSchema,
  type Criterion,
  type PlannedEpisode,
  type Protocol,
  type ProtocolInput,
} from '../../src/protocol/index.js';

export const RUNNER = explicitOperator('runner-session');
export const REVIEWER = explicitOperator('review-session');

let tick = 0;
export const clock = (): Date => new Date(Date.UTC(2026, 1, 1, 0, 0, tick++));

export interface EpisodeContext {
  readonly ep: PlannedEpisode;
  /** Index of the seed in the band (0-based). */
  readonly i: number;
  readonly taskIndex: number;
  readonly kind: string;
}

export interface RowSpec {
  readonly status?: EpisodeRow['status'];
  readonly success?: boolean | null;
  readonly decisionCorrect?: boolean | null;
  readonly failureCode?: string;
  readonly reads?: Partial<ReadSummary>;
  readonly actionDigest?: string;
}

/**
 * The first query of an episode, the same in every condition: attempt 1 starts the scope clock at 1 with
 * an empty bank; a later attempt continues the clock after 23 reads per attempt and sees 4–13 candidates
 * (seed dependent), as a bank persisting across attempts would.
 */
export function defaultFirstQuery(ep: PlannedEpisode, i: number): ReadSummary['firstQuery'] {
  return ep.attempt === 1
    ? { clock: 1, candidates: 0 }
    : { clock: 1 + 23 * (ep.attempt - 1), candidates: 4 + (i % 10) };
}

/** Read summaries by condition kind: 23 reads per episode, the first one without history. */
export function defaultReads(kind: string): ReadSummary {
  const base: ReadSummary = {
    total: 23,
    empty: 1,
    emptyPositions: [1],
    withHistory: 22,
    substituted: 0,
    substitutedUnchanged: 0,
    decisionQueries: 1,
    coveredDecisionQueries: 0,
    covered: null,
    contentDigest: 'ab12',
    firstQuery: { clock: 1, candidates: 0 },
  };
  if (kind === 'N')
    return { ...base, empty: 23, emptyPositions: Array.from({ length: 23 }, (_, k) => k + 1), withHistory: 0 };
  if (['U', 'S_pi', 'T_mu', 'S', 'T'].includes(kind))
    return { ...base, substituted: 22, covered: true, coveredDecisionQueries: 1, contentDigest: 'cd34' };
  return base;
}

export function blackoutProtocol(over: Partial<ProtocolInput> = {}): ProtocolInput {
  return {
    version: 1,
    id: 'mini-blackout',
    title: 'mini blackout ladder',
    simulator: { kind: 'lite' },
    envs: [{ id: 'ShellGameTouch-lite', kwargs: { blackoutFromStep: 6 } }],
    checkpoint: { path: 'checkpoints/lite-memvla', file: 'model.json', sha256: 'c'.repeat(64) },
    memory: {
      bank: 'episode-local',
      banks: ['perceptual', 'cognitive'],
      capacity: 16,
      k: 4,
      consolidation: 'token-merge',
    },
    seeds: { bands: [{ start: 610000, end: 610039 }] },
    n: 40,
    attempts: { count: 1, registered: 1 },
    conditions: [
      { id: 'A', kind: 'A' },
      { id: 'S_pi', kind: 'S_pi', seed: 1 },
      { id: 'T_mu', kind: 'T_mu', seed: 2 },
      { id: 'U', kind: 'U', direction: 'away', installation: 'read' },
      { id: 'N_blk', kind: 'N', variant: 'block' },
      { id: 'C', kind: 'C' },
    ],
    waves: [
      { id: 1, conditions: ['A', 'S_pi', 'T_mu', 'U'], anchor: 'A' },
      { id: 2, conditions: ['A', 'N_blk', 'C'], anchor: 'A' },
    ],
    estimands: [
      { id: 'SR_A', kind: 'successRate', condition: 'A' },
      { id: 'D_N', kind: 'D', reference: 'A', intervention: 'N_blk' },
      { id: 'D_S_pi', kind: 'D', reference: 'A', intervention: 'S_pi' },
      { id: 'D_T_mu', kind: 'D', reference: 'A', intervention: 'T_mu' },
      { id: 'D_U', kind: 'D', reference: 'A', intervention: 'U' },
      { id: 'rho_S_pi', kind: 'rho', reference: 'A', intervention: 'S_pi' },
      { id: 'rho_T_mu', kind: 'rho', reference: 'A', intervention: 'T_mu' },
      { id: 'rho_U', kind: 'rho', reference: 'A', intervention: 'U' },
      { id: 'rho_C', kind: 'rho', reference: 'A', intervention: 'C' },
      { id: 'theta', kind: 'theta', T: 'T_mu', S: 'S_pi', reference: 'A' },
    ],
    criteria: [
      {
        id: 'Q1',
        question: 'Q1',
        estimand: 'D_N',
        rule: 'upper-bound-below',
        margin: 0.1,
        method: 'exact-cp-difference',
        alphaPerComponent: 0.05,
      },
      {
        id: 'Q1_eligibility',
        question: 'Q1',
        role: 'eligibility',
        estimand: 'D_N',
        rule: 'p-below',
        test: 'mcnemar-exact',
        direction: 'greater',
        alpha: 0.05,
      },
      {
        id: 'Q3_S_pi',
        question: 'Q3',
        estimand: 'rho_S_pi',
        rule: 'lower-bound-above',
        margin: 0,
        aboveUpperBoundOf: ['rho_C'],
        method: 'clopper-pearson',
        alphaPerComponent: 0.05,
      },
      {
        id: 'Q3_T_mu',
        question: 'Q3',
        estimand: 'rho_T_mu',
        rule: 'lower-bound-above',
        margin: 0,
        aboveUpperBoundOf: ['rho_C'],
        method: 'clopper-pearson',
        alphaPerComponent: 0.05,
      },
      {
        id: 'Q4',
        question: 'Q4',
        estimand: 'theta',
        rule: 'lower-bound-above',
        margin: 0,
        aboveUpperBoundOf: ['rho_U'],
        method: 'conditional-exact',
        alphaPerComponent: 0.05,
        minDiscordant: 4,
      },
      { id: 'numerical_floor', role: 'eligibility', estimand: 'rho_U', rule: 'point-below', than: 'rho_S_pi' },
    ],
    gates: [
      {
        id: 'competence',
        kind: 'competence',
        condition: 'A',
        minSuccess: 0.5,
        wilsonLowerAbove: 1 / 3,
        level: 0.95,
        hard: true,
        onFail: 'exclude',
      },
      {
        id: 'path',
        kind: 'path',
        reads: ['A', 'S_pi', 'T_mu', 'U', 'C'],
        emptyReads: ['N_blk'],
        hard: true,
        onFail: 'invalid',
      },
      {
        id: 'replicate',
        kind: 'replicate',
        condition: 'C',
        reference: 'A',
        maxChanged: 0,
        hard: true,
        onFail: 'invalid',
      },
      {
        id: 'G_surv',
        kind: 'survival',
        conditions: ['S_pi', 'T_mu', 'U'],
        minCoverage: 1,
        hard: true,
        onFail: 'invalid',
      },
      {
        id: 'sham_validity',
        kind: 'sham-validity',
        sham: 'S_pi',
        minFlips: 1,
        substitutionFraction: { min: 1, denominator: 'reads-with-history' },
        requireContentChange: true,
        hard: true,
        onFail: 'invalid',
      },
      {
        id: 'empty_reads',
        kind: 'empty-read',
        conditions: ['A', 'S_pi', 'T_mu', 'U', 'C'],
        rule: 'identical-positions',
        hard: true,
        onFail: 'invalid',
      },
    ],
    holmFamilies: [
      {
        id: 'wave1',
        contrasts: ['D_S_pi', 'D_T_mu', 'D_U'],
        alpha: 0.05,
        test: 'mcnemar-exact-two-sided',
        repairBudget: 1,
      },
    ],
    goNoGo: [{ rule: 'min-competent-cells', gate: 'competence', min: 1, outcome: 'descriptive' }],
    executionFailures: { policy: 'record' },
    allowlists: { methodVisible: ['rgb'], evaluatorOnly: ['success', 'seed'] },
    ...over,
  } as ProtocolInput;
}

/**
 * The mini ladder's outcomes (n = 40): A succeeds on seeds 0–31; S_π: b at 0, 1 and c at 35 (b = 2, c = 1);
 * T_μ: b at 0, 2, 3, 4 and c at 36 (b = 4, c = 1); so b′ = 4 (2, 3, 4, 36), c′ = 2 (1, 35); U: b at 5;
 * N_blk: b at 0–9 (b = 10, c = 0); C replicates A.
 */
/** One of the flagship blackout protocol's criteria, as the protocol schema parses it (defaults filled in). */
export function blackoutCriterion(id: string): Criterion {
  const c = (blackoutProtocol().criteria ?? []).find((x) => x.id === id);
  if (c === undefined) throw new Error(`the blackout fixture has no criterion ${id}`);
  return CriterionSchema.parse(c);
}

export function blackoutOutcome(ctx: EpisodeContext): RowSpec {
  const a = ctx.i < 32;
  const flip = (bs: number[], cs: number[]): boolean => (bs.includes(ctx.i) ? false : cs.includes(ctx.i) ? true : a);
  switch (ctx.ep.condition) {
    case 'S_pi':
      return { success: flip([0, 1], [35]) };
    case 'T_mu':
      return { success: flip([0, 2, 3, 4], [36]) };
    case 'U':
      return { success: flip([5], []) };
    case 'N_blk':
      return { success: flip([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], []) };
    default:
      return { success: a };
  }
}

export interface BuildOptions {
  readonly id?: string;
  readonly amendBeforeSeal?: boolean;
  readonly runner?: typeof RUNNER;
}

export interface BuiltUnit {
  readonly protocol: Protocol;
  readonly rows: EpisodeRow[];
}

export function makeRows(protocol: Protocol, outcome: (ctx: EpisodeContext) => RowSpec): EpisodeRow[] {
  const plan = buildPlan(protocol);
  const tasks = protocol.envs.map((e) => e.task ?? e.id);
  const seeds = [...new Set(plan.episodes.map((e) => e.seed))].sort((x, y) => x - y);
  return plan.episodes.map((ep) => {
    const kind = protocol.conditions.find((c) => c.id === ep.condition)?.kind ?? 'A';
    const ctx: EpisodeContext = { ep, i: seeds.indexOf(ep.seed), taskIndex: tasks.indexOf(ep.task), kind };
    const spec = outcome(ctx);
    const status = spec.status ?? 'ok';
    const digestOf = kind === 'C' ? 'A' : ep.condition;
    const row: EpisodeRow = {
      v: 1,
      seq: ep.seq,
      wave: ep.wave,
      condition: ep.condition,
      task: ep.task,
      seed: ep.seed,
      attempt: ep.attempt,
      scopeId: ep.scopeId,
      episodeId: ep.episodeId,
      status,
      failure:
        status === 'ok'
          ? null
          : { code: spec.failureCode ?? `E_${status.toUpperCase()}`, message: `${status} in the fixture` },
      success: status === 'ok' ? (spec.success ?? null) : null,
      firstVisit: null,
      decisionCorrect: status === 'ok' ? (spec.decisionCorrect ?? null) : null,
      steps: 12,
      firstFrameHash: null,
      actionDigest: spec.actionDigest ?? sha256Hex(`${digestOf}/${ep.task}/${ep.seed}/${ep.attempt}`),
      actionHashes: ['0123456789ab'],
      reads: { ...defaultReads(kind), firstQuery: defaultFirstQuery(ep, ctx.i), ...(spec.reads ?? {}) },
      tries: 1,
    };
    return EpisodeRowSchema.parse(row);
  });
}

/** Builds and seals a unit in `dir` whose rows come from `outcome`. */
export async function buildSealedUnit(
  dir: string,
  input: ProtocolInput,
  outcome: (ctx: EpisodeContext) => RowSpec,
  opts: BuildOptions = {},
): Promise<BuiltUnit> {
  const protocol = ProtocolSchema.parse(input);
  assertCrossChecked(protocol);
  const plan = buildPlan(protocol);
  const rows = makeRows(protocol, outcome);
  const runner = opts.runner ?? RUNNER;
  await createUnit(dir, { id: opts.id ?? 'adj-unit', operator: runner, now: clock });
  const band = protocol.seeds.bands?.[0] ?? { start: 0, end: 0 };
  await precommit(dir, {
    protocol,
    plan,
    planHash: plan.planHash,
    plannedRows: plan.episodes.length,
    code: { gitCommit: '0123456789abcdef0123456789abcdef01234567', dirty: false, packageVersion: '0.1.0' },
    checkpointHashes: { 'model.json': 'c'.repeat(64) },
    seeds: [{ task: '*', start: band.start, end: band.end }],
    packageVersions: { zod: '4.1.0' },
    nodeVersion: 'v20.19.0',
    operator: runner,
    now: clock,
  });
  const run = await startRun(dir, { runId: 'formal-1', operator: runner, now: clock });
  for (const row of rows) await run.appendRow(row);
  await completeRun(dir, { now: clock });
  if (opts.amendBeforeSeal) {
    await amend(dir, {
      text: 'sham-validity denominator: reads that carry history (an empty read cannot be substituted)',
      affects: ['gates.sham_validity.substitutionFraction.denominator'],
      author: runner,
      now: clock,
    });
  }
  await seal(dir, { operator: runner, now: clock });
  return { protocol, rows };
}

export function substitutionProtocol(over: Partial<ProtocolInput> = {}): ProtocolInput {
  return {
    version: 1,
    id: 'mini-substitution',
    title: 'mini RememberColor substitution ladder',
    simulator: { kind: 'lite' },
    envs: [
      { id: 'RememberColor3-lite', task: 'RC3' },
      { id: 'RememberColor5-lite', task: 'RC5' },
    ],
    checkpoint: { path: 'checkpoints/lite-memvla', file: 'model.json', sha256: 'c'.repeat(64) },
    memory: { bank: 'structured-pcmb', capacity: 16, k: 4, gate: 0.45, persistence: 'across-attempts' },
    seeds: { bands: [{ start: 9001, end: 9030 }] },
    n: 30,
    attempts: { count: 2, registered: 2 },
    conditions: [
      { id: 'A', kind: 'A' },
      { id: 'C', kind: 'C' },
      {
        id: 'U',
        kind: 'U',
        direction: 'away',
        installation: 'install',
        installAt: { attempt: 2, before: 'first-query' },
      },
      { id: 'S', kind: 'S', seed: 20260824, installAt: { attempt: 2, before: 'first-query' } },
      { id: 'T', kind: 'T', seed: 20260825, installAt: { attempt: 2, before: 'first-query' } },
    ],
    waves: [{ id: 1, conditions: ['A', 'C', 'U', 'S', 'T'], anchor: 'A' }],
    estimands: [
      { id: 'rho_C', kind: 'rho', reference: 'A', intervention: 'C' },
      { id: 'rho_U', kind: 'rho', reference: 'A', intervention: 'U' },
      { id: 'rho_S', kind: 'rho', reference: 'A', intervention: 'S' },
      { id: 'rho_T', kind: 'rho', reference: 'A', intervention: 'T' },
      { id: 'D_T', kind: 'D', reference: 'A', intervention: 'T' },
      { id: 'theta', kind: 'theta', T: 'T', S: 'S', reference: 'A' },
      { id: 'thetaBar', kind: 'thetaBar', T: 'T', S: 'S', reference: 'A' },
    ],
    criteria: [
      {
        id: 'Q4_equivalence',
        question: 'Q4',
        estimand: 'thetaBar',
        rule: 'equivalence',
        margin: 0.075,
        level: 0.9,
        method: 'task-stratified-bootstrap',
        replicates: 2000,
        seed: 20260824,
      },
      {
        id: 'Q3_T',
        question: 'Q3',
        estimand: 'rho_T',
        rule: 'lower-bound-above',
        margin: 0,
        aboveUpperBoundOf: ['rho_C'],
        method: 'clopper-pearson',
        alphaPerComponent: 0.05,
      },
    ],
    gates: [
      {
        id: 'replicate',
        kind: 'replicate',
        condition: 'C',
        reference: 'A',
        maxChanged: 0,
        hard: true,
        onFail: 'invalid',
      },
      { id: 'G_surv', kind: 'survival', conditions: ['S', 'T'], minCoverage: 1, hard: false, onFail: 'warn' },
      {
        id: 'sham_validity',
        kind: 'sham-validity',
        sham: 'S',
        minFlips: 1,
        substitutionFraction: { min: 1, denominator: 'reads-with-history' },
        requireContentChange: true,
        hard: true,
        onFail: 'invalid',
      },
    ],
    executionFailures: { policy: 'record' },
    allowlists: { methodVisible: ['rgb'], evaluatorOnly: ['success', 'seed'] },
    bootstrap: { replicates: 2000, seed: 20260824, level: 'task-stratified' },
    ...over,
  } as ProtocolInput;
}

/**
 * Substitution outcomes (n = 30 per task, attempt 2 registered): A succeeds on seeds 0–19 of each task;
 * S: b at 0, c at 25 (RC3) and b at 1 (RC5); T: b at 0, 1, 2, c at 26 (RC3) and b at 3, 4 (RC5); U: b at 5
 * (RC3). RC5 seed 10 fails to execute under T (unresolved); RC3 seed 29 is removed from S and T
 * (E_DONOR_SHORT). Attempt 1 copies A's outcome everywhere.
 */
export function substitutionOutcome(ctx: EpisodeContext): RowSpec {
  const { i, taskIndex: t } = ctx;
  const a = i < 20;
  if (ctx.ep.attempt === 1)
    return { success: a, reads: ['U', 'S', 'T'].includes(ctx.kind) ? { covered: null, substituted: 0 } : {} };
  const flip = (bs: number[], cs: number[]): boolean => (bs.includes(i) ? false : cs.includes(i) ? true : a);
  const c = ctx.ep.condition;
  if ((c === 'S' || c === 'T') && t === 0 && i === 29) return { status: 'removed', failureCode: 'E_DONOR_SHORT' };
  if (c === 'T' && t === 1 && i === 10) return { status: 'failed', failureCode: 'E_BRIDGE_TIMEOUT' };
  if (c === 'S') return { success: t === 0 ? flip([0], [25]) : flip([1], []), reads: { covered: i % 7 !== 3 } };
  if (c === 'T') return { success: t === 0 ? flip([0, 1, 2], [26]) : flip([3, 4], []) };
  if (c === 'U') return { success: t === 0 ? flip([5], []) : a };
  return { success: a };
}

/** A 2×2 view × reads design (n = 100) whose bound-based criteria route to holds (view removal, the floor, reads visible below 10 pp) and unresolved. */
export function viewRemovalProtocol(over: Partial<ProtocolInput> = {}): ProtocolInput {
  return {
    version: 1,
    id: 'mini-view-removal',
    title: 'mini view × reads 2×2',
    simulator: { kind: 'lite' },
    envs: [{ id: 'ShellGameTouch-lite' }],
    checkpoint: { path: 'checkpoints/lite-memvla', file: 'model.json', sha256: 'c'.repeat(64) },
    memory: {
      bank: 'episode-local',
      banks: ['perceptual', 'cognitive'],
      capacity: 16,
      k: 4,
      consolidation: 'token-merge',
    },
    seeds: { bands: [{ start: 8701, end: 8800 }] },
    n: 100,
    attempts: { count: 1, registered: 1 },
    factors: { view: ['visible', 'blackout'], reads: ['on', 'blocked'] },
    conditions: [
      { id: 'A_vis', kind: 'A', levels: { view: 'visible', reads: 'on' } },
      { id: 'N_vis', kind: 'N', variant: 'block', levels: { view: 'visible', reads: 'blocked' } },
      { id: 'A_blk', kind: 'A', levels: { view: 'blackout', reads: 'on' } },
      { id: 'N_blk', kind: 'N', variant: 'block', levels: { view: 'blackout', reads: 'blocked' } },
    ],
    waves: [{ id: 1, conditions: ['A_vis', 'N_vis', 'A_blk', 'N_blk'], anchor: 'A_vis' }],
    estimands: [
      { id: 'D_view', kind: 'D', reference: 'A_vis', intervention: 'A_blk' },
      { id: 'D_reads_blackout', kind: 'D', reference: 'A_blk', intervention: 'N_blk' },
      { id: 'D_reads_visible', kind: 'D', reference: 'A_vis', intervention: 'N_vis' },
      { id: 'SR_blk', kind: 'successRate', condition: 'A_blk' },
    ],
    criteria: [
      {
        id: 'view_removal',
        estimand: 'D_view',
        rule: 'lower-bound-above',
        margin: 0.1,
        method: 'exact-cp-difference',
        alphaPerComponent: 0.05,
      },
      {
        id: 'reads_blackout',
        question: 'Q1',
        estimand: 'D_reads_blackout',
        rule: 'upper-bound-below',
        margin: 0.1,
        method: 'exact-cp-difference',
        alphaPerComponent: 0.05,
      },
      {
        id: 'blackout_floor',
        role: 'eligibility',
        estimand: 'SR_blk',
        rule: 'lower-bound-above',
        margin: 1 / 3,
        method: 'wilson',
        level: 0.95,
      },
      {
        id: 'reads_visible',
        role: 'secondary',
        question: 'Q1',
        estimand: 'D_reads_visible',
        rule: 'upper-bound-below',
        margin: 0.1,
        method: 'exact-cp-difference',
        alphaPerComponent: 0.05,
      },
    ],
    gates: [
      { id: 'competence', kind: 'competence', condition: 'A_vis', minSuccess: 0.5, hard: true, onFail: 'exclude' },
      {
        id: 'path',
        kind: 'path',
        reads: ['A_vis', 'A_blk'],
        emptyReads: ['N_vis', 'N_blk'],
        hard: true,
        onFail: 'invalid',
      },
    ],
    executionFailures: { policy: 'record' },
    allowlists: { methodVisible: ['rgb'], evaluatorOnly: ['success', 'seed'] },
    ...over,
  } as ProtocolInput;
}

/** A_vis 94/100; A_blk loses seeds 0–39 (D_view: b = 40); N_blk vs A_blk: b at 40–48, c at 95; N_vis vs A_vis: b at 50. */
export function viewRemovalOutcome(ctx: EpisodeContext): RowSpec {
  const i = ctx.i;
  const vis = i < 94;
  const blk = vis && i >= 40;
  switch (ctx.ep.condition) {
    case 'A_blk':
      return { success: blk };
    case 'N_blk':
      return { success: i >= 40 && i <= 48 ? false : i === 95 ? true : blk };
    case 'N_vis':
      return { success: i === 50 ? false : vis };
    default:
      return { success: vis };
  }
}
