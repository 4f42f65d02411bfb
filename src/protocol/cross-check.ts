/**
 * Cross-field rules of a schema-valid protocol (the schema checks each field alone):
 *
 * - episodes: exactly one of `attempts` / `chains`; the registered attempt/positions exist.
 * - seeds: exactly one of `bands` / `list`; start ≤ end; no seed twice (E_SEED_OVERLAP); n ≤ the
 *   number of seeds; a condition's own n ≤ the protocol n.
 * - envs: task names unique; then the simulator kind's own checks (SimulatorFace.checkProtocol; lite: ids it
 *   knows, kwargs merged with each condition's envKwargs accepted by the simulator).
 * - conditions: ids unique; installation points where the kind acts at a point and nowhere else,
 *   within the attempts, on a bank that keeps records that long; factor levels declared and
 *   every factor combination at most once.
 * - waves: ids unique; every listed condition exists, once; the anchor is in its wave; every
 *   condition runs in some wave.
 * - allowlists: disjoint (E_ALLOWLIST_OVERLAP naming the fields); then the simulator kind's check that the
 *   method-visible fields are fields it shows the policy (SimulatorFace.checkMethodVisible).
 * - policy: exactly one of `checkpoint` / `policy`; a hosted policy (runtime remote) keeps an
 *   episode-local bank; `curve` only with `endpoint`, `module` / `pythonPath` / `checkpoint` / `python` / `limits`
 *   only without.
 * - estimands, criteria, gates, Holm families, go/no-go, MDE: cross-check-analysis.ts.
 * - frames (rollout frames for the report): cross-check-frames.ts.
 *
 * `crossCheck` returns every issue (with its data path); `assertCrossChecked` throws the first.
 */
import { conditionFaces, policyRuntimeFaces, simulatorFaces, type ProtocolIssueSink } from '../core/index.js';
import { checkAnalysis } from './cross-check-analysis.js';
import { checkFrames } from './cross-check-frames.js';
import { CheckContext } from './cross-check-context.js';
import { listSome, type IssueSink } from './issue-cap.js';
import { ProtocolError, type ProtocolIssue } from './issues.js';
import type { Protocol, ProtocolCondition } from './schema.js';
import { faceOf } from './schema-conditions.js';
import { overlappingBands, seedCount } from './seeds.js';

function checkEpisodes(ctx: CheckContext): void {
  const p = ctx.protocol;
  if (p.attempts && p.chains)
    ctx.push(['chains'], 'a protocol has either attempts or chains, not both', 'remove one of attempts / chains');
  if (!p.attempts && !p.chains)
    ctx.push(
      [],
      'missing required field "attempts"',
      'add attempts: { count: 1, registered: 1 } (or chains: { length, registered })',
    );
  if (p.attempts && p.attempts.registered > p.attempts.count) {
    ctx.push(
      ['attempts', 'registered'],
      `attempt ${p.attempts.registered} is registered but only ${p.attempts.count} attempt(s) run`,
      'set registered ≤ count',
    );
  }
  const firstAt = new Map<number, number>();
  p.chains?.registered.forEach((pos, i) => {
    if (pos > (p.chains?.length ?? 0))
      ctx.push(
        ['chains', 'registered', i],
        `chain position ${pos} exceeds the chain length ${p.chains?.length}`,
        'list positions between 1 and length',
      );
    const first = firstAt.get(pos);
    // a repeat changes nothing the adjudication pools, but it changes the frozen protocol's hash
    if (first !== undefined)
      ctx.push(
        ['chains', 'registered', i],
        `chain position ${pos} is listed twice (also chains.registered[${first}])`,
        'list every position once',
      );
    else firstAt.set(pos, i);
  });
}

function checkSeeds(ctx: CheckContext): void {
  const { seeds, n } = ctx.protocol;
  if (seeds.bands && seeds.list)
    ctx.push(['seeds', 'list'], 'seeds has both bands and list', 'keep one of seeds.bands / seeds.list');
  if (!seeds.bands && !seeds.list)
    ctx.push(['seeds'], 'seeds has neither bands nor list', 'add bands: [{ start, end }] or list: [...]');
  const bands = seeds.bands ?? [];
  bands.forEach((b, i) => {
    if (b.start > b.end)
      ctx.push(
        ['seeds', 'bands', i, 'end'],
        `band end ${b.end} is below its start ${b.start}`,
        'bands are inclusive { start ≤ end }',
      );
  });
  for (const { at, other } of overlappingBands(bands)) {
    const b = bands[at]!;
    const o = bands[other]!;
    ctx.push(
      ['seeds', 'bands', at],
      `band ${b.start}–${b.end} overlaps band ${o.start}–${o.end} (seeds.bands[${other}])`,
      'make the bands disjoint',
      'E_SEED_OVERLAP',
    );
  }
  const seen = new Map<number, number>();
  (seeds.list ?? []).forEach((s, i) => {
    const first = seen.get(s);
    if (first !== undefined)
      ctx.push(
        ['seeds', 'list', i],
        `seed ${s} is listed twice (also seeds.list[${first}])`,
        'list every seed once',
        'E_SEED_OVERLAP',
      );
    else seen.set(s, i);
  });
  const count = seedCount(seeds);
  if (n > count)
    ctx.push(
      ['n'],
      `n = ${n} exceeds the ${count} registered seeds`,
      `lower n to at most ${count} or widen the seed band`,
    );
  ctx.protocol.conditions.forEach((c, i) => {
    if (c.n !== undefined && c.n > n)
      ctx.push(
        ['conditions', i, 'n'],
        `condition n = ${c.n} exceeds the protocol n = ${n}`,
        'a condition may run on fewer units, never more',
      );
  });
}

/** The simulator kind's checks report into the context (a kind check's path names the YAML line too). */
function sinkOf(ctx: CheckContext): ProtocolIssueSink {
  return { push: (path, message, hint, code) => ctx.push(path, message, hint, code) };
}

function checkEnvs(ctx: CheckContext): void {
  const p = ctx.protocol;
  const tasks = new Map<string, number>();
  p.envs.forEach((env, i) => {
    const task = env.task ?? env.id;
    const first = tasks.get(task);
    if (first !== undefined)
      ctx.push(
        ['envs', i, env.task ? 'task' : 'id'],
        `task "${task}" is listed twice (also envs[${first}])`,
        'give each env a distinct task name',
      );
    else tasks.set(task, i);
  });
  simulatorFaces.get(p.simulator.kind)?.checkProtocol?.(p, sinkOf(ctx));
}

function checkConditions(ctx: CheckContext): void {
  const p = ctx.protocol;
  ctx.unique(p.conditions, ['conditions'], 'condition');
  const episodes = p.attempts?.count ?? p.chains?.length ?? 1;
  const factors = p.factors ?? {};
  for (const [factor, levels] of Object.entries(factors)) {
    levels.forEach((level, j) => {
      if (levels.indexOf(level) !== j)
        ctx.push(
          ['factors', factor, j],
          `level "${level}" of factor "${factor}" is listed twice`,
          'list each level once',
        );
    });
  }
  const combos = new Map<string, number>();
  p.conditions.forEach((c, i) => {
    const at = c.installAt;
    const face = faceOf(c);
    const mode = face.acts(c);
    const installs = face.installsPayloads?.(c) ?? false;
    if (mode === 'point' && !at) {
      ctx.push(
        ['conditions', i],
        `condition "${c.id}" (${face.pointWords?.(c) ?? c.kind}) needs an installation point`,
        face.pointHint ?? 'add installAt: { attempt: 2, before: first-query }',
      );
    }
    if (mode !== 'point' && at) {
      ctx.push(
        ['conditions', i, 'installAt'],
        `condition "${c.id}" acts at every read, so installAt has no meaning`,
        'remove installAt (or use variant: clear / installation: install)',
      );
    }
    if (at && mode === 'point') {
      if (at.attempt > episodes)
        ctx.push(
          ['conditions', i, 'installAt', 'attempt'],
          `installAt.attempt ${at.attempt} but each unit runs ${episodes} episode(s)`,
          `use an attempt between 1 and ${episodes}`,
        );
      else if (
        at.attempt > 1 &&
        (p.memory.bank !== 'structured-pcmb' || p.memory.persistence !== 'across-attempts') &&
        installs
      ) {
        ctx.push(
          ['conditions', i, 'installAt', 'attempt'],
          `condition "${c.id}" installs at attempt ${at.attempt}, but the bank keeps no records across attempts`,
          'use memory.bank: structured-pcmb with persistence: across-attempts',
        );
      }
    }
    if (installs && at?.attempt === 1) {
      ctx.push(
        ['conditions', i, 'installAt', 'attempt'],
        `condition "${c.id}" installs before attempt 1's first query, when the bank holds no records yet`,
        'install at a later attempt (e.g. attempt: 2), after records were written',
      );
    }
    if (p.memory.bank === 'history') checkOnHistory(ctx, c.id, i, mode, face.roles, face.pointWords?.(c) ?? c.kind);
    else if (installs && p.memory.bank !== 'structured-pcmb') {
      ctx.push(
        ['conditions', i, 'kind'],
        `condition "${c.id}" installs payloads, which needs the structured bank`,
        `use memory.bank: structured-pcmb, or installation: read (${installingKinds().join(', ')})`,
      );
    }
    if (c.levels) {
      for (const [factor, level] of Object.entries(c.levels)) {
        const levels = factors[factor];
        if (!levels)
          ctx.push(
            ['conditions', i, 'levels', factor],
            `unknown factor "${factor}"`,
            `declare it under factors (declared: ${listSome(Object.keys(factors)) || 'none'})`,
            'E_PROTOCOL_INVALID',
            true,
          );
        else if (!levels.includes(level))
          ctx.push(
            ['conditions', i, 'levels', factor],
            `"${level}" is not a level of factor "${factor}"`,
            `use one of: ${listSome(levels)}`,
          );
      }
    }
    if (Object.keys(factors).length > 0) {
      const missing = Object.keys(factors).filter((f) => c.levels?.[f] === undefined);
      if (missing.length > 0)
        ctx.push(
          ['conditions', i, c.levels ? 'levels' : 'id'],
          `condition "${c.id}" names no level for factor${missing.length > 1 ? 's' : ''} ${listSome(missing)}`,
          'add levels: { factor: level, … } for every declared factor',
        );
      else {
        const combo = Object.keys(factors)
          .sort()
          .map((f) => `${f}=${c.levels?.[f]}`)
          .join(',');
        const first = combos.get(combo);
        if (first !== undefined)
          ctx.push(
            ['conditions', i, 'levels'],
            `conditions "${p.conditions[first]?.id}" and "${c.id}" have the same factor levels (${combo})`,
            'each factor combination is one condition',
          );
        else combos.set(combo, i);
      }
    }
  });
}

function checkWaves(ctx: CheckContext): void {
  const p = ctx.protocol;
  ctx.unique(p.waves, ['waves'], 'wave');
  const used = new Set<string>();
  p.waves.forEach((w, i) => {
    const inWave = new Map<string, number>();
    w.conditions.forEach((id, j) => {
      ctx.condition(['waves', i, 'conditions', j], id);
      if (inWave.has(id))
        ctx.push(
          ['waves', i, 'conditions', j],
          `condition "${id}" is listed twice in wave ${w.id}`,
          'list each condition once per wave',
        );
      inWave.set(id, j);
      used.add(id);
    });
    if (!inWave.has(w.anchor)) {
      ctx.push(
        ['waves', i, 'anchor'],
        `anchor "${w.anchor}" is not one of wave ${w.id}'s conditions (${listSome(w.conditions)})`,
        `add "${w.anchor}" to waves[${i}].conditions or name one of them as the anchor`,
      );
    }
  });
  p.conditions.forEach((c, i) => {
    if (!used.has(c.id))
      ctx.push(['conditions', i, 'id'], `condition "${c.id}" runs in no wave`, 'add it to a wave or remove it');
  });
}

function checkAllowlists(ctx: CheckContext): void {
  const { methodVisible, evaluatorOnly } = ctx.protocol.allowlists;
  const visible = new Set(methodVisible);
  const overlap = [...new Set(evaluatorOnly.filter((f) => visible.has(f)))];
  if (overlap.length > 0) {
    const first = evaluatorOnly.findIndex((f) => visible.has(f));
    ctx.push(
      ['allowlists', 'evaluatorOnly', first],
      `field${overlap.length > 1 ? 's' : ''} ${listSome(overlap.map((f) => `"${f}"`))} ${overlap.length > 1 ? 'are' : 'is'} on both the method-visible and the evaluator-only allowlist`,
      'a field is either shown to the policy or kept for the evaluator, never both',
      'E_ALLOWLIST_OVERLAP',
    );
  }
  for (const [name, list] of [
    ['methodVisible', methodVisible],
    ['evaluatorOnly', evaluatorOnly],
  ] as const) {
    const seen = new Set<string>();
    list.forEach((f, i) => {
      if (seen.has(f)) ctx.push(['allowlists', name, i], `field "${f}" is listed twice`, 'list each field once');
      seen.add(f);
    });
  }
  simulatorFaces.get(ctx.protocol.simulator.kind)?.checkMethodVisible?.(ctx.protocol, sinkOf(ctx));
}

function checkPolicy(ctx: CheckContext): void {
  const p = ctx.protocol;
  if (p.checkpoint === undefined && p.policy === undefined) {
    ctx.push(
      [],
      'missing required field "checkpoint"',
      'add checkpoint: { path, file, sha256 }, or policy: { runtime: remote, name } for a policy hosted in Python',
    );
  }
  const policy = p.policy;
  if (policy === undefined && p.memory.bank === 'history')
    ctx.push(
      ['memory', 'bank'],
      'a checkpoint runs its own bank; history memory is given to a policy served over a wire',
      'register the checkpoint’s bank (episode-local or structured-pcmb), or serve the policy (policy.runtime: openpi-websocket or vla-eval)',
    );
  if (policy === undefined) return;
  if (p.checkpoint !== undefined) {
    ctx.push(
      ['policy'],
      'a protocol names either a checkpoint or a policy, not both',
      'remove checkpoint (a hosted policy is frozen by the identity its host reports) or remove policy',
    );
  }
  // the rules of the runtime the policy names (e.g. a hosted policy keeps an episode-local bank)
  policyRuntimeFaces.get(policy.runtime)?.checkProtocol?.(p, ctx);
}

/** Every cross-field problem of a schema-valid protocol, in check order (at most MAX_ISSUES; crossCheckBounded counts all). */
export function crossCheck(protocol: Protocol): ProtocolIssue[] {
  return [...crossCheckBounded(protocol).items];
}

/** The cross-field problems of a schema-valid protocol: the first MAX_ISSUES in check order kept, all counted. */
export function crossCheckBounded(protocol: Protocol): IssueSink<ProtocolIssue> {
  const ctx = new CheckContext(protocol);
  checkEpisodes(ctx);
  checkSeeds(ctx);
  checkEnvs(ctx);
  checkPolicy(ctx);
  checkConditions(ctx);
  checkWaves(ctx);
  checkAnalysis(ctx);
  checkAllowlists(ctx);
  checkFrames(ctx);
  return ctx.sink;
}

/** Throws a ProtocolError (no source positions) for the first cross-field problem. */
export function assertCrossChecked(protocol: Protocol, file?: string): void {
  const issues = crossCheckBounded(protocol);
  const first = issues.items[0];
  if (first)
    throw new ProtocolError(
      file,
      { ...first, pos: undefined },
      issues.items.map((i) => ({ ...i, pos: undefined })),
      issues.total,
    );
}

/** The registered kinds that can install payloads (and so take installation: read instead). */
const installingKinds = (): string[] =>
  conditionFaces
    .all()
    .filter((k) => k.installsPayloads !== undefined)
    .map((k) => k.name);

/**
 * The conditions history memory cannot carry out (memory.bank: history; docs/protocol.md "History memory"): its
 * records are the episode's own observations, read whole at every call, so there is no bank to install into or clear
 * at a registered point (N clear, U install, S / T install) and no oracle source (O). Every read-time condition acts
 * on it: N block, U / S_π / T_μ at read, S / T at read (the donor's records at the same timesteps).
 */
function checkOnHistory(
  ctx: CheckContext,
  id: string,
  i: number,
  mode: 'point' | 'read' | 'none',
  roles: readonly string[],
  words: string,
): void {
  if (mode === 'point')
    ctx.push(
      ['conditions', i, 'installAt'],
      `condition "${id}" (${words}) acts at a registered point, but history memory has no bank to install into or clear`,
      'act at every read instead: N variant: block; U, S, T installation: read',
    );
  else if (roles.includes('oracle'))
    ctx.push(
      ['conditions', i, 'kind'],
      `condition "${id}" supplies oracle items, which history memory has no source for`,
      'drop the condition, or evaluate O on a runtime that offers an oracle source',
    );
}
