/**
 * `imep chainbench …`: chain manifests, decision readouts and decision replay (src/chainbench).
 *
 *   imep chainbench generate --chains N --K K[,K…] --seed S --out manifest.json [--rewrite-rate r] [--distractors a-b]
 *   imep chainbench validate MANIFEST [--no-simulator]
 *   imep chainbench diff OLD NEW [--json]
 *   imep chainbench decide MANIFEST --out UNIT [--seed S] [--fallback uniform|fixed] [--replicates R] [--json]
 *   imep chainbench replay MANIFEST --decisions UNIT [--out UNIT] [--executor lite|bridge --endpoint E [--env ID]] [--no-floor] [--json]
 *   imep chainbench show UNIT [--json]
 *   imep chainbench audit MANIFEST --renamings R [--seed S] [--json]
 *
 * Thin: parses, calls src/chainbench, prints. Manifests are written through a temp file and a rename;
 * decisions and replays are sealed evidence units (src/chainbench/unit-io.ts), and every summary printed
 * is computed from a unit's verified rows after it is sealed.
 */
import type { Command } from 'commander';
import { ImepError } from '../core/index.js';
import { pp, signedPp, textTable } from '../report/index.js';
import { stat } from 'node:fs/promises';
import {
  auditLabelEquivariance,
  buildChainRecords,
  decisionConditions,
  diffManifests,
  generateChainManifest,
  LiteChainExecutor,
  loadManifest,
  summarizeDecisions,
  summarizeReplay,
  writeManifest,
  FALLBACK_MODES,
  type ChainExecutor,
  type DecisionSummary,
  type DecisionUnitRead,
  type ExecutorIdentity,
  type ReplaySummary,
  type ReplayUnitRead,
} from '../chainbench/index.js';
import { BridgeChainExecutor, DEFAULT_BRIDGE_ENV } from '../chainbench/bridge-executor.js';
import { readDecisionUnit, writeDecisionUnit, DECISIONS_UNIT_KIND } from '../chainbench/decision-unit.js';
import { readReplayUnit, writeReplayUnit, REPLAY_UNIT_KIND } from '../chainbench/replay-unit.js';
import { readUnitState, loadFrozenProtocol, assertUnitIntact } from '../evidence/index.js';
import { parseChoice, parseCount, parseProbability } from './args.js';

function parseSeed(flag: string, raw: string): number {
  const v = parseCount(flag, raw);
  if (v > 0xffffffff) throw new ImepError('E_USAGE', `must be a uint32, got ${raw}`, { field: flag });
  return v;
}

function parseKList(raw: string): number[] {
  return raw.split(',').map((p) => parseCount('--K', p));
}

function parseRange(flag: string, raw: string): { min: number; max: number } {
  const m = /^(\d+)(?:-(\d+))?$/.exec(raw.trim());
  if (m === null) throw new ImepError('E_USAGE', `expected N or MIN-MAX, got '${raw}'`, { field: flag });
  const min = Number(m[1]);
  return { min, max: m[2] === undefined ? min : Number(m[2]) };
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function ci(i: { lower: number; upper: number }): string {
  return `[${pp(i.lower, 1)}, ${pp(i.upper, 1)}]`;
}

function decisionReport(s: DecisionSummary): string {
  const lines: string[] = [];
  lines.push(
    textTable(
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
    ),
  );
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
  if (s.ladder !== null) {
    const L = s.ladder;
    lines.push(
      '',
      `decision ladder on curated records (${L.chains} chains; C reproduces ${L.reproduced}/${L.rows[0]?.n ?? 0} archived decisions)`,
    );
    lines.push(
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
    );
    if (L.theta !== null) {
      const th = L.theta;
      lines.push(
        `θ = ρ_T − ρ_S on the ${th.chains} chains with both an S and a T row (ρ_T ${pp(th.rhoT, 1)} %, ρ_S ${pp(th.rhoS, 1)} % there) = ${th.estimate.toFixed(3)}, chain-bootstrap 95% [${th.bootstrap.lower.toFixed(3)}, ${th.bootstrap.upper.toFixed(3)}]`,
      );
    }
  }
  return lines.join('\n');
}

function replayReport(s: ReplaySummary): string {
  const lines: string[] = [];
  lines.push(
    textTable(
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
    ),
  );
  lines.push(
    `execution ceiling SR* = SR(oracle) = ${s.ceiling === null ? '—' : `${pp(s.ceiling, 1)}%`} (decision accuracy and task success are separate columns, never pooled)`,
  );
  if (s.contrasts.length > 0) {
    lines.push('', 'paired task-success contrasts vs no-memory (Δ = SR_X − SR_N)');
    lines.push(
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
    );
  }
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

const EXECUTORS = ['lite', 'bridge'] as const;

function decisionSummaryOf(d: DecisionUnitRead, json: boolean): string {
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

function replaySummaryOf(r: ReplayUnitRead, json: boolean): string {
  const summary = summarizeReplay(r.replay, r.manifest, {
    bootstrapSeed: r.protocol.summary.bootstrapSeed,
    replicates: r.protocol.summary.replicates,
  });
  const u = r.unit;
  const ex = r.protocol.executor as ExecutorIdentity;
  if (json)
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

async function executorFor(
  o: { executor: string; endpoint?: string; env: string; deadline: string },
  executionSuccess: number,
): Promise<{ executor: ChainExecutor; identity: ExecutorIdentity; close: () => Promise<void> }> {
  const kind = parseChoice('--executor', o.executor, EXECUTORS);
  if (kind === 'lite') {
    if (o.endpoint !== undefined)
      throw new ImepError('E_USAGE', '--endpoint is for --executor bridge', { field: '--endpoint' });
    const lite = new LiteChainExecutor(executionSuccess);
    return { executor: lite, identity: lite.identity(), close: async () => undefined };
  }
  if (o.endpoint === undefined)
    throw new ImepError(
      'E_USAGE',
      '--executor bridge needs --endpoint (e.g. the first line `imep sim serve lite` prints)',
      { field: '--endpoint' },
    );
  const bridge = await BridgeChainExecutor.connect({
    endpoint: o.endpoint,
    env: o.env,
    executionSuccess,
    deadlineMs: parseCount('--deadline', o.deadline),
  });
  return { executor: bridge, identity: bridge.identity(), close: () => bridge.close() };
}

async function defaultReplayDir(decisionsDir: string): Promise<string> {
  const base = decisionsDir.replace(/\/+$/, '');
  for (let n = 1; ; n++) {
    const dir = n === 1 ? `${base}-replay` : `${base}-replay-${n}`;
    if (
      !(await stat(dir).then(
        () => true,
        () => false,
      ))
    )
      return dir;
  }
}

export function registerChainbench(group: Command): void {
  group
    .command('generate')
    .description('generate a seeded ChainDrawers-lite chain manifest (balanced final facts, optional rewrites)')
    .requiredOption('--chains <n>', 'number of chains')
    .requiredOption('--K <K>', 'drawers per chain (2–4), or a comma list assigned round-robin')
    .requiredOption('--seed <s>', 'generator seed (uint32)')
    .requiredOption('--out <file>', 'manifest file to write')
    .option('--rewrite-rate <r>', 'fraction of chains whose initial fact is overwritten', '0.5')
    .option('--distractors <a-b>', 'distractor episodes per chain', '1-3')
    .option('--execution-success <p>', 'lite executor execution probability', '0.8')
    .action(
      async (o: {
        chains: string;
        K: string;
        seed: string;
        out: string;
        rewriteRate: string;
        distractors: string;
        executionSuccess: string;
      }) => {
        const manifest = generateChainManifest({
          chains: parseCount('--chains', o.chains),
          K: parseKList(o.K),
          seed: parseSeed('--seed', o.seed),
          rewriteRate: parseProbability('--rewrite-rate', o.rewriteRate, { open: false }),
          distractors: parseRange('--distractors', o.distractors),
          executionSuccess: parseProbability('--execution-success', o.executionSuccess, { open: false }),
        });
        const hash = await writeManifest(o.out, manifest);
        const rewritten = manifest.chains.filter((c) => c.rewrite).length;
        out(`wrote ${o.out}: ${manifest.chains.length} chains (K ${o.K}), ${rewritten} rewritten; sha256 ${hash}`);
      },
    );

  group
    .command('validate')
    .description(
      'validate a chain manifest (schema, K, ids, exactly one deciding write, query identical across hidden facts)',
    )
    .argument('<manifest>', 'manifest file')
    .option('--no-simulator', 'skip the simulator checks (objects, query frame hashes)')
    .action(async (file: string, o: { simulator: boolean }) => {
      const { manifest, hash } = await loadManifest(file, { simulator: o.simulator });
      const byK = new Map<number, number>();
      for (const c of manifest.chains) byK.set(c.K, (byK.get(c.K) ?? 0) + 1);
      const ks = [...byK]
        .sort((a, b) => a[0] - b[0])
        .map(([k, n]) => `K=${k}: ${n}`)
        .join(', ');
      const rewritten = manifest.chains.filter((c) => c.rewrite).length;
      out(
        `ok: ${file}: ${manifest.chains.length} chains (${ks}), ${rewritten} rewritten${o.simulator ? ', query frames identical across hidden facts' : ''}; sha256 ${hash}`,
      );
    });

  group
    .command('diff')
    .description('chains removed, added and changed between two manifest versions (selection-bias audit)')
    .argument('<old>', 'old manifest')
    .argument('<new>', 'new manifest')
    .option('--json', 'print one JSON object')
    .action(async (oldFile: string, newFile: string, o: { json?: boolean }) => {
      const a = await loadManifest(oldFile, { simulator: false });
      const b = await loadManifest(newFile, { simulator: false });
      const d = diffManifests(a.manifest, b.manifest);
      if (o.json) return out(JSON.stringify(d, null, 2));
      const lines = [
        `old ${oldFile}: ${d.oldChains} chains, sha256 ${d.oldHash}`,
        `new ${newFile}: ${d.newChains} chains, sha256 ${d.newHash}`,
        d.identical
          ? 'identical'
          : `removed ${d.removed.length}, added ${d.added.length}, changed ${d.changed.length}, unchanged ${d.unchanged}`,
      ];
      if (d.header.length > 0) lines.push(`manifest fields changed: ${d.header.join(', ')}`);
      if (d.orderChanged) lines.push('the chains both versions hold are in a different order');
      if (d.removed.length > 0) lines.push(`removed: ${d.removed.join(' ')}`);
      if (d.added.length > 0) lines.push(`added: ${d.added.join(' ')}`);
      for (const c of d.changed) lines.push(`changed: ${c.id} (${c.fields.join(', ')})`);
      out(lines.join('\n'));
    });

  group
    .command('decide')
    .description(
      'decide every chain under every condition (full memory, no memory, initial fact, shuffled, stale, oracle), run the C/U/S/T ladder, and seal it all as an evidence unit',
    )
    .argument('<manifest>', 'manifest file')
    .requiredOption('--out <dir>', 'the decisions unit folder to create (must not exist)')
    .option(
      '--seed <s>',
      'decision seed (fallback draws, shuffle, ladder donors; also the summary bootstrap seed)',
      '0',
    )
    .option('--fallback <mode>', `fallback decision: ${FALLBACK_MODES.join(' | ')}`, 'uniform')
    .option('--replicates <R>', 'chain-bootstrap replicates of the summary (frozen in the unit)', '10000')
    .option('--json', 'print the summary as JSON')
    .action(
      async (file: string, o: { out: string; seed: string; fallback: string; replicates: string; json?: boolean }) => {
        const seed = parseSeed('--seed', o.seed);
        const fallback = parseChoice('--fallback', o.fallback, FALLBACK_MODES);
        const replicates = parseCount('--replicates', o.replicates);
        if (replicates < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--replicates' });
        const { manifest, hash } = await loadManifest(file);
        const records = buildChainRecords(manifest);
        const { unit } = await writeDecisionUnit({
          dir: o.out,
          manifest,
          manifestHash: hash,
          records,
          seed,
          fallback,
          replicates,
        });
        out(decisionSummaryOf(await readDecisionUnit(unit.dir, '--out'), o.json === true));
      },
    );

  group
    .command('replay')
    .description(
      'execute each distinct (chain, decision) of a sealed decisions unit once (conditions share executions) and seal the replay as its own unit',
    )
    .argument('<manifest>', 'manifest file (must be the one the decisions unit froze)')
    .requiredOption('--decisions <unit>', 'the sealed decisions unit (from `imep chainbench decide`)')
    .option('--out <dir>', 'the replay unit folder to create (default: <decisions unit>-replay[-N])')
    .option('--executor <kind>', `executor: ${EXECUTORS.join(' | ')}`, 'lite')
    .option('--endpoint <endpoint>', 'bridge endpoint (with --executor bridge), e.g. from `imep sim serve lite`')
    .option('--env <id>', 'environment on the bridge server that executes a choice', DEFAULT_BRIDGE_ENV)
    .option('--deadline <ms>', 'bridge call deadline (ms)', '30000')
    .option('--no-floor', 'skip the replay floor R')
    .option('--bootstrap-seed <s>', 'chain-bootstrap seed of the summary (frozen in the unit)', '0')
    .option('--replicates <R>', 'chain-bootstrap replicates of the summary (frozen in the unit)', '10000')
    .option('--json', 'print the summary, the pairing proof and the executions as JSON')
    .action(
      async (
        file: string,
        o: {
          decisions: string;
          out?: string;
          executor: string;
          endpoint?: string;
          env: string;
          deadline: string;
          floor: boolean;
          bootstrapSeed: string;
          replicates: string;
          json?: boolean;
        },
      ) => {
        const bootstrapSeed = parseSeed('--bootstrap-seed', o.bootstrapSeed);
        const replicates = parseCount('--replicates', o.replicates);
        if (replicates < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--replicates' });
        const { hash } = await loadManifest(file, { simulator: false });
        const decisions = await readDecisionUnit(o.decisions, '--decisions');
        if (decisions.manifestHash !== hash) {
          throw new ImepError(
            'E_MANIFEST_INVALID',
            `the decisions unit froze manifest ${decisions.manifestHash.slice(0, 12)}…, not this one (${hash.slice(0, 12)}…)`,
            {
              file,
              field: 'manifestHash',
              hint: 'replay decisions against the manifest they were decided on',
            },
          );
        }
        const dir = o.out ?? (await defaultReplayDir(decisions.unit.dir));
        const ex = await executorFor(o, decisions.manifest.env.executionSuccess);
        let written;
        try {
          written = await writeReplayUnit({
            dir,
            decisions,
            executor: ex.executor,
            executorIdentity: ex.identity,
            replayFloor: o.floor,
            bootstrapSeed,
            replicates,
          });
        } finally {
          await ex.close();
        }
        out(replaySummaryOf(await readReplayUnit(written.unit.dir, '--out'), o.json === true));
      },
    );

  group
    .command('show')
    .description('verify a sealed decisions or replay unit and print its summary, computed from its rows')
    .argument('<unit>', 'the unit folder')
    .option('--json', 'print one JSON object')
    .action(async (dir: string, o: { json?: boolean }) => {
      await readUnitState(dir);
      await assertUnitIntact(dir); // before anything in it is read (refuses an unsealed unit too)
      const kind = ((await loadFrozenProtocol(dir)).protocol as { kind?: unknown } | null)?.kind;
      if (kind === DECISIONS_UNIT_KIND)
        return out(decisionSummaryOf(await readDecisionUnit(dir, 'unit'), o.json === true));
      if (kind === REPLAY_UNIT_KIND) return out(replaySummaryOf(await readReplayUnit(dir, 'unit'), o.json === true));
      throw new ImepError('E_USAGE', `not a ChainBench unit (protocol kind ${JSON.stringify(kind ?? null)})`, {
        file: dir,
        hint: 'campaign units are shown with `imep campaign status`',
      });
    });

  group
    .command('audit')
    .description(
      'label-equivariance audit: rename every object/drawer identifier R times and report readouts whose decisions change',
    )
    .argument('<manifest>', 'manifest file')
    .requiredOption('--renamings <R>', 'number of seeded same-length renamings')
    .option('--seed <s>', 'renaming seed (also the decision seed)', '0')
    .option('--fallback <mode>', `fallback decision: ${FALLBACK_MODES.join(' | ')}`, 'uniform')
    .option('--json', 'print one JSON object')
    .action(async (file: string, o: { renamings: string; seed: string; fallback: string; json?: boolean }) => {
      const renamings = parseCount('--renamings', o.renamings);
      if (renamings < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--renamings' });
      const seed = parseSeed('--seed', o.seed);
      const fallback = parseChoice('--fallback', o.fallback, FALLBACK_MODES);
      const { manifest } = await loadManifest(file);
      const records = buildChainRecords(manifest);
      const readouts = decisionConditions({ fallback }).map((c) => ({
        name: c.name,
        decide: (m: typeof manifest, r: typeof records) => c.decide(m, r, seed),
      }));
      const audit = auditLabelEquivariance({ manifest, records, readouts, renamings, seed });
      if (o.json) return out(JSON.stringify(audit, null, 2));
      out(
        [
          `label-equivariance audit: ${audit.renamings} renamings of ${audit.identifiers} identifiers (seed ${audit.seed})`,
          textTable(
            [
              ['readout', 'n', 'identity score', 'renamed score', 'identity × R', 'changed decisions', 'verdict'],
              ...audit.rows.map((r) => [
                r.readout,
                String(r.n),
                String(r.identityScore),
                String(r.renamedScore),
                String(r.expectedScore),
                String(r.violations),
                r.equivariant ? 'equivariant' : 'NAME-DEPENDENT',
              ]),
            ],
            ['l', 'r', 'r', 'r', 'r', 'r', 'l'],
          ),
        ].join('\n'),
      );
    });
}
