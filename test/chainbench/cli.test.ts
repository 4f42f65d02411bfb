import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imep } from './helpers.js';
import { readDecisionUnit } from '../../src/chainbench/decision-unit.js';
import { BridgeServer } from '../../src/bridges/server.js';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { LITE_ENV_IDS, makeLiteEnv } from '../../src/sims/lite/registry.js';

const dir = mkdtempSync(join(tmpdir(), 'imep-chainbench-'));
let ipc: PrivateIpcEndpoint;
let server: BridgeServer;
beforeAll(async () => {
  ipc = await privateIpcEndpoint();
  server = await BridgeServer.bind({
    endpoint: ipc.endpoint,
    factory: makeLiteEnv,
    envIds: LITE_ENV_IDS,
    name: 'imep-lite',
    adapters: ['lite'],
  });
});
afterAll(async () => {
  await server.close();
  await ipc.dispose();
  execFileSync('chmod', ['-R', 'u+w', dir]);
  rmSync(dir, { recursive: true, force: true });
});

describe('imep chainbench CLI', () => {
  const manifest = join(dir, 'manifest.json');
  const decisions = join(dir, 'decisions');

  it('generate → validate → decide (sealed unit) → replay (lite, bridge; sealed units) → show → audit → diff', async () => {
    const g = await imep('generate', '--chains', '40', '--K', '3', '--seed', '8', '--out', manifest);
    expect(g.code).toBe(0);
    expect(g.stdout).toMatch(/wrote .*manifest\.json: 40 chains \(K 3\), 20 rewritten; sha256 [0-9a-f]{64}/);
    const v = await imep('validate', manifest);
    expect(v.stdout).toMatch(
      /^ok: .*40 chains \(K=3: 40\), 20 rewritten, query frames identical across hidden facts; sha256/,
    );
    const d = await imep('decide', manifest, '--out', decisions, '--seed', '2', '--replicates', '500');
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('full-memory');
    expect(d.stdout).toContain('C reproduces 40/40 archived decisions');
    expect(d.stdout).toMatch(/no-memory accuracy CI .* (contains|EXCLUDES) the chance floor 33\.3%/);
    expect(d.stdout).toMatch(/decisions unit .*decisions: 40 chain rows, sealed, Merkle root [0-9a-f]{64}/);
    const unit = await readDecisionUnit(decisions);
    expect(unit.table.conditions.map((c) => c.name)).toEqual([
      'full-memory',
      'no-memory',
      'initial-fact',
      'shuffled-records',
      'stale-records',
      'oracle',
    ]);
    const r = await imep('replay', manifest, '--decisions', decisions, '--replicates', '500');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/execution ceiling SR\* = SR\(oracle\)/);
    expect(r.stdout).toMatch(/executor calls (\d+), extra 0/);
    const m =
      /from the sealed rows: (\d+) executions = (\d+) distinct \(chain, decision\) pairs \+ 40 replay-floor/.exec(
        r.stdout,
      );
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(Number(m![2]) + 40);
    expect(r.stdout).toMatch(/replay unit .*decisions-replay: 40 chain rows via lite executor/);
    const rj = JSON.parse(
      (
        await imep(
          'replay',
          manifest,
          '--decisions',
          decisions,
          '--replicates',
          '200',
          '--json',
          '--executor',
          'bridge',
          '--endpoint',
          ipc.endpoint,
        )
      ).stdout,
    ) as {
      unit: string;
      executor: { kind: string; server: { name: string } };
      proof: { executions: number };
      summary: { verification: { extraExecutions: number }; rows: { condition: string; taskSuccess: number }[] };
    };
    expect(rj.unit).toMatch(/decisions-replay-2$/);
    expect(rj.executor).toMatchObject({ kind: 'bridge', server: { name: 'imep-lite' } });
    expect(rj.proof.executions).toBe(Number(m![1]));
    expect(rj.summary.verification.extraExecutions).toBe(0);
    const shown = JSON.parse((await imep('show', join(dir, 'decisions-replay'), '--json')).stdout) as typeof rj;
    expect(shown.summary.rows).toEqual(rj.summary.rows); // lite in process and lite over the bridge: same task success
    const sd = await imep('show', decisions);
    expect(sd.stdout).toContain('C reproduces 40/40 archived decisions');
    const a = await imep('audit', manifest, '--renamings', '3');
    expect(a.stdout).toContain('label-equivariance audit: 3 renamings');
    expect(a.stdout).not.toContain('NAME-DEPENDENT');
    const other = join(dir, 'other.json');
    await imep('generate', '--chains', '45', '--K', '3', '--seed', '8', '--out', other);
    const df = await imep('diff', manifest, other);
    expect(df.stdout).toMatch(/removed 0, added 5, changed \d+, unchanged \d+/);
    expect(df.stdout).toMatch(/added: chain-00041 chain-00042 chain-00043 chain-00044 chain-00045/);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('refusals exit 2 with one line naming file, chain and field', async () => {
    const bad = JSON.parse(readFileSync(manifest, 'utf8')) as { chains: { K: number; id: string }[] };
    bad.chains[1]!.id = bad.chains[0]!.id;
    const badFile = join(dir, 'bad.json');
    writeFileSync(badFile, JSON.stringify(bad));
    const v = await imep('validate', badFile);
    expect(v.code).toBe(2);
    expect(v.message).toBe(
      `imep: ${badFile}: chains[1].id: chain ${bad.chains[0]!.id}: duplicate chain id (also chains[0])`,
    );
    const other = join(dir, 'other.json');
    const r = await imep('replay', other, '--decisions', decisions);
    expect(r.code).toBe(2);
    expect(r.message).toMatch(/manifestHash: the decisions unit froze manifest [0-9a-f]{12}…, not this one/);
    const plain = join(dir, 'plain-decisions.json');
    writeFileSync(plain, '{}');
    const p = await imep('replay', manifest, '--decisions', plain);
    expect(p.code).toBe(2);
    expect(p.message).toMatch(
      /^imep: .*plain-decisions\.json: --decisions: is a file, not a sealed evidence unit folder — `imep chainbench decide MANIFEST --out DIR` writes decisions as a sealed unit/,
    );
    const nb = await imep('replay', manifest, '--decisions', decisions, '--executor', 'bridge');
    expect(nb.code).toBe(2);
    expect(nb.message).toMatch(/--endpoint: --executor bridge needs --endpoint/);
    const again = await imep('decide', manifest, '--out', decisions);
    expect(again.code).toBe(2);
    expect(again.message).toMatch(/--out: exists and is not empty/);
    const u = await imep('generate', '--chains', '5', '--K', '7', '--seed', '1', '--out', join(dir, 'x.json'));
    expect(u.code).toBe(2);
    expect(u.message).toMatch(/K = 7/);
    const m = await imep('validate', join(dir, 'missing.json'));
    expect(m.code).toBe(4);
  });
});
