import { describe, expect, it } from 'vitest';
import { formatBridgeFaults, runBridgeFaults, type BridgeFaultOptions } from './support/bridge-faults.js';

const BASE = { n: 4, servers: 2, batch: 8, stepMs: 1500, seed: 'imep-reliability/bridge-faults/v1' };
const MARGIN_MS = 1500; // shared CI machines; a hang would be far longer

function expectDetected(r: Awaited<ReturnType<typeof runBridgeFaults>>, o: BridgeFaultOptions, text: string): void {
  const [kill, stop] = r.faults;
  expect(kill?.detectedMs, text).not.toBeNull();
  expect(kill?.code, text).toBe('E_BRIDGE_REMOTE'); // the supervisor sees the exit: no deadline to wait for
  expect(kill?.detectedMs as number, text).toBeLessThan(o.stepMs);
  expect(stop?.detectedMs, text).not.toBeNull();
  expect(stop?.code, text).toBe('E_BRIDGE_TIMEOUT'); // a stopped process: the step deadline
  expect(stop?.detectedMs as number, text).toBeGreaterThanOrEqual(o.stepMs - 10);
  expect(stop?.detectedMs as number, text).toBeLessThan(o.stepMs + MARGIN_MS);
  expect(r.restarts, text).toBe(2);
  expect(r.rows).toBe(r.planned);
  expect(r.okRowsDiffering, text).toEqual([]);
  expect(r.verified, text).toBe(true);
}

describe('simulator server killed / stopped during a bridged campaign', () => {
  it('under { policy: record }: faults detected within the deadline, episodes recorded failed, servers restarted, campaign completes', async () => {
    const o = { ...BASE, failures: '{ policy: record }' };
    const r = await runBridgeFaults(o);
    const text = formatBridgeFaults(r, o).join('\n');
    expectDetected(r, o, text);
    expect(r.failedRows, text).toBeGreaterThanOrEqual(2);
    expect(Object.keys(r.failedByCode).sort(), text).toEqual(['E_BRIDGE_REMOTE', 'E_BRIDGE_TIMEOUT']);
    expect(r.retriedRows).toBe(0);
    expect(r.okRows + r.failedRows).toBe(r.planned);
    expect(r.okRowsIdentical).toBe(r.okRows);
  }, 180_000);

  it('under { policy: retry, maxRetries: 2 }: the failed units are retried and every row runs', async () => {
    const o = { ...BASE, failures: '{ policy: retry, maxRetries: 2 }' };
    const r = await runBridgeFaults(o);
    const text = formatBridgeFaults(r, o).join('\n');
    expectDetected(r, o, text);
    expect(r.failedRows, text).toBe(0);
    expect(r.retriedRows, text).toBeGreaterThanOrEqual(2);
    expect(r.okRowsIdentical + r.retriedRows).toBe(r.planned);
  }, 180_000);
});
