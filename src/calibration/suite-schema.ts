/**
 * A calibration suite (protocols/calibration/*.yaml, version 1): known-answer designs run as A/S/T
 * ladders over many non-overlapping seed bands, the stats-level simulation, and the frozen power
 * analysis (the protocol format's `mde` block, src/protocol/schema-analysis.ts) the observed power is
 * compared with. Objects are strict: an unknown key is an error.
 *
 * Seeds: band i (0-based) of every design is `bands.start + i·n … bands.start + (i+1)·n − 1`; the
 * decoder's fit band must not meet any campaign band (checked in load-suite.ts).
 *
 * `campaigns` (optional): campaign-level designs run through IMEP's own verdict path — a protocol derived
 * from a registered template (its SHA-256 registered here) with only id, checkpoint, seed band and n
 * substituted, run by runCampaign and adjudicated by another operator (campaign-designs.ts). Band i of
 * these designs is `bands.start + i·n … bands.start + (i+1)·n − 1`, the same seeds for every task of the
 * template.
 */
import { z } from 'zod';
import {
  ExecutionNoiseSchema,
  MdeSchema,
  Kwargs,
  NonEmptyText,
  PositiveInt,
  Seed,
  SeedInt,
  Slug,
} from '../protocol/index.js';

export const SUITE_VERSION = 1;

const Sha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits (sha256sum of the file)' });

export const SuiteCheckpointSchema = z.strictObject({
  name: Slug.describe('the name designs refer to, e.g. lite-memvla'),
  path: NonEmptyText.describe('the checkpoint directory, relative to the repository root'),
  file: NonEmptyText.default('model.json'),
  sha256: Sha256.describe('SHA-256 of path/file'),
});

export const PlantedSchema = z.strictObject({
  mode: z
    .enum(['fact-conditioned', 'unconditioned'])
    .describe(
      'fact-conditioned: target = the fact decoded from memory; unconditioned: a seeded draw independent of the fact',
    ),
  delta: z.number().min(0).max(1).describe('the amplitude added to each action after the latch (action units)'),
});

export const DesignSchema = z.strictObject({
  id: Slug.describe('the design id'),
  checkpoint: Slug.describe('the name of one of the suite checkpoints'),
  planted: PlantedSchema.optional().describe('wrap the checkpoint in the planted-effect wrapper'),
  truth: z
    .enum(['fact-use', 'none'])
    .describe('the known answer: fact-use (θ > 0 by construction) or none (θ = 0 by construction)'),
  description: NonEmptyText.optional(),
});

const TemplateRefSchema = z.strictObject({
  file: NonEmptyText.describe('the protocol template, relative to the repository root'),
  sha256: Sha256.describe('SHA-256 of the template file'),
});

export const CampaignDesignSchema = z.strictObject({
  id: Slug.describe('the design id (unique across designs and campaign designs)'),
  checkpoint: Slug.describe('the name of one of the suite checkpoints; substituted into the template'),
  truth: z
    .enum(['fact-use', 'none'])
    .describe('the known answer: fact-use (θ > 0 by construction) or none (θ = 0 by construction)'),
  description: NonEmptyText.optional(),
  template: TemplateRefSchema.optional().describe(
    'this design’s own registered template (default: campaigns.template)',
  ),
  executionNoise: ExecutionNoiseSchema.optional().describe(
    'a noisy design: substituted as the template’s simulator.executionNoise',
  ),
  campaigns: PositiveInt.optional().describe('real campaigns (bands) of this design (default: campaigns.bands.count)'),
});

export const CampaignsSchema = z.strictObject({
  template: TemplateRefSchema,
  criterion: NonEmptyText.describe('the id of the template criterion whose verdict word counts: "holds" = detected'),
  n: PositiveInt.describe('seeds per band (units per task of each campaign)'),
  bands: z.strictObject({
    start: SeedInt.describe('first seed of band 0'),
    count: PositiveInt.describe('real campaigns (bands) per campaign design'),
  }),
  operators: z
    .strictObject({ runner: Slug, adjudicator: Slug })
    .describe(
      'the operator identities that run and adjudicate each unit; they must differ (no same-operator override)',
    ),
  quick: z.strictObject({ n: PositiveInt, campaigns: PositiveInt }).describe('the --quick design'),
  designs: z.array(CampaignDesignSchema).min(1),
});

export const SuiteSchema = z.strictObject({
  version: z.literal(SUITE_VERSION),
  id: Slug,
  title: NonEmptyText,
  description: NonEmptyText.optional(),
  env: z.strictObject({
    id: NonEmptyText.describe('a lite environment with a known fact field'),
    kwargs: Kwargs.optional(),
  }),
  checkpoints: z.array(SuiteCheckpointSchema).min(1),
  n: PositiveInt.describe('units per campaign (seeds per band); must equal mde.inputs.n'),
  bands: z.strictObject({
    start: SeedInt.describe('first seed of band 0'),
    count: PositiveInt.describe('real campaigns (bands) per design'),
  }),
  donorSeeds: z
    .strictObject({ S: Seed, T: Seed })
    .describe('registered seeds of the same-fact and different-fact donor draws (forked per design and band)'),
  decoder: z.strictObject({
    fitSeeds: z
      .strictObject({ start: SeedInt, end: SeedInt })
      .describe('the fit band (inclusive), disjoint from every campaign band'),
    classes: PositiveInt.min(2).describe('how many fact values the task has'),
  }),
  planted: z.strictObject({
    targets: z
      .array(z.tuple([z.number(), z.number()]))
      .min(2)
      .describe('target point per fact index (the direction table)'),
    poseField: NonEmptyText.describe('the method-visible observation field with the 2-D pose'),
    seed: Seed.describe('the unconditioned variant’s registered seed'),
  }),
  designs: z.array(DesignSchema).min(1),
  simulation: z.strictObject({
    campaigns: z.number().int().min(200).describe('stats-level simulated campaigns per design (≥ 200)'),
    seed: Seed,
  }),
  agreement: z.strictObject({
    z: z.number().gt(0).describe('|z| limit for observed vs predicted power (combined Monte-Carlo SE)'),
  }),
  falsePositive: z.strictObject({
    slack: z.number().min(0).max(1).describe('the criterion: one-sided 95% CP upper bound of the FPR ≤ α + slack'),
  }),
  quick: z
    .strictObject({ n: PositiveInt, campaigns: PositiveInt, simulated: z.number().int().min(200) })
    .describe('the --quick design (not the registered n)'),
  mde: MdeSchema.describe('the frozen power analysis; method monte-carlo with replicates and seed'),
  campaigns: CampaignsSchema.optional().describe(
    'campaign-level designs: real IMEP campaigns, detection = a registered verdict',
  ),
});

export type Suite = z.infer<typeof SuiteSchema>;
export type Design = z.infer<typeof DesignSchema>;
export type CampaignDesign = z.infer<typeof CampaignDesignSchema>;
export type Campaigns = z.infer<typeof CampaignsSchema>;
export type SuiteCheckpoint = z.infer<typeof SuiteCheckpointSchema>;
