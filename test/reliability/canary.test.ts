import { describe, expect, it } from 'vitest';
import type { NdArray, StepResult } from '../../src/runtime/environment.js';
import { canaryCampaign, canaryOf, formatCanary, scan } from './support/canary.js';

describe('canary scan: no evaluator-only value reaches the policy', () => {
  it('the scanner finds a canary in each encoding, and not in bytes that do not hold it', () => {
    const c = canaryOf('ballCup', 0x2d41f00d);
    const f32 = Buffer.alloc(4);
    f32.writeFloatLE(0x2d41f00d);
    const inText = Buffer.from(`xx${0x2d41f00d}yy`);
    const inInt = Buffer.concat([
      Buffer.from([1, 2, 3]),
      Buffer.from(Int32Array.of(0x2d41f00d).buffer),
      Buffer.from([9]),
    ]);
    expect(scan([inText], [c]).hits.map((h) => h.encoding)).toEqual(['decimal-utf8']);
    expect(scan([inInt], [c]).hits.map((h) => h.encoding)).toContain('int32le');
    expect(scan([f32], [c]).hits.map((h) => h.encoding)).toEqual(['float32le']);
    expect(scan([Buffer.from('nothing to see here'), Buffer.alloc(4096)], [c]).hits).toEqual([]);
    const r = canaryOf('reward', 0.6180339887498949);
    expect(scan([Buffer.from(Float64Array.of(0.6180339887498949).buffer)], [r]).hits.map((h) => h.encoding)).toEqual([
      'float64le',
    ]);
    expect(scan([Buffer.from('r=0.618034')], [r]).hits.map((h) => h.encoding)).toEqual(['fixed6-utf8']);
  });

  it('across a whole campaign (observations, instruction, episode infos, memory tensors): 0 canaries found', async () => {
    const c = await canaryCampaign(3);
    const text = formatCanary(c).join('\n');
    expect(c.rows, text).toBe(c.planned);
    expect(c.failedRows, text).toBe(0);
    expect(c.result.hits, text).toEqual([]);
    // the recording saw every channel: frames, tool position, instruction, episode infos and memory reads
    expect(c.counts.observationFields).toBeGreaterThan(c.planned * 10 * 3);
    expect(c.counts.episodeInfos).toBeGreaterThanOrEqual(c.planned);
    expect(c.counts.memoryTensors).toBeGreaterThan(c.planned);
    expect(c.result.bytesReceived).toBeGreaterThan(1e6);
    expect(c.result.patterns).toBeGreaterThan(c.result.canaries * 10);
  }, 120_000);

  it('positive controls: a canary smuggled into the frame, the tool position or the instruction is found', async () => {
    const leaks: Record<string, (r: StepResult, v: ReadonlyMap<string, number | string>) => StepResult> = {
      'rgb bytes (ballCup int32le)': (r, v) => {
        const rgb = r.obs['rgb'] as NdArray;
        const data = Uint8Array.from(rgb.data as Uint8Array);
        data.set(new Uint8Array(Int32Array.of(v.get('ballCup') as number).buffer), 120);
        return { ...r, obs: { ...r.obs, rgb: { ...rgb, data } } };
      },
      'toolPosition (attempt ordinal as float32)': (r, v) => {
        const tp = r.obs['toolPosition'] as NdArray | Float32Array;
        const data = Float32Array.from(tp instanceof Float32Array ? tp : (tp.data as Float32Array));
        data[0] = v.get('attempt2') as number;
        return { ...r, obs: { ...r.obs, toolPosition: tp instanceof Float32Array ? data : { ...tp, data } } };
      },
      'instruction (reward as text)': (r) => ({
        ...r,
        obs: { ...r.obs, instruction: `${String(r.obs['instruction'])} ${String(r.evaluator['reward'])}` },
      }),
    };
    const found: Record<string, string[]> = {};
    for (const [name, leak] of Object.entries(leaks)) {
      const c = await canaryCampaign(1, leak);
      expect(c.failedRows, name).toBe(0);
      found[name] = [...new Set(c.result.hits.map((h) => `${h.field}:${h.encoding}`))].sort();
    }
    expect(found['rgb bytes (ballCup int32le)']).toContain('ballCup:int32le');
    expect(found['toolPosition (attempt ordinal as float32)']).toContain('attempt2:float32le');
    expect(found['instruction (reward as text)']).toContain('reward:decimal-utf8');
  }, 120_000);
});
