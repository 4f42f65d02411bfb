/**
 * The policy-server runtime (src/campaign/server-runtime.ts) registered from test code with an in-process fake
 * connector serving a deterministic history-using policy: a whole lite campaign through closeout. The history is
 * IMEP's (memory.bank: history), read through the hook: N (block) lowers success, C's rows equal A's, S (a same-fact
 * donor's records) keeps A's outcomes while T (a different-fact donor's) lowers them, with survival coverage 1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjudicateStep, closeoutStep, crossCheckStep } from '../../src/app/pipeline.js';
import { runCampaign } from '../../src/campaign/campaign.js';
import { policyRuntimeKinds, serverRuntimeKind } from '../../src/campaign/index.js';
import { ImepError, isImepError } from '../../src/core/index.js';
import { explicitOperator, readUnitState } from '../../src/evidence/index.js';
import { fakeConnector } from '../policies/servers/fake-session.js';
import { sandbox, writeProtocol } from './helpers.js';
import { ENDPOINT, historyPolicy, historyYaml } from './server-history-campaign.js';

interface Row {
  seq: number;
  condition: string;
  seed: number;
  success: boolean;
  status: string;
  [k: string]: unknown;
}
const rowsOf = (unit: string): Row[] =>
  readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

const connector = fakeConnector((obs) => historyPolicy(obs));
let unregister: () => void = () => undefined;
beforeAll(() => {
  unregister = policyRuntimeKinds.override(serverRuntimeKind('openpi-websocket', connector));
});
afterAll(() => unregister());

const options = (box: ReturnType<typeof sandbox>) => ({
  campaignsDir: box.campaigns,
  root: box.root,
  batchSize: 4,
  progress: null,
  say: () => undefined,
  through: 'seal' as const,
  operator: explicitOperator('server-runner'),
});

describe('a campaign against a policy server with IMEP-owned history', () => {
  it('runs through closeout: N lowers success, C = A row for row, S keeps A, T lowers it, coverage 1', async () => {
    const box = sandbox('imep-server-history-');
    const file = writeProtocol(box, 'history.yaml', historyYaml({ n: 12 }));
    const unit = await runCampaign(file, options(box));
    // one session per batch slot, each with the registered deadline; all closed at the end
    expect(connector.deadlines.slice(0, 4)).toEqual([5000, 5000, 5000, 5000]);
    expect(connector.sessions.every((s) => s.closed)).toBe(true);
    const rows = rowsOf(unit);
    const of = (c: string): Row[] => rows.filter((r) => r.condition === c).sort((a, b) => a.seed - b.seed);
    const successes = (c: string): number => of(c).filter((r) => r.success).length;
    // every episode ran; a donor swap's unit whose fact no other unit holds is removed (fail closed), never padded
    const notOk = rows.filter((r) => r.status !== 'ok');
    expect(notOk.every((r) => ['S', 'T'].includes(r.condition) && r.status === 'removed')).toBe(true);
    expect(notOk.map((r) => (r['failure'] as { code: string }).code)).toEqual(notOk.map(() => 'E_DONOR_SHORT'));
    expect(successes('A')).toBe(12); // the history shows the ball: always the right cup
    // blocked history: the middle cup, right only when the ball is there (4 of these 12 seeds)
    expect(of('N_blk').every((r) => r['firstVisit'] === 1)).toBe(true);
    expect(successes('N_blk')).toBe(of('A').filter((r) => r['firstVisit'] === 1).length);
    expect(successes('N_blk')).toBe(4);
    const keep = (r: Row): Record<string, unknown> => {
      const { seq: _s, condition: _c, ...rest } = r;
      return Object.fromEntries(Object.entries(rest).filter(([k]) => !/condition|spec|hook|digest/i.test(k)));
    };
    expect(of('C').map(keep)).toEqual(of('A').map(keep));
    expect(of('C').map((r) => r.success)).toEqual(of('A').map((r) => r.success));
    const ran = (c: string): Row[] => of(c).filter((r) => r.status === 'ok');
    expect(ran('S').every((r) => r.success)).toBe(true); // a same-fact donor's history points at the same cup
    expect(ran('S')).toHaveLength(11);
    expect(ran('T').filter((r) => r.success)).toEqual([]); // a different-fact donor's history: always a wrong cup
    expect(ran('T')).toHaveLength(12);
    // N's reads: every one returned nothing (the window's records offered, none given)
    expect(
      of('N_blk').every(
        (r) => (r['reads'] as { empty: number; total: number }).empty === (r['reads'] as { total: number }).total,
      ),
    ).toBe(true);
    // through closeout
    const reviewer = explicitOperator('server-reviewer');
    const { adjudication } = await adjudicateStep(unit, { operator: reviewer });
    const gate = (id: string) => adjudication.gates.find((g) => g.gate === id);
    expect(gate('G_surv')?.passed).toBe(true);
    expect(gate('G_surv')?.observed).toEqual({
      conditions: [
        { condition: 'S', units: 11, covered: 11, coverage: 1 },
        { condition: 'T', units: 12, covered: 12, coverage: 1 },
      ],
    });
    expect(gate('replicate')?.observed).toEqual({ pairs: 12, changed: 0, digestPairs: 12, digestMismatches: 0 });
    expect(gate('blocked-reads')?.passed).toBe(true);
    expect((await crossCheckStep(unit, { operator: reviewer })).outcome).toBe('agrees');
    await closeoutStep(unit, { operator: reviewer });
    expect((await readUnitState(unit)).state).toBe('closed');
  });

  it('a server connection that breaks mid-run fails that episode only (recorded); the slot connects again for the next', async () => {
    const box = sandbox('imep-server-broken-');
    // the 10th call the server ever answers breaks its connection (openpi closes it after a policy exception)
    let calls = 0;
    const flaky = fakeConnector((obs) => {
      calls += 1;
      if (calls === 10)
        throw new ImepError('E_BRIDGE_REMOTE', `${ENDPOINT}: the server closed the connection (code 1011)`);
      return historyPolicy(obs);
    });
    const off = policyRuntimeKinds.override(serverRuntimeKind('openpi-websocket', flaky));
    try {
      const text = historyYaml({ n: 4, id: 'server-broken' }).replace(
        'executionFailures: { policy: record }',
        'executionFailures: { policy: record, budget: { firstFailed: 5, maxFraction: 0.5 } }',
      );
      const file = writeProtocol(box, 'broken.yaml', text);
      const unit = await runCampaign(file, { ...options(box), batchSize: 1 });
      const rows = rowsOf(unit);
      const failed = rows.filter((r) => r.status === 'failed');
      expect(failed).toHaveLength(1);
      expect((failed[0]?.['failure'] as { code: string; message: string }).code).toBe('E_BRIDGE_REMOTE');
      expect((failed[0]?.['failure'] as { message: string }).message).toContain(ENDPOINT);
      // the first connection broke; the next episode opened a second one and every other episode ran
      expect(flaky.sessions.length).toBe(2);
      expect(rows.filter((r) => r.status === 'ok' && r.condition === 'A')).toHaveLength(
        4 - (failed[0]?.condition === 'A' ? 1 : 0),
      );
    } finally {
      off();
    }
  });

  it('refuses the run before anything is written when the server cannot be reached, naming the endpoint', async () => {
    const box = sandbox('imep-server-down-');
    const file = writeProtocol(box, 'down.yaml', historyYaml({ n: 2, id: 'server-down' }));
    const down = fakeConnector(
      () => ({}),
      () => new ImepError('E_BRIDGE_REMOTE', `nothing listens at ${ENDPOINT}`),
    );
    const off = policyRuntimeKinds.override(serverRuntimeKind('vla-eval', down));
    try {
      const text = historyYaml({ n: 2, id: 'server-down', runtime: 'vla-eval' });
      writeProtocol(box, 'down.yaml', text);
      const e = await runCampaign(file, options(box)).then(
        () => null,
        (x: unknown) => x,
      );
      expect(isImepError(e)).toBe(true);
      expect((e as ImepError).code).toBe('E_BRIDGE_REMOTE');
      expect((e as ImepError).oneLine()).toMatch(/policy\.endpoint: nothing listens at ws:\/\/127\.0\.0\.1:18000/);
      const written = (() => {
        try {
          return readdirSync(box.campaigns);
        } catch {
          return [];
        }
      })();
      expect(written.filter((n) => !n.startsWith('.'))).toEqual([]);
    } finally {
      off();
    }
  });
});
