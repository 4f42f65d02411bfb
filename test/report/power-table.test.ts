import { describe, expect, it } from 'vitest';
import type { Adjudication } from '../../src/adjudication/index.js';
import { ProtocolSchema } from '../../src/protocol/schema.js';
import { powerTables } from '../../src/report/power-table.js';
import { blackoutProtocol } from '../adjudication/fixtures.js';

/** A minimal adjudication carrying one θ estimand with the given counts (only the fields powerTables reads). */
function adjudicationWith(counts: { n: number; bPrime: number; cPrime: number }, estimate: number): Adjudication {
  return {
    design: { tasks: ['shell'], excludedTasks: [] },
    gates: [],
    estimands: [
      {
        id: 'theta',
        kind: 'theta',
        status: 'available',
        counts,
        estimate,
        conditions: { target: 'T_mu', sham: 'S_pi', reference: 'A' },
        cohort: { resolved: counts.n, paired: counts.n },
      },
    ],
  } as unknown as Adjudication;
}

const mde = {
  estimand: 'theta',
  inputs: {
    test: 'mcnemar-one-sided' as const,
    alpha: 0.05,
    power: 0.8,
    n: 400,
    assumedDiscordance: [0.032, 0.08],
    method: 'exact' as const,
  },
  outputs: [
    { assumedDiscordance: 0.032, effect: 0.0233 },
    { assumedDiscordance: 0.08, effect: 0.0365 },
  ],
};

describe('powerTables', () => {
  it('recomputes the paper MDE vectors at the observed discordance (n = 400: 3.2% → 2.33 pp, 8% → 3.65 pp)', () => {
    const protocol = ProtocolSchema.parse({ ...blackoutProtocol(), mde });
    const at8 = powerTables(protocol, adjudicationWith({ n: 400, bPrime: 20, cPrime: 12 }, 0.02));
    expect(at8.tables[0]!.rows).toEqual([
      ['3.20%', '+2.33 pp', '—'],
      ['8.00%', '+3.65 pp', '—'],
    ]);
    const row = at8.tables[1]!.rows[0]!;
    expect(row.slice(0, 5)).toEqual(['theta', '400', '20 + 12', '8.00%', '+2.00 pp']);
    expect(row[5]).toMatch(/^\+3\.65 pp \(power 0\.8\d{3}\)$/);
    expect(at8.notes).toEqual([]);
    const at32 = powerTables(protocol, adjudicationWith({ n: 400, bPrime: 9, cPrime: 4 }, 0.0125));
    expect(at32.tables[1]!.rows[0]![3]).toBe('3.25%');
    expect(at32.tables[1]!.rows[0]![5]).toMatch(/^\+2\.3\d pp/);
  });

  it('notes a different n, a missing estimand, and a protocol without mde', () => {
    const protocol = ProtocolSchema.parse({ ...blackoutProtocol(), mde });
    expect(powerTables(protocol, adjudicationWith({ n: 380, bPrime: 20, cPrime: 12 }, 0.02)).notes).toEqual([
      'The frozen analysis assumed n = 400; 380 pairs were resolved.',
    ]);
    const none = { ...adjudicationWith({ n: 1, bPrime: 0, cPrime: 0 }, 0), estimands: [] } as unknown as Adjudication;
    expect(powerTables(protocol, none).notes).toEqual([
      'Estimand theta is not in the adjudication: nothing observed to compare.',
    ]);
    expect(powerTables(ProtocolSchema.parse(blackoutProtocol()), none)).toEqual({
      tables: [],
      notes: ['The protocol froze no power analysis (no `mde`).'],
    });
  });
});
