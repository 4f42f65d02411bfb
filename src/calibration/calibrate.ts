/**
 * `imep calibrate`: every design of a suite as real A/S/T ladders over non-overlapping seed bands, then
 * the stats-level simulation, the frozen power analysis re-derived and compared, and the checks.
 *
 * What is REAL and what is SIMULATED (both recorded in the result):
 *   real       each (design, band) is a campaign run on the lite simulator with the lite checkpoint
 *              (ladder-run.ts); its readout is exact (ladder-readout.ts).
 *   simulated  per design, `simulation.campaigns` stats-level campaigns (stats-simulation.ts) whose per-unit
 *              rates come from that design's pooled real campaigns: fact-use designs at the pooled
 *              (b′, c′) rates; θ = 0 designs at the null-constrained estimate pB = pC = (Σb′ + Σc′)/(2Σn)
 *              (the truth is θ = 0 by construction; the simulation estimates the test's size at the
 *              measured discordance). Every parameter names its source.
 *   predicted  the frozen method (mde.inputs: Monte-Carlo, replicates, seed) at the same (ρ, θ), through
 *              src/stats/power.ts; exact power alongside.
 *   campaign   the suite's campaign-level designs (campaign-designs.ts), after the ladder designs: real IMEP
 *              campaigns (runCampaign → seal → adjudicate by another operator), detection = the registered
 *              verdict 'holds'; the same rates, simulation and prediction, and the check that each verdict
 *              is the frozen test on the unit's (b′, c′).
 * Deterministic: same suite, checkpoints and code → the same result, byte for byte (no clocks, no
 * unseeded draws; batch size does not change rows — src/policies/README.md).
 */
import { ImepError } from '../core/index.js';
import type { LoadedCheckpoint } from '../policies/index.js';
import { noisyChecks } from './noisy-checks.js';
import { suiteFacts, bandSeeds, type LoadedSuite } from './load-suite.js';
import { minimumDetectableEffect, type PairedTest } from '../stats/index.js';
import { designPolicy, fitDecoder, openCheckpoint, type FittedDecoder } from './design-runtime.js';
import { ladderCounts, ladderReadout, type LadderReadout } from './ladder-readout.js';
import { runLadder, type LadderTask } from './ladder-run.js';
import { designRates, fork } from './design-rates.js';
import { agreement, rateWithInterval, type Agreement } from './operating-characteristics.js';
import { simulateCampaigns } from './stats-simulation.js';
import type { Design } from './suite-schema.js';
import { runCampaignDesigns } from './campaign-designs.js';
import type { CalibrationResult, CampaignDesignsResult, DesignResult, FrozenRowCheck } from './result.js';

export interface CalibrateOptions {
  /** Where checkpoint paths resolve. */
  readonly root: string;
  /** Real campaigns (bands) per design (default: the suite's bands.count; at most that many). */
  readonly campaigns?: number;
  /** The suite's quick design (smaller n, fewer campaigns); not the registered design. */
  readonly quick?: boolean;
  readonly batchSize?: number;
  /** Progress lines (stderr in the CLI). */
  readonly progress?: (line: string) => void;
  /** Keep the campaign-level designs' evidence units under this (empty or new) folder; default: temporary, removed. */
  readonly keepUnits?: string;
}

const FROZEN_TOLERANCE = 1e-4;

/** Recomputes the frozen MDE table and refuses a table that does not match it. */
export function checkFrozenMde(loaded: LoadedSuite): {
  recomputed: { assumedDiscordance: number; effect: number | null; achievedPower: number | null }[];
} {
  const { inputs, outputs } = loaded.suite.mde;
  const recomputed = inputs.assumedDiscordance.map((rho, i) => {
    const r = minimumDetectableEffect({
      n: inputs.n,
      rhoDiscordant: rho,
      alpha: inputs.alpha,
      test: inputs.test,
      power: inputs.power,
      method: 'monte-carlo',
      replicates: inputs.replicates as number,
      seed: inputs.seed as number | string,
      tolerance: 1e-6,
    });
    const row = outputs[i];
    const effect = r.status === 'found' ? r.effect : null;
    const achievedPower = r.status === 'found' ? r.achievedPower : null;
    const same =
      row !== undefined &&
      row.assumedDiscordance === rho &&
      (effect === null
        ? row.effect === null
        : row.effect !== null && Math.abs(row.effect - effect) <= FROZEN_TOLERANCE);
    if (!same) {
      throw new ImepError(
        'E_PROTOCOL_INVALID',
        `the frozen MDE row ${i} (ρ = ${rho}) says θ = ${row?.effect ?? 'missing'}, the frozen method gives ${effect === null ? 'unreachable' : effect.toFixed(6)}`,
        {
          file: loaded.file,
          field: `mde.outputs[${i}]`,
          hint: 'the table must be what its frozen inputs produce: fix the inputs or the outputs (a frozen analysis is never edited silently)',
        },
      );
    }
    return { assumedDiscordance: rho, effect, achievedPower };
  });
  return { recomputed };
}

interface Effective {
  readonly n: number;
  readonly bands: number;
  readonly simulated: number;
}

function effective(loaded: LoadedSuite, opts: CalibrateOptions): Effective {
  const s = loaded.suite;
  const base: Effective = opts.quick
    ? { n: s.quick.n, bands: s.quick.campaigns, simulated: s.quick.simulated }
    : { n: s.n, bands: s.bands.count, simulated: s.simulation.campaigns };
  const bands = opts.campaigns ?? base.bands;
  if (!Number.isSafeInteger(bands) || bands < 1 || bands > s.bands.count) {
    throw new ImepError(
      'E_USAGE',
      `--campaigns must be an integer in 1…${s.bands.count} (the suite registers ${s.bands.count} non-overlapping bands), got ${bands}`,
      { field: '--campaigns' },
    );
  }
  if (opts.quick && bands * base.n > s.bands.count * s.n)
    throw new ImepError('E_USAGE', 'the quick design does not fit in the registered bands', { field: '--quick' });
  return { ...base, bands };
}

async function runDesign(
  loaded: LoadedSuite,
  design: Design,
  ckpt: LoadedCheckpoint,
  decoder: FittedDecoder | undefined,
  task: LadderTask,
  eff: Effective,
  opts: CalibrateOptions,
): Promise<DesignResult> {
  const suite = loaded.suite;
  const { test, alpha } = suite.mde.inputs;
  const campaigns: (LadderReadout & {
    band: number;
    seeds: readonly [number, number];
    removed: number;
    latchMatchesFact: number | null;
  })[] = [];
  for (let band = 0; band < eff.bands; band++) {
    const seeds = bandSeeds(suite, eff.n, band);
    const lp = designPolicy(design, ckpt, suite, task, decoder, opts.batchSize ?? 32);
    const run = await runLadder(lp, {
      design: design.id,
      band,
      seeds,
      task,
      donorSeeds: { S: fork(suite.donorSeeds.S, design.id, band), T: fork(suite.donorSeeds.T, design.id, band) },
    });
    const r = ladderReadout(ladderCounts(run.units), test, alpha);
    const latched =
      design.planted?.mode === 'fact-conditioned' ? run.units.filter((u) => u.latchA === u.fact).length : null;
    campaigns.push({
      ...r,
      band,
      seeds: [seeds[0] as number, seeds[seeds.length - 1] as number],
      removed: run.units.filter((u) => u.removed !== null).length,
      latchMatchesFact: latched,
    });
    opts.progress?.(
      `${design.id} band ${band + 1}/${eff.bands}: b′=${r.bOnlyT} c′=${r.cOnlyS} n=${r.n} θ̂=${r.theta.toFixed(4)} p=${r.p.toPrecision(3)} ${r.detected ? 'detected' : 'not detected'}`,
    );
  }
  const sum = (k: 'bOnlyT' | 'cOnlyS' | 'n' | 'both'): number => campaigns.reduce((s, c) => s + c[k], 0);
  const B = sum('bOnlyT'),
    C = sum('cOnlyS'),
    N = sum('n');
  const rates = designRates(loaded, {
    designId: design.id,
    truth: design.truth,
    B,
    C,
    N,
    n: eff.n,
    realDetected: campaigns.filter((c) => c.detected).length,
    realCampaigns: campaigns.length,
    simulatedCampaigns: eff.simulated,
    sourcePrefix: `pooled real campaigns of this design: bands 0–${eff.bands - 1} (seeds ${campaigns[0]?.seeds[0]}–${campaigns.at(-1)?.seeds[1]})`,
  });
  return {
    id: design.id,
    checkpoint: design.checkpoint,
    truth: design.truth,
    planted: design.planted ?? null,
    description: design.description ?? null,
    campaigns,
    pooled: {
      bOnlyT: B,
      cOnlyS: C,
      both: sum('both'),
      n: N,
      rhoS: N === 0 ? 0 : (C + sum('both')) / N,
      rhoT: N === 0 ? 0 : (B + sum('both')) / N,
      theta: N === 0 ? 0 : (B - C) / N,
    },
    ...rates,
  };
}

function frozenRowChecks(
  loaded: LoadedSuite,
  recomputed: ReturnType<typeof checkFrozenMde>['recomputed'],
  campaigns: number,
): FrozenRowCheck[] {
  const s = loaded.suite;
  const { test, alpha, replicates, n } = s.mde.inputs;
  return recomputed.flatMap((row, i) => {
    if (row.effect === null || row.achievedPower === null) return [];
    const rho = row.assumedDiscordance;
    const sim = simulateCampaigns({
      n,
      pB: (rho + row.effect) / 2,
      pC: (rho - row.effect) / 2,
      campaigns,
      seed: fork(s.simulation.seed, 'mde', i),
      test,
      alpha,
    });
    return [
      {
        assumedDiscordance: rho,
        frozenEffect: s.mde.outputs[i]?.effect ?? null,
        achievedPower: row.achievedPower,
        simulated: rateWithInterval(sim.detected, sim.campaigns),
        agreement: agreement(
          sim.detected,
          sim.campaigns,
          row.achievedPower,
          replicates as number,
          s.agreement.z,
        ) as Agreement,
      },
    ];
  });
}

export async function calibrate(loaded: LoadedSuite, opts: CalibrateOptions): Promise<CalibrationResult> {
  const suite = loaded.suite;
  const eff = effective(loaded, opts);
  const facts = suiteFacts(loaded.suite);
  const task: LadderTask = {
    envId: suite.env.id,
    kwargs: { ...(suite.env.kwargs ?? {}) },
    factField: facts.factField as string,
    pointStep: facts.decisionFromStep,
    leaf: 'feature',
  };
  const frozen = checkFrozenMde(loaded);
  const used = new Set(suite.designs.map((d) => d.checkpoint));
  const ckpts = new Map<string, LoadedCheckpoint>();
  const decoders = new Map<string, FittedDecoder>();
  try {
    for (const c of suite.checkpoints)
      if (used.has(c.name)) ckpts.set(c.name, await openCheckpoint(c, opts.root, loaded.file));
    for (const d of suite.designs) {
      if (d.planted?.mode === 'fact-conditioned' && !decoders.has(d.checkpoint)) {
        const fitted = await fitDecoder(
          ckpts.get(d.checkpoint) as LoadedCheckpoint,
          d.checkpoint,
          suite,
          task,
          opts.batchSize ?? 32,
        );
        decoders.set(d.checkpoint, fitted);
        opts.progress?.(
          `decoder for ${d.checkpoint}: ${fitted.fitCorrect}/${fitted.fitUnits} fit units decoded correctly`,
        );
      }
    }
    const designs: DesignResult[] = [];
    for (const d of suite.designs)
      designs.push(
        await runDesign(
          loaded,
          d,
          ckpts.get(d.checkpoint) as LoadedCheckpoint,
          decoders.get(d.checkpoint),
          task,
          eff,
          opts,
        ),
      );
    for (const c of ckpts.values()) await c.release();
    ckpts.clear();
    const campaignDesigns = await runCampaignDesigns(loaded, {
      root: opts.root,
      simulated: eff.simulated,
      ...(opts.quick ? { quick: true } : {}),
      ...(opts.campaigns === undefined ? {} : { campaigns: opts.campaigns }),
      ...(opts.batchSize === undefined ? {} : { batchSize: opts.batchSize }),
      ...(opts.keepUnits === undefined ? {} : { keepUnits: opts.keepUnits }),
      ...(opts.progress ? { progress: opts.progress } : {}),
    });
    const frozenRows = frozenRowChecks(loaded, frozen.recomputed, eff.simulated);
    return buildResult(loaded, eff, opts, designs, campaignDesigns, frozenRows, [...decoders.values()]);
  } finally {
    for (const c of ckpts.values()) await c.release();
  }
}

function buildResult(
  loaded: LoadedSuite,
  eff: Effective,
  opts: CalibrateOptions,
  designs: DesignResult[],
  campaignDesigns: CampaignDesignsResult | null,
  frozenRows: FrozenRowCheck[],
  decoders: FittedDecoder[],
): CalibrationResult {
  const s = loaded.suite;
  const { alpha, test } = s.mde.inputs;
  const limit = alpha + s.falsePositive.slack;
  const cds = campaignDesigns?.designs ?? [];
  const nullDesigns = [...designs.filter((d) => d.truth === 'none'), ...cds.filter((d) => d.truth === 'none')];
  const controls = [
    ...designs.filter((d) => d.truth === 'fact-use' && d.planted === null),
    ...cds.filter((d) => d.truth === 'fact-use'),
  ];
  const agreements = [
    ...[...designs, ...cds].flatMap((d) => [d.agreementReal, d.agreementSimulated]),
    ...frozenRows.map((r) => r.agreement),
  ];
  const bands = cds.flatMap((d) => d.campaigns);
  return {
    format: 'imep-calibration',
    version: 2,
    suite: { id: s.id, title: s.title, file: loaded.file, sha256: loaded.hash },
    checkpoints: s.checkpoints.map((c) => ({ name: c.name, path: `${c.path}/${c.file}`, sha256: c.sha256 })),
    design: {
      quick: opts.quick === true,
      n: eff.n,
      registeredN: s.n,
      realCampaignsPerDesign: eff.bands,
      simulatedCampaignsPerDesign: eff.simulated,
      test: test as PairedTest,
      alpha,
      env: s.env.id,
      ladder:
        'A (reference) · S (same-fact donor swap) · T (different-fact donor swap), read-time from the first decision step; b′ = only T flips, c′ = only S flips',
    },
    decoders: decoders.map((d) => ({
      checkpoint: d.checkpoint,
      fitSeeds: [s.decoder.fitSeeds.start, s.decoder.fitSeeds.end],
      fitUnits: d.fitUnits,
      fitCorrect: d.fitCorrect,
      centroids: d.spec.centroids.map((c) => [...c]),
    })),
    frozenMde: { inputs: s.mde.inputs, outputs: s.mde.outputs, rows: frozenRows },
    designs,
    campaignDesigns,
    checks: {
      falsePositive: {
        limit,
        rule: `one-sided 95% Clopper–Pearson upper bound of the stats-level false-positive rate ≤ α + ${s.falsePositive.slack} over ≥ 200 simulated campaigns`,
        designs: nullDesigns.map((d) => ({
          id: d.id,
          upper95: d.simulated.upper95,
          campaigns: d.simulated.campaigns,
          passed: d.simulated.upper95 <= limit && d.simulated.campaigns >= 200,
        })),
      },
      power: {
        minimum: s.mde.inputs.power,
        rule: 'unplanted fact-use designs (the positive-control checkpoints, ladder and campaign-level) detect θ > 0 in ≥ the frozen target power of real and of simulated campaigns',
        designs: controls.map((d) => ({
          id: d.id,
          real: d.real.rate,
          simulated: d.simulated.rate,
          passed: d.real.rate >= s.mde.inputs.power && d.simulated.rate >= s.mde.inputs.power,
        })),
      },
      agreement: {
        zLimit: s.agreement.z,
        compared: agreements.length,
        agreeing: agreements.filter((a) => a.agrees).length,
        passed: agreements.every((a) => a.agrees),
      },
      campaignVerdicts: {
        rule: `campaign-level designs: the registered verdict 'holds' exactly when the frozen test (${test}, α = ${alpha}) detects on the unit's adjudicated (b′, c′)`,
        campaigns: bands.length,
        matching: bands.filter((b) => b.verdictMatchesTest).length,
        passed: bands.every((b) => b.verdictMatchesTest),
      },
      noisy: noisyChecks(loaded, cds, campaignDesigns?.template.criterion.id ?? '', eff.simulated, opts.quick === true),
    },
  };
}
