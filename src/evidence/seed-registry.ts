import { open, unlink } from 'node:fs/promises';
import { makeDirs, ImepError } from '../core/index.js';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ioError, writeJsonAtomic } from './io/atomic-write.js';
import { readRecord } from './io/record-file.js';
import { SeedBandSchema, type SeedBand } from './records/evidence-unit.js';

/**
 * The seed registry: campaign id → seed bands per task (inclusive integer ranges). Two campaigns'
 * bands OVERLAP when their tasks match (or either task is '*') and their ranges intersect. A new
 * campaign whose band overlaps a registered one is refused with E_SEED_OVERLAP naming both
 * campaigns and the overlapping range — unless the new campaign's protocol declares the reuse
 * (`reuse: [otherCampaignId]`), which is recorded. Re-registering a campaign with the same bands and
 * reuse is a no-op; with different ones it is refused (bands are frozen at precommit).
 *
 * Updates are read–check–write under an exclusive lock file (`<registry>.lock`) and the write is
 * atomic, so concurrent precommits cannot lose each other's entries.
 */

export const DEFAULT_SEED_REGISTRY = 'campaigns/seed-registry.json';

const EntrySchema = z.object({
  bands: z.array(SeedBandSchema),
  reuse: z.array(z.string()),
  registeredAt: z.string(),
  protocolHash: z.string().nullable(),
});
export type SeedRegistryEntry = z.infer<typeof EntrySchema>;

const RegistrySchema = z.object({
  kind: z.literal('imep.seed-registry'),
  version: z.literal(1),
  campaigns: z.record(z.string(), EntrySchema),
});
export type SeedRegistry = z.infer<typeof RegistrySchema>;

export interface SeedOverlap {
  readonly campaignId: string;
  readonly band: SeedBand;
  readonly otherCampaignId: string;
  readonly otherBand: SeedBand;
  readonly start: number;
  readonly end: number;
}

const emptyRegistry = (): SeedRegistry => ({ kind: 'imep.seed-registry', version: 1, campaigns: {} });

export async function readSeedRegistry(path: string): Promise<SeedRegistry> {
  const r = await readRecord(path, RegistrySchema);
  if (r.kind === 'missing') return emptyRegistry();
  if (r.kind === 'bad') {
    throw new ImepError('E_IO', `the seed registry ${r.reason}`, {
      file: path,
      hint: 'restore it from version control; it is only written by imep',
    });
  }
  return r.value;
}

function tasksMeet(a: string, b: string): boolean {
  return a === b || a === '*' || b === '*';
}

function intersect(a: SeedBand, b: SeedBand): [number, number] | null {
  const start = Math.max(a.start, b.start);
  const end = Math.min(a.end, b.end);
  return tasksMeet(a.task, b.task) && start <= end ? [start, end] : null;
}

/** Every overlap between `bands` and the registered campaigns not named in `reuse` (pure). */
export function findSeedOverlaps(
  registry: SeedRegistry,
  campaignId: string,
  bands: readonly SeedBand[],
  reuse: readonly string[],
): SeedOverlap[] {
  const out: SeedOverlap[] = [];
  bands.forEach((band, i) => {
    bands.slice(i + 1).forEach((other) => {
      const hit = intersect(band, other);
      if (hit)
        out.push({ campaignId, band, otherCampaignId: campaignId, otherBand: other, start: hit[0], end: hit[1] });
    });
  });
  for (const [otherId, entry] of Object.entries(registry.campaigns).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (otherId === campaignId || reuse.includes(otherId)) continue;
    for (const band of bands) {
      for (const otherBand of entry.bands) {
        const hit = intersect(band, otherBand);
        if (hit) out.push({ campaignId, band, otherCampaignId: otherId, otherBand, start: hit[0], end: hit[1] });
      }
    }
  }
  return out;
}

const fmtBand = (b: SeedBand): string => `task ${b.task}, seeds ${b.start}–${b.end}`;

export function describeOverlap(o: SeedOverlap): string {
  return `campaign '${o.campaignId}' (${fmtBand(o.band)}) overlaps campaign '${o.otherCampaignId}' (${fmtBand(o.otherBand)}) at seeds ${o.start}–${o.end}`;
}

async function withLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  await makeDirs(dirname(path)).catch((e: unknown) => {
    throw ioError(dirname(path), 'create the registry directory', e);
  });
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(lock, 'wx');
      await fh.close();
      break;
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw ioError(lock, 'create the registry lock', e);
      if (attempt >= 100) {
        throw new ImepError('E_IO', 'the seed registry is locked by another imep process', {
          file: lock,
          hint: 'wait for it to finish; if no imep process is running, delete the lock file',
        });
      }
      await sleep(50);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

export interface RegisterSeedsInput {
  readonly campaignId: string;
  readonly bands: readonly SeedBand[];
  /** Campaign ids whose seeds this campaign's protocol declares it reuses. */
  readonly reuse?: readonly string[];
  readonly protocolHash?: string | null;
  readonly now?: () => Date;
}

/** Registers a campaign's seed bands; refuses overlaps (E_SEED_OVERLAP). Returns the stored entry. */
export async function registerSeeds(path: string, input: RegisterSeedsInput): Promise<SeedRegistryEntry> {
  const bands = input.bands.map((b) => SeedBandSchema.parse(b));
  const reuse = [...new Set(input.reuse ?? [])].sort();
  return withLock(path, async () => {
    const registry = await readSeedRegistry(path);
    const existing = registry.campaigns[input.campaignId];
    if (existing !== undefined) {
      if (
        JSON.stringify(existing.bands) === JSON.stringify(bands) &&
        JSON.stringify(existing.reuse) === JSON.stringify(reuse)
      )
        return existing;
      throw new ImepError(
        'E_SEED_OVERLAP',
        `campaign '${input.campaignId}' is already registered with other seed bands`,
        {
          file: path,
          hint: 'seed bands are frozen at precommit; new bands need a new campaign id',
        },
      );
    }
    const unknown = reuse.filter((id) => registry.campaigns[id] === undefined);
    if (unknown.length > 0) {
      throw new ImepError(
        'E_USAGE',
        `campaign '${input.campaignId}' declares reuse of '${unknown.join("', '")}', which is not in the seed registry`,
        {
          file: path,
          field: 'reuse',
          hint: 'fix the campaign id in the protocol, or register that campaign first',
        },
      );
    }
    const overlaps = findSeedOverlaps(registry, input.campaignId, bands, reuse);
    const first = overlaps[0];
    if (first !== undefined) {
      const more = overlaps.length > 1 ? ` (and ${overlaps.length - 1} more)` : '';
      throw new ImepError('E_SEED_OVERLAP', `${describeOverlap(first)}${more}`, {
        file: path,
        hint:
          first.otherCampaignId === first.campaignId
            ? "merge the campaign's overlapping bands"
            : `pick a disjoint band, or declare \`reuse: [${first.otherCampaignId}]\` in the protocol if the reuse is intended`,
      });
    }
    const entry: SeedRegistryEntry = {
      bands,
      reuse,
      registeredAt: (input.now ?? (() => new Date()))().toISOString(),
      protocolHash: input.protocolHash ?? null,
    };
    await writeJsonAtomic(path, { ...registry, campaigns: { ...registry.campaigns, [input.campaignId]: entry } });
    return entry;
  });
}
