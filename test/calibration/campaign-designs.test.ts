/**
 * Campaign-level calibration designs: real IMEP campaigns (runCampaign → seal → adjudicate by another
 * operator) on the RememberColor structured-bank checkpoints, detection = the registered Q4_theta verdict.
 * Two bands of 15 seeds per task per design (4 units, ≈ 1,900 episodes); refusals need no run.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSuite, type CampaignDesignsResult } from '../../src/calibration/index.js';
import { runCampaignDesigns } from '../../src/calibration/campaign-designs.js';
import { campaignBandSeeds, deriveProtocol, loadCampaignTemplate } from '../../src/calibration/campaign-protocol.js';
import { readUnitState, verifyUnit } from '../../src/evidence/index.js';
import { derivedSuite, ROOT } from './support.js';

const N = 15;
const text = derivedSuite(['memvla'], 2, undefined, {
  designs: ['rc-memvla', 'rc-blind'],
  bands: 2,
  quick: { n: N, campaigns: 2 },
});
const loaded = parseSuite(text, 'derived.yaml');
const scratch = mkdtempSync(join(tmpdir(), 'imep-calibrate-campaigns-'));
const units = join(scratch, 'units');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let result: CampaignDesignsResult;
const design = (id: string) => result.designs.find((d) => d.id === id)!;

describe('campaign-level designs through IMEP’s verdict path', () => {
  it('runs one sealed, adjudicated unit per design and band', async () => {
    result = (await runCampaignDesigns(loaded, { root: ROOT, quick: true, simulated: 2000, keepUnits: units }))!;
    expect(result).toMatchObject({
      n: N,
      registeredN: 30,
      campaignsPerDesign: 2,
      operators: { runner: 'calibration-runner', adjudicator: 'calibration-adjudicator' },
    });
    expect(result.template.criterion).toEqual({
      id: 'Q4_theta',
      estimand: 'theta',
      rule: 'lower-bound-above',
      method: 'conditional-exact',
    });
    for (const id of ['rc-memvla', 'rc-blind']) {
      for (const band of [0, 1]) {
        const campaigns = join(units, id, `band-${band}`, 'campaigns');
        const dir = join(
          campaigns,
          readdirSync(campaigns).find((n) => n.startsWith('calibration-shellgame-'))!,
        );
        expect((await readUnitState(dir)).state, `${id} band ${band}`).toBe('adjudicated');
        expect((await verifyUnit(dir)).ok).toBe(true);
        const frozen = JSON.parse(readFileSync(join(dir, 'protocol.json'), 'utf8')) as {
          id: string;
          n: number;
          seeds: { bands: unknown[] };
          checkpoint: { path: string };
        };
        expect(frozen).toMatchObject({
          id: `calibration-shellgame-${id}-band-${band}`,
          n: N,
          seeds: { bands: [{ start: 740000 + N * band, end: 740000 + N * band + N - 1 }] },
          checkpoint: { path: `checkpoints/lite-${id.slice(3)}-rc` },
        });
      }
    }
  }, 600_000);

  it('lite-memvla-rc: every band’s Q4 verdict holds — T flips every paired unit, S none — under another operator', () => {
    const d = design('rc-memvla');
    expect(d.campaigns.map((c) => c.verdict)).toEqual(['holds', 'holds']);
    for (const c of d.campaigns) {
      expect(c.cOnlyS).toBe(0);
      expect(c.bOnlyT).toBe(c.n);
      expect(c.n + c.removed).toBe(2 * N); // RC3 + RC5, the same seeds
      expect(c.n).toBeGreaterThanOrEqual(2 * N - 4);
      expect(c.bound?.lower).toBeGreaterThan(0);
      expect(c.goNoGo).toBe('confirmatory');
      expect(c.gates.every((g) => g.passed)).toBe(true);
      expect(c.ranBy).toEqual(['calibration-runner']);
      expect(c.adjudicatedBy).toBe('calibration-adjudicator');
      expect(c.verdictMatchesTest).toBe(true);
      expect(c.rowCount).toBe(2 * N * 4 * 2); // tasks × seeds × conditions (A, C, S, T) × attempts
    }
    expect(d.real).toMatchObject({ kind: 'power', detected: 2, campaigns: 2, rate: 1 });
    expect(d.real.cp95.lower).toBeCloseTo(Math.sqrt(0.025), 12); // exact CP at 2/2
    expect(d.verdicts).toEqual({ holds: 2 });
    expect(d.pooled.theta).toBe(1);
    expect(d.simulated).toMatchObject({ detected: 2000, campaigns: 2000 });
  });

  it('lite-blind-rc: no band holds, b′ = c′ = 0, and the false-positive rate is 0 with its exact bound', () => {
    const d = design('rc-blind');
    for (const c of d.campaigns) {
      expect(c).toMatchObject({
        bOnlyT: 0,
        cOnlyS: 0,
        verdict: 'unresolved',
        verdictMatchesTest: true,
        goNoGo: 'confirmatory',
      });
      expect(c.bound).toMatchObject({ lower: 0, upper: 0, threshold: 0 }); // degenerate conditional bound, b′ + c′ = 0
    }
    expect(d.real).toMatchObject({ kind: 'false-positive-rate', detected: 0, campaigns: 2 });
    expect(d.real.upper95).toBeCloseTo(1 - 0.05 ** 0.5, 12);
    expect(d.simulationParameters).toMatchObject({ pB: 0, pC: 0 });
    expect(d.simulated.detected).toBe(0);
    expect(d.simulated.upper95).toBeCloseTo(1 - 0.05 ** (1 / 2000), 12);
  });

  it('records what is deterministic: rows, protocol and plan hashes, never unit paths or times', () => {
    const json = JSON.stringify(result);
    expect(json).not.toContain(units);
    expect(json).not.toMatch(/20\d\d-\d\d-\d\dT/);
    expect(json).not.toMatch(/sealRoot|merkle/i);
    const hashes = result.designs.flatMap((d) => d.campaigns.map((c) => c.rowsSha256));
    expect(new Set(hashes).size).toBe(4);
    for (const h of hashes) expect(h).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('campaign-level designs: derivation and refusals', () => {
  it('the derived protocol is the template with exactly id, checkpoint, seeds.bands and n substituted', async () => {
    const template = await loadCampaignTemplate(loaded, ROOT);
    const c = loaded.suite.campaigns!;
    const ckpt = loaded.suite.checkpoints.find((k) => k.name === 'lite-blind-rc')!;
    const seeds = campaignBandSeeds(c, 30, 3);
    expect(seeds).toEqual([740090, 740119]);
    const d = deriveProtocol(template, 'calibration-shellgame', c.designs[1]!, ckpt, 30, seeds, 3);
    expect(d.id).toBe('calibration-shellgame-rc-blind-band-3');
    const { id: _i, checkpoint, seeds: s, n, ...rest } = d.protocol;
    const { id: _t, checkpoint: _tc, seeds: ts, n: _tn, ...templateRest } = template.protocol;
    expect(rest).toEqual(templateRest);
    expect(checkpoint).toMatchObject({ path: 'checkpoints/lite-blind-rc', file: 'model.json', sha256: ckpt.sha256 });
    expect(s).toEqual({ ...ts, bands: [{ start: 740090, end: 740119 }] });
    expect(n).toBe(30);
    expect(deriveProtocol(template, 'calibration-shellgame', c.designs[1]!, ckpt, 30, seeds, 3).protocolHash).toBe(
      d.protocolHash,
    );
  });

  it('refuses a changed template, a missing criterion, one operator for run and adjudication, and a used units folder', async () => {
    const edit = (from: string | RegExp, to: string) => parseSuite(text.replace(from, to), 'edited.yaml');
    await expect(
      loadCampaignTemplate(edit(/sha256: 83fb[0-9a-f]+/, `sha256: ${'f'.repeat(64)}`), ROOT),
    ).rejects.toMatchObject({ code: 'E_PROTOCOL_INVALID', field: 'campaigns.template.sha256' });
    await expect(loadCampaignTemplate(edit('criterion: Q4_theta', 'criterion: Q9'), ROOT)).rejects.toMatchObject({
      code: 'E_PROTOCOL_INVALID',
      field: 'campaigns.criterion',
    });
    const refusal = (from: string, to: string): unknown => {
      try {
        edit(from, to);
      } catch (e) {
        return e;
      }
      return null;
    };
    expect(refusal('adjudicator: calibration-adjudicator', 'adjudicator: calibration-runner')).toMatchObject({
      code: 'E_PROTOCOL_INVALID',
      field: 'campaigns.operators',
    });
    expect(refusal('checkpoint: lite-blind-rc', 'checkpoint: lite-nothing')).toMatchObject({
      code: 'E_PROTOCOL_INVALID',
      field: 'campaigns.designs[1].checkpoint',
    });
    expect(refusal('id: rc-blind', 'id: memvla')).toMatchObject({
      code: 'E_PROTOCOL_INVALID',
      field: 'campaigns.designs[1].id',
    });
    const used = join(scratch, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'x'), '');
    await expect(
      runCampaignDesigns(loaded, { root: ROOT, quick: true, simulated: 200, keepUnits: used }),
    ).rejects.toMatchObject({ code: 'E_USAGE', field: '--keep-units' });
  });
});
