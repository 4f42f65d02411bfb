import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

describe('imep --help', () => {
  it('lists the six command groups', () => {
    const r = runCli(['--help']);
    expect(r.code).toBe(0);
    for (const g of ['campaign', 'stats', 'sim', 'chainbench', 'cluster', 'report'])
      expect(r.stdout).toMatch(new RegExp(`^\\s+${g}\\b`, 'm'));
  });
});

describe('imep stats paired', () => {
  it('prints the paper values as proportions with --json', () => {
    const r = runCli(['stats', 'paired', '--b', '3', '--c', '4', '--n', '200', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as {
      b: number;
      c: number;
      n: number;
      D: number;
      rho: number;
      mcnemarP: number;
      bound: { alphaPerComponent: number; lower: number; upper: number };
      tango: { level: number; lower: number; upper: number };
    };
    expect(j).toMatchObject({ b: 3, c: 4, n: 200, D: -0.005, rho: 0.035, mcnemarP: 1 });
    expect(j.bound.alphaPerComponent).toBe(0.05);
    expect(j.bound.upper).toBeCloseTo(0.031449989, 8);
    expect(j.tango.level).toBe(0.95);
    expect(j.tango.lower).toBeLessThan(j.D);
    expect(j.tango.upper).toBeGreaterThan(j.D);
  });

  it('honours --alpha (GRID-1a: α = 0.025 per component)', () => {
    const r = runCli(['stats', 'paired', '--b', '13', '--c', '6', '--n', '72', '--alpha', '0.025', '--json']);
    const j = JSON.parse(r.stdout) as { bound: { lower: number; upper: number }; mcnemarP: number };
    expect(j.bound.lower).toBeCloseTo(-0.0728, 4);
    expect(j.bound.upper).toBeCloseTo(0.2577, 4);
    expect(j.mcnemarP).toBeCloseTo(0.1671, 4);
  });

  it('prints a human table in percentage points without --json', () => {
    const r = runCli(['stats', 'paired', '--b', '9', '--c', '1', '--n', '200']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('+7.70 pp');
    expect(r.stdout).toContain('0.02148');
  });

  it.each([
    [['--b', '-3', '--c', '4', '--n', '200'], '--b'],
    [['--b', 'x', '--c', '4', '--n', '200'], '--b'],
    [['--b', '3', '--c', '4.5', '--n', '200'], '--c'],
    [['--b', '3', '--c', '400', '--n', '200'], '--n'],
    [['--b', '3', '--c', '4', '--n', '200', '--level', '1.5'], '--level'],
    [['--b', '3', '--c', '4', '--n', '200', '--alpha', '0'], '--alpha'],
  ])('refuses %j with exit 2 and one line naming %s', (args, flag) => {
    const r = runCli(['stats', 'paired', ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(flag);
  });

  it('a missing required option exits 2', () => {
    const r = runCli(['stats', 'paired', '--b', '3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--c');
  });
});

describe('imep stats proportion', () => {
  it('gives Clopper–Pearson and Wilson intervals', () => {
    const j = JSON.parse(runCli(['stats', 'proportion', '--x', '78', '--n', '172', '--json']).stdout) as {
      clopperPearson: [number, number];
      wilson: [number, number];
    };
    expect(j.clopperPearson[0]).toBeCloseTo(0.378, 3);
    expect(j.clopperPearson[1]).toBeCloseTo(0.531, 3);
    const w = JSON.parse(runCli(['stats', 'proportion', '--x', '188', '--n', '200', '--json']).stdout) as {
      wilson: [number, number];
    };
    expect(w.wilson[0]).toBeCloseTo(0.898, 3);
    expect(w.wilson[1]).toBeCloseTo(0.965, 3);
  });

  it('one-sided upper bound: 21/200 at 97.5% equals the two-sided 95% upper end', () => {
    const up = JSON.parse(
      runCli(['stats', 'proportion', '--x', '21', '--n', '200', '--sided', 'upper', '--level', '0.975', '--json'])
        .stdout,
    ) as { clopperPearson: [number, number] };
    expect(up.clopperPearson[0]).toBe(0);
    expect(up.clopperPearson[1]).toBeCloseTo(0.156, 3);
  });

  it('refuses x > n and a bad --sided', () => {
    expect(runCli(['stats', 'proportion', '--x', '5', '--n', '3']).code).toBe(2);
    const r = runCli(['stats', 'proportion', '--x', '1', '--n', '3', '--sided', 'left']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--sided');
  });
});

describe('imep stats holm', () => {
  it('adjusts in input order', () => {
    const j = JSON.parse(runCli(['stats', 'holm', '0.01', '0.04', '0.03', '0.005', '--json']).stdout) as {
      adjusted: number[];
    };
    expect(j.adjusted.map((p) => Number(p.toFixed(10)))).toEqual([0.03, 0.06, 0.06, 0.02]);
  });

  it('keeps an unavailable slot in the family at p = 1', () => {
    const j = JSON.parse(runCli(['stats', 'holm', '0.01', 'unavailable', '--json']).stdout) as {
      adjusted: (number | string)[];
    };
    expect(j.adjusted).toEqual([0.02, 'unavailable']);
  });

  it('refuses a non-probability', () => {
    const r = runCli(['stats', 'holm', '0.01', '1.2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('p[2]');
  });
});

describe('imep stats demo', () => {
  it('reproduces every published value or explains the difference', () => {
    const r = runCli(['stats', 'demo', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as {
      matched: number;
      knownDifferences: number;
      total: number;
      rows: { status: string }[];
    };
    expect(j.rows.some((row) => row.status === 'differs')).toBe(false);
    expect(j.matched).toBe(j.total - j.knownDifferences);
    expect(j.knownDifferences).toBe(1);
  });
});
