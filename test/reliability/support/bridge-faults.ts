/**
 * Simulator server faults during a campaign on bridged simulators: the blackout ladder with the lite
 * checkpoint, its environments on K supervised `imep sim serve lite` processes (bridge-pool.ts). At two
 * seeded steps a server is SIGKILLed (mid-episode) and a server is SIGSTOPped (stops answering). Checks:
 * each fault is detected within the step deadline, the episodes it hits are recorded under the protocol's
 * registered execution-failure policy, the server is restarted, the campaign completes and seals, and
 * every row that ran ('ok') is byte-identical to the same row of an in-process run without faults.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCampaign } from '../../../src/campaign/campaign.js';
import { verifyUnit } from '../../../src/evidence/verify/verify.js';
import { Prng } from '../../../src/core/prng.js';
import { BridgePool, type Fault, type FaultRecord } from './bridge-pool.js';
import { RELIABILITY_KEYS_DIR, smallBlackoutYaml } from './cli.js';

export interface BridgeFaultOptions {
  readonly n: number;
  readonly servers: number;
  readonly batch: number;
  readonly stepMs: number;
  readonly seed: string;
  /** The protocol's executionFailures line, e.g. '{ policy: record }' or '{ policy: retry, maxRetries: 2 }'. */
  readonly failures: string;
}

export interface BridgeFaultReport {
  readonly planned: number;
  readonly rows: number;
  readonly okRows: number;
  readonly failedRows: number;
  readonly failedByCode: Record<string, number>;
  readonly retriedRows: number;
  readonly okRowsIdentical: number;
  readonly okRowsDiffering: readonly number[];
  readonly faults: readonly FaultRecord[];
  readonly restarts: number;
  readonly callFailures: Record<string, number>;
  readonly totalSteps: number;
  readonly verified: boolean;
  readonly wallSeconds: number;
}

type Row = { seq: number; status: string; tries: number; failure: { code: string } | null };

const quiet = { progress: null, say: () => undefined, operator: { id: 'reliability', source: 'explicit' as const } };

export async function runBridgeFaults(o: BridgeFaultOptions): Promise<BridgeFaultReport> {
  const t0 = performance.now();
  process.env['IMEP_KEYS_DIR'] ??= RELIABILITY_KEYS_DIR;
  const dir = mkdtempSync(join(tmpdir(), 'imep-rel-bridge-'));
  const file = join(dir, 'p.yaml');
  writeFileSync(file, smallBlackoutYaml(o.n, { failures: o.failures }));
  let pool: BridgePool | null = null;
  try {
    const refUnit = await runCampaign(file, { ...quiet, campaignsDir: join(dir, 'ref'), batchSize: o.batch });
    const refLines = readFileSync(join(refUnit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');
    const totalSteps = refLines.reduce((n, l) => n + (JSON.parse(l) as { steps: number }).steps, 0);
    const prng = new Prng(o.seed);
    const faults: Fault[] = [
      {
        atStep: Math.floor(totalSteps * (0.1 + 0.3 * prng.nextFloat())),
        server: prng.nextInt(o.servers),
        signal: 'SIGKILL',
      },
      {
        atStep: Math.floor(totalSteps * (0.55 + 0.3 * prng.nextFloat())),
        server: prng.nextInt(o.servers),
        signal: 'SIGSTOP',
      },
    ];
    pool = await BridgePool.start(
      o.servers,
      { stepMs: o.stepMs, resetMs: 4 * o.stepMs, makeMs: 30_000, closeMs: o.stepMs },
      faults,
    );
    const unit = await runCampaign(file, {
      ...quiet,
      campaignsDir: join(dir, 'bridged'),
      batchSize: o.batch,
      envs: pool.envs(),
    });
    const lines = readFileSync(join(unit, 'rows/rows.jsonl'), 'utf8').trimEnd().split('\n');
    const rows = lines.map((l) => JSON.parse(l) as Row);
    const failedByCode: Record<string, number> = {};
    for (const r of rows)
      if (r.status !== 'ok') failedByCode[r.failure?.code ?? '?'] = (failedByCode[r.failure?.code ?? '?'] ?? 0) + 1;
    const differing: number[] = [];
    let identical = 0;
    rows.forEach((r, i) => {
      if (r.status !== 'ok' || r.tries > 1) return;
      if (lines[i] === refLines[i]) identical += 1;
      else differing.push(r.seq);
    });
    const verified = (await verifyUnit(unit)).ok;
    return {
      planned: refLines.length,
      rows: rows.length,
      okRows: rows.filter((r) => r.status === 'ok').length,
      failedRows: rows.filter((r) => r.status !== 'ok').length,
      failedByCode,
      retriedRows: rows.filter((r) => r.tries > 1).length,
      okRowsIdentical: identical,
      okRowsDiffering: differing,
      faults: pool.faults,
      restarts: pool.restarts,
      callFailures: Object.fromEntries(pool.failuresByCode),
      totalSteps,
      verified,
      wallSeconds: (performance.now() - t0) / 1000,
    };
  } finally {
    await pool?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatBridgeFaults(r: BridgeFaultReport, o: BridgeFaultOptions): string[] {
  const faults = r.faults
    .map(
      (f) =>
        `${f.signal} server ${f.server} at step ${f.atStep}: detected ${f.detectedMs === null ? 'NEVER' : `${Math.round(f.detectedMs)} ms`} (${f.code ?? '-'})`,
    )
    .join('; ');
  return [
    `bridged campaign: blackout ladder n=${o.n} (${r.planned} rows, ${r.totalSteps} steps), ${o.servers} lite servers (imep sim serve lite), batch ${o.batch}, step deadline ${o.stepMs} ms, executionFailures ${o.failures}`,
    `faults (seed "${o.seed}"): ${faults}`,
    `restarts ${r.restarts}; failed calls by code ${JSON.stringify(r.callFailures)}`,
    `rows ${r.rows}/${r.planned}: ok ${r.okRows}, failed ${r.failedRows} ${JSON.stringify(r.failedByCode)}, retried ${r.retriedRows}; ok rows (tries 1) byte-identical to the fault-free in-process run: ${r.okRowsIdentical}${r.okRowsDiffering.length ? `, DIFFERING seqs ${r.okRowsDiffering.join(',')}` : ' (all)'}; sealed unit verifies: ${r.verified ? 'yes' : 'NO'}`,
    `wall ${r.wallSeconds.toFixed(1)} s`,
  ];
}
