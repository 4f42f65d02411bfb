/**
 * Campaign-level calibration designs (suite block `campaigns`): the known answers checked through IMEP's
 * OWN verdict path instead of the ladder harness. Per design and seed band, one fresh evidence unit:
 *   protocol = the registered template with id, checkpoint, seed band and n substituted (campaign-protocol.ts)
 *   runCampaign → seal under `operators.runner`, adjudicateUnit under `operators.adjudicator` (campaign-run.ts)
 *   detected  ⇔  the registered criterion's verdict word is 'holds'
 * Per design: the detection rate (power when fact use is real, false-positive rate when it is not) with its
 * exact Clopper–Pearson interval, and — from the pooled (b′, c′) of these real campaigns — the stats-level
 * simulation and the frozen-method prediction, as for the ladder designs (design-rates.ts).
 *
 * Each unit also records the frozen detection test (mde.inputs.test at α) on its own (b′, c′). With
 * `lower-bound-above, margin 0, conditional-exact` at α per endpoint, 'holds' ⇔ CP₋(b′; b′ + c′, α) > ½ ⇔
 * the one-sided exact McNemar p < α (p is dyadic, never equal to α = 0.05): so the campaigns show that the
 * verdict the adjudicator issues is the detection the stats-level simulation counts — the ≥ 200-campaign
 * false-positive rate stays with that simulation, and these real campaigns validate the rule and the
 * rates fed to it.
 *
 * Units live in a fresh temporary folder removed afterwards, or under `keepUnits` (one folder per design
 * and band, never reused). Nothing of their paths, ids or times enters the result.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ImepError } from '../core/index.js';
import { campaignBandSeeds, deriveProtocol, loadCampaignTemplate } from './campaign-protocol.js';
import { runCampaignUnit } from './campaign-run.js';
import { designRates } from './design-rates.js';
import { detects } from './ladder-readout.js';
import type { LoadedSuite } from './load-suite.js';
import { criterionRates, pooledFloor } from './criterion-rates.js';
import type { CampaignTemplate } from './campaign-protocol.js';
import type { CampaignBandResult, CampaignDesignResult, CampaignDesignsResult } from './result.js';
import type { CampaignDesign, Campaigns, SuiteCheckpoint } from './suite-schema.js';

export interface CampaignDesignOptions {
  readonly root: string;
  readonly quick?: boolean;
  /** Cap on campaigns (bands) per design (default: the registered campaigns.bands.count). */
  readonly campaigns?: number;
  readonly simulated: number;
  readonly batchSize?: number;
  /** Keep the evidence units under this folder (must be empty or absent); default: a temporary folder, removed. */
  readonly keepUnits?: string;
  readonly progress?: (line: string) => void;
}

export const SUBSTITUTED = ['id', 'checkpoint', 'seeds.bands', 'n'] as const;

function effectiveCampaigns(c: Campaigns, opts: CampaignDesignOptions): { n: number; bands: number } {
  const base = opts.quick ? { n: c.quick.n, bands: c.quick.campaigns } : { n: c.n, bands: c.bands.count };
  return { n: base.n, bands: Math.min(base.bands, opts.campaigns ?? base.bands) };
}

/** Campaigns of one design: its own registered count (default: the block's), capped like the block's. */
function designBands(c: Campaigns, d: CampaignDesign, opts: CampaignDesignOptions): number {
  const registered = d.campaigns ?? c.bands.count;
  const base = opts.quick ? Math.min(c.quick.campaigns, registered) : registered;
  return Math.min(base, opts.campaigns ?? base);
}

async function unitsRoot(opts: CampaignDesignOptions): Promise<{ dir: string; temporary: boolean }> {
  if (opts.keepUnits === undefined)
    return { dir: await mkdtemp(join(tmpdir(), 'imep-calibrate-units-')), temporary: true };
  const dir = resolve(opts.keepUnits);
  const present = await readdir(dir).catch(() => [] as string[]);
  if (present.length > 0) {
    throw new ImepError('E_USAGE', `${dir} is not empty; calibration units need a fresh folder`, {
      field: '--keep-units',
      hint: 'pass a new or empty folder (units are never overwritten)',
    });
  }
  return { dir, temporary: false };
}

export async function runCampaignDesigns(
  loaded: LoadedSuite,
  opts: CampaignDesignOptions,
): Promise<CampaignDesignsResult | null> {
  const suite = loaded.suite;
  const c = suite.campaigns;
  if (c === undefined) return null;
  const template = await loadCampaignTemplate(loaded, opts.root);
  // a design's own template (designs[i].template), read and checked once per registered (file, sha256)
  const templates = new Map<string, CampaignTemplate>();
  const templateOf = async (d: CampaignDesign, i: number): Promise<CampaignTemplate> => {
    if (d.template === undefined) return template;
    const key = `${d.template.file}\u001f${d.template.sha256}`;
    let t = templates.get(key);
    if (t === undefined)
      templates.set(
        key,
        (t = await loadCampaignTemplate(loaded, opts.root, d.template, `campaigns.designs[${i}].template`)),
      );
    return t;
  };
  const eff = effectiveCampaigns(c, opts);
  const { test, alpha } = suite.mde.inputs;
  const units = await unitsRoot(opts);
  try {
    const designs: CampaignDesignResult[] = [];
    for (const [i, d] of c.designs.entries()) {
      const ckpt = suite.checkpoints.find((k) => k.name === d.checkpoint) as SuiteCheckpoint;
      const dt = await templateOf(d, i);
      const bands = designBands(c, d, opts);
      const campaigns: CampaignBandResult[] = [];
      for (let band = 0; band < bands; band++) {
        const seeds = campaignBandSeeds(c, eff.n, band);
        const derived = deriveProtocol(dt, suite.id, d, ckpt, eff.n, seeds, band);
        const { result } = await runCampaignUnit({
          derived,
          template: dt,
          dir: join(units.dir, d.id, `band-${band}`),
          root: opts.root,
          operators: c.operators,
          ...(opts.batchSize === undefined ? {} : { batchSize: opts.batchSize }),
        });
        const t = detects(result.bOnlyT, result.cOnlyS, test, alpha);
        campaigns.push({
          ...result,
          band,
          seeds,
          test: t,
          verdictMatchesTest: (result.verdict === 'holds') === t.detected,
        });
        opts.progress?.(
          `${d.id} campaign ${band + 1}/${bands} (IMEP unit ${derived.id}): b′=${result.bOnlyT} c′=${result.cOnlyS} n=${result.n} ${template.criterion.id}: ${result.verdict}`,
        );
      }
      designs.push(designResult(loaded, d, dt, campaigns, bands, opts.simulated));
    }
    return {
      template: { file: template.file, sha256: template.sha256, criterion: template.criterion },
      substituted: [...SUBSTITUTED],
      operators: { runner: c.operators.runner, adjudicator: c.operators.adjudicator },
      lifecycle:
        'per design and band a fresh unit: create + precommit → formal run → seal (runner) → adjudicate (adjudicator, no same-operator override); detected ⇔ the registered criterion holds',
      n: eff.n,
      registeredN: c.n,
      campaignsPerDesign: eff.bands,
      registeredCampaigns: c.bands.count,
      bandsStart: c.bands.start,
      note: 'Real IMEP campaigns (runCampaign → seal → adjudicate). The ≥ 200-campaign false-positive check stays with the stats-level simulation; these campaigns validate its detection rule (verdict = frozen test on (b′, c′)) and the rates fed to it.',
      designs,
    };
  } finally {
    if (units.temporary) await rm(units.dir, { recursive: true, force: true });
  }
}

function designResult(
  loaded: LoadedSuite,
  d: CampaignDesign,
  template: CampaignTemplate,
  campaigns: readonly CampaignBandResult[],
  bands: number,
  simulated: number,
): CampaignDesignResult {
  const sum = (k: 'bOnlyT' | 'cOnlyS' | 'n' | 'removed'): number => campaigns.reduce((s, x) => s + x[k], 0);
  const B = sum('bOnlyT'),
    C = sum('cOnlyS'),
    N = sum('n');
  const verdicts: Record<string, number> = {};
  for (const x of campaigns) verdicts[x.verdict] = (verdicts[x.verdict] ?? 0) + 1;
  const rates = designRates(loaded, {
    designId: d.id,
    truth: d.truth,
    B,
    C,
    N,
    // units per simulated campaign: the mean paired n of the real campaigns (tasks × seeds, less removed units)
    n: Math.max(1, Math.round(N / Math.max(1, campaigns.length))),
    realDetected: campaigns.filter((x) => x.verdict === 'holds').length,
    realCampaigns: campaigns.length,
    simulatedCampaigns: simulated,
    sourcePrefix: `pooled real IMEP campaigns of this design (adjudicated θ counts): bands 0–${bands - 1} (seeds ${campaigns[0]?.seeds[0]}–${campaigns.at(-1)?.seeds[1]} per task)`,
  });
  return {
    id: d.id,
    checkpoint: d.checkpoint,
    truth: d.truth,
    description: d.description ?? null,
    campaigns,
    pooled: { bOnlyT: B, cOnlyS: C, n: N, removed: sum('removed'), theta: N === 0 ? 0 : (B - C) / N },
    verdicts,
    template: template.file,
    executionNoise: d.executionNoise ?? null,
    criteria: criterionRates(template, campaigns),
    replicateFloor: pooledFloor(campaigns),
    ...rates,
  };
}
