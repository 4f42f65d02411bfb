import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EpisodeRowSchema, type EpisodeRow } from '../../src/evidence/records/episode-row.js';
import { readUnitState } from '../../src/evidence/unit-state.js';
import { computeAdjudication, renderAdjudication } from '../../src/adjudication/index.js';
import { crossCheckAdjudication } from '../../src/crosscheck/index.js';
import { loadSealedInputs } from '../../src/adjudication/sealed-inputs.js';
import { explicitOperator } from '../../src/evidence/index.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { rememberColorYaml, sandbox, scriptedOptions, writeProtocol } from './helpers.js';

function lines(file: string): unknown[] {
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

describe('campaign runner: RememberColor A/C/U/S/T with a structured bank persisting across attempts', () => {
  const box = sandbox();
  const file = writeProtocol(box, 'rc-10.yaml', rememberColorYaml({ n: 10, sha: box.checkpointSha }));
  let dirP: Promise<string> | null = null;
  const run = (): Promise<string> => (dirP ??= runCampaign(file, scriptedOptions(box, 'color')));

  it('runs and seals; memory carries attempt 1 into attempt 2 (A succeeds on attempt 2 without the cue)', async () => {
    const dir = await run();
    expect((await readUnitState(dir)).state).toBe('sealed');
    const rows = lines(join(dir, 'rows/rows.jsonl')).map((l) => EpisodeRowSchema.parse(l));
    expect(rows.length).toBe(5 * 2 * 10 * 2);
    const a2 = rows.filter((r) => r.condition === 'A' && r.attempt === 2);
    expect(a2.every((r) => r.success === true)).toBe(true);
    // C installs nothing: identical to A on outcome and actions
    const aBy = new Map(rows.filter((r) => r.condition === 'A').map((r) => [`${r.task}/${r.seed}/${r.attempt}`, r]));
    for (const c of rows.filter((r) => r.condition === 'C')) {
      expect(c.actionDigest).toBe(aBy.get(`${c.task}/${c.seed}/${c.attempt}`)?.actionDigest);
    }
  });

  it('installs U / S / T at attempt 2 before its first query, with coverage and installation traces', async () => {
    const dir = await run();
    const rows = lines(join(dir, 'rows/rows.jsonl')).map((l) => EpisodeRowSchema.parse(l));
    for (const cond of ['U', 'S', 'T']) {
      const ok2 = rows.filter((r) => r.condition === cond && r.attempt === 2 && r.status === 'ok');
      expect(ok2.length).toBeGreaterThan(0);
      for (const r of ok2) {
        expect(r.reads.decisionQueries).toBeGreaterThan(0);
        expect(r.reads.covered).toBe(true);
      }
      // attempt 1 precedes the point: no coverage claim
      for (const r of rows.filter((x) => x.condition === cond && x.attempt === 1 && x.status === 'ok'))
        expect(r.reads.covered).toBeNull();
    }
    // T swaps in a different colour: the scripted policy follows memory, so T attempt 2 fails
    expect(
      rows.filter((r) => r.condition === 'T' && r.attempt === 2 && r.status === 'ok').every((r) => r.success === false),
    ).toBe(true);
    expect(
      rows.filter((r) => r.condition === 'S' && r.attempt === 2 && r.status === 'ok').every((r) => r.success === true),
    ).toBe(true);
    const traces = lines(join(dir, 'traces/interventions.jsonl')) as {
      seq: number;
      point: string;
      condition: string;
    }[];
    expect(new Set(traces.map((t) => t.condition))).toEqual(new Set(['U', 'S', 'T']));
    expect(traces.every((t) => t.point === 'installed')).toBe(true);
    const donors = lines(join(dir, 'traces/donors.jsonl')) as { condition: string; task: string; entries: unknown[] }[];
    expect(donors.map((d) => `${d.condition}/${d.task}`)).toEqual(['S/RC3', 'S/RC5', 'T/RC3', 'T/RC5']);
  });

  it('FAILS CLOSED: a unit whose donor holds fewer records is removed (E_DONOR_SHORT), never padded', async () => {
    const dir = await run();
    const rows = lines(join(dir, 'rows/rows.jsonl')).map((l) => EpisodeRowSchema.parse(l));
    const removed = rows.filter((r) => r.status === 'removed');
    expect(removed.length).toBeGreaterThan(0);
    for (const r of removed) {
      expect(['S', 'T']).toContain(r.condition);
      expect(r.failure?.code).toBe('E_DONOR_SHORT');
      expect(r.success).toBeNull();
      expect(r.steps).toBe(0);
    }
    // both attempts of a removed unit are removed
    const byScope = new Map<string, EpisodeRow[]>();
    for (const r of rows)
      byScope.set(`${r.condition}/${r.scopeId}`, [...(byScope.get(`${r.condition}/${r.scopeId}`) ?? []), r]);
    for (const list of byScope.values()) expect(new Set(list.map((r) => r.status === 'removed')).size).toBe(1);
    // and the removal is exactly "donor has fewer records than the recipient", from the donor assignment trace
    const installed = lines(join(dir, 'traces/interventions.jsonl')) as { record: { records: unknown[] } }[];
    expect(installed.every((t) => t.record.records.length >= 1)).toBe(true);
  });
});

describe('campaign runner: N clear at the registered point', () => {
  it('clears the scope before attempt 2 keeps its clock: attempt-2 reads are empty, the trace records the clear', async () => {
    const box = sandbox();
    const text = rememberColorYaml({ n: 4, sha: box.checkpointSha })
      .replace(
        '  - { id: C, kind: C, description: "exact replicate: installs nothing" }',
        '  - { id: C, kind: C, description: "exact replicate: installs nothing" }\n  - { id: N_clr, kind: N, variant: clear, installAt: { attempt: 2, before: first-query } }',
      )
      .replace('conditions: [A, C, U, S, T]', 'conditions: [A, C, U, S, T, N_clr]')
      .replace(
        'gates:\n',
        'gates:\n  - { id: clock, kind: clock, conditions: [N_clr], hard: true, onFail: invalid }\n',
      );
    const dir = await runCampaign(writeProtocol(box, 'rc-nclr.yaml', text), scriptedOptions(box, 'color'));
    const rows = lines(join(dir, 'rows/rows.jsonl')).map((l) => EpisodeRowSchema.parse(l));
    const n2 = rows.filter((r) => r.condition === 'N_clr' && r.attempt === 2);
    expect(n2.length).toBe(8);
    for (const r of n2) {
      expect(r.reads.total).toBeGreaterThan(0);
      expect(r.reads.empty).toBe(r.reads.total);
      expect(r.reads.covered).toBeNull();
    }
    const n1 = rows.filter((r) => r.condition === 'N_clr' && r.attempt === 1);
    const a1 = new Map(
      rows.filter((r) => r.condition === 'A' && r.attempt === 1).map((r) => [`${r.task}/${r.seed}`, r.actionDigest]),
    );
    for (const r of n1) expect(r.actionDigest).toBe(a1.get(`${r.task}/${r.seed}`));
    const cleared = (
      lines(join(dir, 'traces/interventions.jsonl')) as {
        condition: string;
        point: string;
        record: { clockBefore: number; clockAfter: number; clearedCount: number };
      }[]
    ).filter((t) => t.condition === 'N_clr');
    expect(cleared.length).toBe(8);
    for (const t of cleared) {
      expect(t.point).toBe('cleared');
      expect(t.record.clockAfter).toBe(t.record.clockBefore);
      expect(t.record.clearedCount).toBeGreaterThan(0);
    }
    // the rows carry the first query's clock and candidate count (from its ReadContext): N_clr keeps the
    // scope clock (as A's, past attempt 1's queries) but leaves no candidate; A carries attempt 1's records
    const a2 = new Map(
      rows.filter((r) => r.condition === 'A' && r.attempt === 2).map((r) => [`${r.task}/${r.seed}`, r]),
    );
    for (const r of n2) {
      const a = a2.get(`${r.task}/${r.seed}`)!;
      expect(a.reads.firstQuery?.clock).toBeGreaterThan(1);
      expect(a.reads.firstQuery?.candidates).toBeGreaterThan(0);
      expect(r.reads.firstQuery).toEqual({ clock: a.reads.firstQuery?.clock, candidates: 0 });
    }
    for (const r of rows.filter((x) => x.attempt === 1 && x.status === 'ok'))
      expect(r.reads.firstQuery).toEqual({ clock: 1, candidates: 0 });
    for (const r of rows.filter((x) => x.status === 'removed')) expect(r.reads.firstQuery).toBeNull();
    // so the registered clock gate (N_clr) and candidate gate (U, S, T) pass, and the cross-check agrees
    const inputs = await loadSealedInputs(dir);
    const adjudication = computeAdjudication(inputs, {
      operator: explicitOperator('review-session'),
      ranBy: [],
      override: null,
      amendments: [],
    });
    expect(adjudication.gates.find((g) => g.gate === 'clock')).toMatchObject({
      passed: true,
      evaluable: true,
      observed: { conditions: [{ condition: 'N_clr@w1', compared: 8, mismatches: 0 }] },
    });
    const candidate = adjudication.gates.find((g) => g.gate === 'candidate')!;
    expect(candidate).toMatchObject({ passed: true, evaluable: true });
    const read = (f: string): string => readFileSync(join(dir, f), 'utf8');
    const check = crossCheckAdjudication(
      { protocolText: read('protocol.json'), rowsText: read('rows/rows.jsonl'), sealText: read('seal.json') },
      renderAdjudication(adjudication),
    );
    expect(check.disagreements).toEqual([]);
  });
});
