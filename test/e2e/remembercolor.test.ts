/**
 * protocols/remembercolor-substitution.yaml through the real CLI (`imep campaign run FILE --through closeout`),
 * reduced to N seeds per task, on the structured-bank RememberColor checkpoints: lite-memvla-rc (positive control:
 * its attempt-2 decision comes from the attempt-1 record its PCMB bank kept) and lite-blind-rc (negative control).
 * Every number asserted is read from the closed-out unit's adjudication and rows.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../campaign/helpers.js';
import { imep, unitIn } from '../campaign/cli-support.js';

const N = 30;

interface Summary {
  readonly condition: string;
  readonly rows: { readonly total: number; readonly ok: number; readonly removed: number };
  readonly success: { readonly successes: number; readonly n: number } | null;
  readonly vsAnchor: { readonly b: number; readonly c: number; readonly n: number } | null;
  readonly coverage: { readonly covered: number; readonly units: number } | null;
}
interface Estimand {
  readonly id: string;
  readonly status: string;
  readonly estimate?: number;
  readonly counts?: Record<string, number>;
}
interface Adjudication {
  readonly conditions: readonly Summary[];
  readonly estimands: readonly Estimand[];
  readonly gates: readonly { readonly gate: string; readonly passed: boolean }[];
  readonly questions: readonly {
    readonly question: string;
    readonly verdict: string;
    readonly registered: readonly { criterion: string; verdict: string }[];
  }[];
}

function protocolFor(name: string): string {
  const sha = createHash('sha256')
    .update(readFileSync(join(ROOT, 'checkpoints', name, 'model.json')))
    .digest('hex');
  let text = readFileSync(join(ROOT, 'protocols/remembercolor-substitution.yaml'), 'utf8');
  text = text.replace(/path: checkpoints\/\S+/, `path: checkpoints/${name}`);
  text = text.replace(/sha256: \S+/, `sha256: ${sha}`);
  text = text.replace(/- \{ start: 9001, end: 9200 \}/, `- { start: 9001, end: ${9000 + N} }`);
  text = text.replace(/^n: 200 .*$/m, `n: ${N}`);
  text = text.replace(/^id: remembercolor-substitution$/m, `id: rc-${name}`);
  return text;
}

async function closeout(
  name: string,
): Promise<{ adj: Adjudication; by: Map<string, Summary>; est: Map<string, Estimand> }> {
  const dir = mkdtempSync(join(tmpdir(), `imep-rc-${name}-`));
  writeFileSync(join(dir, 'rc.yaml'), protocolFor(name));
  const r = await imep(
    ['campaign', 'run', 'rc.yaml', '--through', 'closeout', '--same-operator-reason', 'single-operator quick start'],
    dir,
  );
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('closed out');
  const unit = unitIn(join(dir, 'campaigns')) as string;
  const adj = JSON.parse(readFileSync(join(unit, 'adjudication/001/adjudication.json'), 'utf8')) as Adjudication;
  return {
    adj,
    by: new Map(adj.conditions.map((c) => [c.condition, c])),
    est: new Map(adj.estimands.map((e) => [e.id, e])),
  };
}

describe('remembercolor-substitution through the CLI', () => {
  it('lite-memvla-rc: T changes the attempt-2 outcome of every unit, S, U and C of none', async () => {
    const { adj, by, est } = await closeout('lite-memvla-rc');
    const units = 2 * N;
    expect(by.get('A')?.success).toMatchObject({ successes: units, n: units });
    for (const c of ['C', 'U', 'S']) expect(by.get(c)?.vsAnchor, c).toMatchObject({ b: 0, c: 0, n: units });
    expect(by.get('T')?.vsAnchor).toMatchObject({ b: units, c: 0, n: units });
    expect(by.get('T')?.success).toMatchObject({ successes: 0 });
    for (const c of ['S', 'T']) {
      expect(by.get(c)?.rows.removed, c).toBe(0); // one record per scope: no donor is short
      expect(by.get(c)?.coverage, c).toMatchObject({ covered: units, units });
    }
    expect(est.get('rho_C')?.estimate).toBe(0);
    expect(est.get('rho_U')?.estimate).toBe(0);
    expect(est.get('rho_S')?.estimate).toBe(0);
    expect(est.get('rho_T')?.estimate).toBe(1);
    expect(est.get('thetaBar')?.estimate).toBe(1);
    expect(adj.gates.map((g) => [g.gate, g.passed])).toEqual([
      ['replicate', true],
      ['candidate', true],
      ['G_surv', true],
      // the validity check every protocol runs (docs/validity-checks.md; no kind-N condition, so no blocked-reads)
      ['informative-removal', true],
    ]);
    const q3 = adj.questions.find((q) => q.question === 'Q3');
    expect(q3?.verdict).toBe('holds');
    const q4 = adj.questions.find((q) => q.question === 'Q4');
    expect(q4?.registered).toEqual([{ criterion: 'Q4_equivalence', verdict: 'not detected' }]);
  }, 600_000);

  it('lite-blind-rc: no condition changes any outcome', async () => {
    const { by, est, adj } = await closeout('lite-blind-rc');
    const units = 2 * N;
    for (const c of ['C', 'U', 'S', 'T']) expect(by.get(c)?.vsAnchor, c).toMatchObject({ b: 0, c: 0, n: units });
    const a = by.get('A')?.success?.successes ?? -1;
    expect(a).toBeGreaterThan(0);
    expect(a).toBeLessThan(units / 2);
    expect(est.get('rho_T')?.estimate).toBe(0);
    expect(adj.questions.find((q) => q.question === 'Q3')?.verdict).not.toBe('holds');
  }, 600_000);
});
