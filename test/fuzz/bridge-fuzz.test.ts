/**
 * Properties: `decodeMessage` never throws on random bytes or mutated envelopes and answers an error
 * result with a wire code; a running TypeScript BridgeServer answers every malformed message with a
 * decodable error (or nothing, for a stray reply) and keeps serving. Seeded and bounded.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateIpcEndpoint, type PrivateIpcEndpoint } from '../../src/bridges/endpoint.js';
import { decodeMessage, encodeMessage } from '../../src/bridges/envelope.js';
import { LITE_ENV_IDS, makeLiteEnv } from '../../src/sims/lite/index.js';
import { BridgeServer } from '../../src/bridges/server.js';
import {
  BRIDGE_HAZARDS,
  bridgeCaseArb,
  runDecodeCase,
  ServerProbe,
  validMessages,
  type BridgeCase,
} from './bridge-cases.js';
import { emptyTally, formatTally, record } from './outcome.js';

const SEED = Number(process.env['IMEP_FUZZ_SEED'] ?? 20260104);
const RUNS = Number(process.env['IMEP_FUZZ_RUNS'] ?? 2000);
const SERVER_RUNS = Number(process.env['IMEP_FUZZ_SERVER_RUNS'] ?? 200);

describe('bridge messages under fuzzing: decodeMessage', () => {
  it('decodes the valid fixtures', () => {
    for (const v of validMessages()) expect(decodeMessage(v.bytes).ok).toBe(true);
  });

  it(`never throws; ${RUNS} random and mutated messages and every hazard give a result with a wire code`, () => {
    const tally = emptyTally();
    const check = (c: BridgeCase): void => {
      const t0 = performance.now();
      const o = runDecodeCase(c);
      record(tally, o, performance.now() - t0, c.label);
      if (o.kind === 'crash') throw new Error(`${c.label}: ${o.reason}`);
    };
    for (const h of BRIDGE_HAZARDS) check({ label: h.name, frames: h.frames() });
    fc.assert(fc.property(bridgeCaseArb, check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
    console.log(formatTally(`decodeMessage (seed ${SEED})`, tally));
    expect(tally.refused).toBeGreaterThan(tally.cases / 2);
  });
});

describe('bridge messages under fuzzing: a running server', () => {
  let ipc: PrivateIpcEndpoint;
  let server: BridgeServer;
  beforeAll(async () => {
    ipc = await privateIpcEndpoint();
    server = await BridgeServer.bind({ endpoint: ipc.endpoint, factory: makeLiteEnv, envIds: LITE_ENV_IDS });
  });
  afterAll(async () => {
    await server?.close();
    await ipc?.dispose();
  });

  it(`answers ${SERVER_RUNS} malformed messages with error replies and keeps serving`, async () => {
    const probe = new ServerProbe(server.endpoint, 5000);
    const tally = emptyTally();
    const failures: string[] = [];
    try {
      const cases = [
        ...BRIDGE_HAZARDS.map((h) => ({ label: h.name, frames: h.frames() })),
        ...fc.sample(bridgeCaseArb, { seed: SEED, numRuns: SERVER_RUNS }),
      ];
      for (const c of cases) {
        const t0 = performance.now();
        const o = await probe.probe(c);
        record(tally, o, performance.now() - t0, c.label);
        if (o.kind === 'crash' || o.kind === 'hang')
          failures.push(`${c.label}: ${o.kind === 'crash' ? o.reason : 'no answer'}`);
        if (failures.length > 5) break;
      }
    } finally {
      probe.close();
    }
    console.log(formatTally(`BridgeServer (seed ${SEED})`, tally));
    expect(failures).toEqual([]);
    expect(tally.refused).toBeGreaterThan(tally.cases / 2);
    // still serving: a fresh client says hello
    const hello = encodeMessage({
      kind: 'request',
      id: 1,
      op: 'hello',
      body: { client: { name: 'after-fuzz', version: '1' } },
    });
    const p2 = new ServerProbe(server.endpoint, 5000);
    try {
      expect(await p2.probe({ label: 'hello', frames: [(hello as { bytes: Buffer }).bytes] })).toEqual({
        kind: 'accepted',
      });
    } finally {
      p2.close();
    }
    expect(server.served).toBeGreaterThanOrEqual(tally.cases);
  });
});
