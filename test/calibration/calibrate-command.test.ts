/** `imep calibrate` through its commander registration: files, determinism, refusals. */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerCalibrateCommand } from '../../src/cli/commands/calibrate/command.js';
import { derivedSuite } from './support.js';

async function calibrateCli(args: string[]): Promise<void> {
  const program = new Command('imep').exitOverride();
  registerCalibrateCommand(program);
  await program.parseAsync(['node', 'imep', 'calibrate', ...args]);
}

describe('imep calibrate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-calibrate-'));
  const suite = join(dir, 'suite.yaml');
  writeFileSync(
    suite,
    derivedSuite(
      ['memvla', 'planted-0-02'],
      2,
      { n: 20, campaigns: 1, simulated: 200 },
      { designs: ['rc-memvla', 'rc-blind'], quick: { n: 10, campaigns: 1 } },
    ),
  );

  it('writes canonical calibration.json, calibration.md and an offline calibration.html; same inputs → identical bytes (batch size and kept units do not matter)', async () => {
    await calibrateCli(['--suite', suite, '--out', join(dir, 'a'), '--quick', '--keep-units', join(dir, 'units')]);
    await calibrateCli(['--suite', suite, '--out', join(dir, 'b'), '--quick', '--batch', '7']);
    const a = readFileSync(join(dir, 'a', 'calibration.json'), 'utf8');
    expect(readFileSync(join(dir, 'b', 'calibration.json'), 'utf8')).toBe(a);
    const json = JSON.parse(a) as {
      format: string;
      version: number;
      design: { quick: boolean; n: number };
      designs: { id: string; real: { campaigns: number } }[];
      campaignDesigns: { n: number; designs: { id: string; campaigns: { verdict: string }[] }[] };
      checks: { campaignVerdicts: { campaigns: number; matching: number; passed: boolean } };
    };
    expect(json).toMatchObject({
      format: 'imep-calibration',
      version: 2,
      design: { quick: true, n: 20 },
      campaignDesigns: { n: 10 },
    });
    expect(json.designs.map((d) => d.id)).toEqual(['memvla', 'planted-0-02']);
    expect(json.campaignDesigns.designs.map((d) => [d.id, d.campaigns.map((c) => c.verdict)])).toEqual([
      ['rc-memvla', ['holds']],
      ['rc-blind', ['unresolved']],
    ]);
    expect(json.checks.campaignVerdicts).toEqual({ rule: expect.any(String), campaigns: 2, matching: 2, passed: true });
    expect(readdirSync(join(dir, 'units')).sort()).toEqual(['rc-blind', 'rc-memvla']);
    expect(readFileSync(join(dir, 'a', 'calibration.md'), 'utf8')).toContain(
      '| rc-memvla | lite-memvla-rc | fact-use |',
    );
    const html = readFileSync(join(dir, 'a', 'calibration.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    expect(readFileSync(join(dir, 'a', 'calibration.md'), 'utf8')).toContain('| memvla | lite-memvla |');
  }, 400_000);

  it('refuses --campaigns beyond the registered bands and a frozen MDE table its inputs do not produce', async () => {
    await expect(calibrateCli(['--suite', suite, '--out', join(dir, 'c'), '--campaigns', '9'])).rejects.toMatchObject({
      code: 'E_USAGE',
      field: '--campaigns',
    });
    const tampered = join(dir, 'tampered.yaml');
    writeFileSync(tampered, readFileSync(suite, 'utf8').replace('effect: 0.0512823486328125', 'effect: 0.04'));
    await expect(calibrateCli(['--suite', tampered, '--out', join(dir, 'd'), '--quick'])).rejects.toMatchObject({
      code: 'E_PROTOCOL_INVALID',
      field: 'mde.outputs[1]',
    });
  }, 60_000);
});
