/**
 * The sim-bridge simulator kind (src/sims/sim-bridge/kind.ts): its adapter names are the Python sim-bridge's own
 * (no mapping between the two), its preflight refuses what no server could serve, and it tells the bridge layer
 * which servers to start or reach.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { SIM_BRIDGE_ADAPTER_NAMES, simBridgeSimulatorKind as kind } from '../../src/sims/index.js';
import { simulatorFaces } from '../../src/core/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'imep-sim-bridge-kind-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const ctx = { file: 'p.yaml', roots: [tmp] };

function refusal(fn: () => unknown): { field: string | undefined; message: string } {
  try {
    fn();
  } catch (e) {
    const err = e as { field?: string; message: string };
    return { field: err.field, message: err.message };
  }
  throw new Error('expected a refusal');
}

describe('the sim-bridge simulator kind', () => {
  it("its adapter names are the Python sim-bridge's ADAPTER_NAMES (the protocol's names are the server's)", () => {
    // the same command the sim-bridge's own tests use; sim-bridge's `simpler` adapter is renamed `simplerenv`
    // (branch simbridge-hygiene): this test holds once both sides use the protocol's name
    const known = execFileSync(
      '/usr/bin/python3',
      [
        '-c',
        "import sys; sys.path.insert(0,'sim-bridge'); from imep_sim_bridge.adapters import ADAPTER_NAMES; print(','.join(ADAPTER_NAMES))",
      ],
      { cwd: ROOT },
    )
      .toString()
      .trim()
      .split(',');
    expect([...SIM_BRIDGE_ADAPTER_NAMES].sort()).toEqual([...known].sort());
  });

  it('is registered under its name with the adapter list as its schema', () => {
    expect(simulatorFaces.require('sim-bridge')).toBe(kind);
    expect((kind.fields['adapter'] as z.ZodEnum).options).toEqual([...SIM_BRIDGE_ADAPTER_NAMES]);
  });

  it('preflight refuses replayDir with an endpoint, the replay adapter without files, a missing replay folder', () => {
    expect(
      refusal(() =>
        kind.preflight({ kind: 'sim-bridge', adapter: 'replay', endpoint: 'tcp://h:1', replayDir: 'r' }, ctx),
      ),
    ).toEqual({
      field: 'simulator.replayDir',
      message: 'replayDir is given with an endpoint: a server someone else started has its own replay directory',
    });
    expect(refusal(() => kind.preflight({ kind: 'sim-bridge', adapter: 'replay' }, ctx))).toEqual({
      field: 'simulator.replayDir',
      message: 'the replay adapter needs its replay files',
    });
    expect(refusal(() => kind.preflight({ kind: 'sim-bridge', adapter: 'replay', replayDir: 'nope' }, ctx))).toEqual({
      field: 'simulator.replayDir',
      message: `replay directory nope does not exist (looked in ${tmp})`,
    });
    expect(() => kind.preflight({ kind: 'sim-bridge', adapter: 'replay', replayDir: '.' }, ctx)).not.toThrow();
    expect(() => kind.preflight({ kind: 'sim-bridge', adapter: 'mikasa', endpoint: 'tcp://h:1' }, ctx)).not.toThrow();
  });

  it('names the servers: the one someone started, or Python servers IMEP starts with its limits, devices and folder', () => {
    expect(kind.servers({ kind: 'sim-bridge', adapter: 'mikasa', endpoint: 'tcp://h:1' })).toEqual({
      attach: 'tcp://h:1',
      adapter: 'mikasa',
    });
    const block = {
      kind: 'sim-bridge',
      adapter: 'replay',
      replayDir: '.',
      limits: { memoryMiB: 1024 },
      devices: ['nvidia'],
      vectorize: true,
    };
    expect(kind.servers(block)).toEqual({
      start: 'python',
      adapter: 'replay',
      limits: { memoryMiB: 1024 },
      devices: ['nvidia'],
    });
    expect(kind.servers(block, ctx)).toEqual({
      start: 'python',
      adapter: 'replay',
      replayDir: tmp,
      limits: { memoryMiB: 1024 },
      devices: ['nvidia'],
    });
    expect(kind.inputFolders?.(block, ctx)).toEqual({ 'simulator.replayDir': tmp });
    expect(kind.vectorize?.(block)).toBe(true);
    expect(kind.vectorize?.({ kind: 'sim-bridge', adapter: 'libero' })).toBe(false);
    expect(kind.inProcess).toBeUndefined();
  });
});
