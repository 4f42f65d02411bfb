/**
 * Issue 18 §4: plans of any size are refused or handled, never a V8 crash. The row count is computed
 * arithmetically before a plan is built (it equals buildPlan's), a plan above PLAN_ROWS_MAX is refused with
 * its estimate, one above PLAN_ROWS_CONFIRM needs --allow-large-plan, and a new campaign's seed overlap is
 * refused before its plan is built.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { precommitCampaign } from '../../src/campaign/campaign.js';
import { registerSeeds } from '../../src/evidence/seed-registry.js';
import { isImepError } from '../../src/core/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { buildPlan } from '../../src/protocol/plan.js';
import { parseProtocol, loadProtocolSync } from '../../src/protocol/load.js';
import {
  assertPlanSize,
  planEstimate,
  planRows,
  PLAN_ROWS_CONFIRM,
  PLAN_ROWS_MAX,
} from '../../src/protocol/plan-size.js';
import type { Protocol } from '../../src/protocol/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-plan-size-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BLACKOUT = readFileSync('protocols/shellgame-blackout.yaml', 'utf8');
/** The blackout ladder (14 episodes per unit) with n units on seeds 1…n. */
function blackoutText(n: number, id = 'shellgame-blackout'): string {
  return BLACKOUT.replace(/^n: .*$/m, `n: ${n}`)
    .replace('{ start: 610000, end: 610399 }', `{ start: 1, end: ${n} }`)
    .replace(/^id: .*$/m, `id: ${id}`);
}
const blackout = (n: number): Protocol => parseProtocol(blackoutText(n), 'blackout.yaml').protocol;

function refusal(f: () => unknown): { code: string; exit: number; field?: string; message: string } {
  try {
    f();
  } catch (e) {
    if (isImepError(e))
      return {
        code: e.code,
        exit: exitCodeFor(e),
        ...(e.field !== undefined ? { field: e.field } : {}),
        message: e.message,
      };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('plan size before the plan', () => {
  it('planRows equals the built plan for every shipped protocol and a condition with its own n', () => {
    for (const f of [
      'shellgame-blackout',
      'remembercolor-substitution',
      'shellgame-hosted-policy',
      'shellgame-view-removal',
    ]) {
      const { protocol } = loadProtocolSync(`protocols/${f}.yaml`);
      expect(planRows(protocol), f).toBe(buildPlan(protocol).episodes.length);
    }
    const small = parseProtocol(
      blackoutText(30).replace('- { id: C, kind: C', '- { id: C, kind: C, n: 7'),
      'x.yaml',
    ).protocol;
    expect(small.conditions.find((c) => c.id === 'C')?.n).toBe(7);
    expect(planRows(small)).toBe(buildPlan(small).episodes.length);
  });

  it('n: 3000000 is refused with its estimate (exit 2, field n), by assertPlanSize and by buildPlan itself', () => {
    const p = blackout(3_000_000);
    const e = refusal(() => assertPlanSize(p, { allowLarge: true }));
    expect(e).toMatchObject({ code: 'E_PROTOCOL_INVALID', exit: 2, field: 'n' });
    expect(e.message).toContain('42,000,000 planned rows');
    expect(e.message).toMatch(/plan\.json ≈ 6\.5 GB/);
    expect(refusal(() => buildPlan(p)).message).toContain(`the limit is ${PLAN_ROWS_MAX.toLocaleString('en-US')} rows`);
  });

  it('n: 4294967295 (the largest seed band) is refused arithmetically', () => {
    const e = refusal(() => buildPlan(blackout(4_294_967_295)));
    expect(e.message).toContain('60,129,542,130 planned rows');
  });

  it('between the limits a plan needs confirming: refused without --allow-large-plan, estimated with it', () => {
    const n = Math.ceil((PLAN_ROWS_CONFIRM + 1) / 14);
    const p = blackout(n);
    const e = refusal(() => assertPlanSize(p));
    expect(e.message).toContain('needs confirming');
    expect(e.message).toContain(`${(14 * n).toLocaleString('en-US')} planned rows`);
    expect(assertPlanSize(p, { allowLarge: true })).toEqual(planEstimate(p));
  });

  it('a new campaign whose seeds overlap a registered one is refused before its (large) plan is built', async () => {
    const campaigns = join(dir, 'campaigns');
    const n = Math.floor(PLAN_ROWS_MAX / 14); // ≈ 30 s to build: the 5 s test timeout shows it was not
    const file = join(dir, 'overlap.yaml');
    writeFileSync(file, blackoutText(n, 'overlapping'));
    const env = parseProtocol(blackoutText(n, 'overlapping'), file).protocol.envs[0]!;
    await registerSeeds(join(campaigns, 'seed-registry.json'), {
      campaignId: 'earlier',
      bands: [{ task: env.task ?? env.id, start: 5, end: 9 }],
    });
    const err = await precommitCampaign(file, {
      campaignsDir: campaigns,
      allowLargePlan: true,
      say: () => undefined,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isImepError(err) && err.code).toBe('E_SEED_OVERLAP');
  });
});
