/**
 * `frames` (schema-frames.ts, cross-check-frames.ts): off when absent; the recorded conditions exist, the steps
 * ascend, the field is on an allowlist (method-visible or an evaluator-only render), and the registered frame count stays under MAX_REGISTERED_FRAMES.
 */
import { describe, expect, it } from 'vitest';
import { parseProtocol } from '../../src/protocol/index.js';
import { MAX_REGISTERED_FRAMES } from '../../src/protocol/schema-frames.js';
import { BASE, BAD_FILE, refusal, replaceOnce } from './helpers.js';

const withFrames = (block: string, text = BASE): string => `${text}\nframes:\n${block}\n`;

describe('protocol frames', () => {
  it('absent: no frames; present: parsed with its defaults', () => {
    expect(parseProtocol(BASE, BAD_FILE).protocol.frames).toBeUndefined();
    const p = parseProtocol(withFrames('  steps: [0, 5, 9]\n  conditions: [A, N_blk]\n  units: 4'), BAD_FILE).protocol;
    expect(p.frames).toEqual({ steps: [0, 5, 9], conditions: ['A', 'N_blk'], units: 4, field: 'rgb', downsample: 1 });
  });

  it('refuses an unknown condition, steps out of order, a field the policy does not see, an unknown key', () => {
    expect(refusal(withFrames('  steps: [0]\n  conditions: [A, Z]\n  units: 4')).message).toContain(
      'unknown condition "Z"',
    );
    expect(refusal(withFrames('  steps: [0, 5, 5]\n  conditions: [A]\n  units: 4')).message).toContain(
      'step 5 does not follow step 5',
    );
    expect(refusal(withFrames('  steps: [0]\n  conditions: [A]\n  units: 4\n  field: colour')).message).toContain(
      'frames.field "colour" is on neither allowlist',
    );
    expect(refusal(withFrames('  steps: [0]\n  conditions: [A]\n  units: 4\n  fps: 3')).message).toMatch(/fps/);
    const units = refusal(withFrames('  steps: [0]\n  conditions: [A]\n  units: 300'));
    expect(units.message).toBe('must be ≤ 256, got 300');
    expect(units.issues[0]?.path).toEqual(['frames', 'units']);
  });

  it('accepts an evaluator-only field (a render for the report the policy never gets)', () => {
    const p = parseProtocol(
      withFrames('  steps: [0]\n  conditions: [A]\n  units: 4\n  field: seed'),
      BAD_FILE,
    ).protocol;
    expect(p.frames?.field).toBe('seed');
  });

  it('refuses more registered frames than the cap', () => {
    let big = replaceOnce(BASE, '      end: 119', '      end: 10099');
    big = replaceOnce(big, 'n: 20', 'n: 10000');
    big = replaceOnce(big, '  count: 1', '  count: 2');
    // 256 units × 4 conditions × 2 attempts × 16 steps = 32,768 frames
    const steps = Array.from({ length: 16 }, (_, i) => i).join(', ');
    const err = refusal(withFrames(`  steps: [${steps}]\n  conditions: [A, N_blk, S_pi, T_mu]\n  units: 256`, big));
    expect(err.message).toContain(
      `frames registers 32768 frames per task (units × conditions × attempts × steps), above the cap of ${MAX_REGISTERED_FRAMES}`,
    );
    // at 128 units it is 16,384: accepted
    expect(
      parseProtocol(
        withFrames(`  steps: [${steps}]\n  conditions: [A, N_blk, S_pi, T_mu]\n  units: 128`, big),
        BAD_FILE,
      ).protocol.frames?.units,
    ).toBe(128);
  });
});
