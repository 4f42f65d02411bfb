/**
 * What the filmstrip overlay draws from what a frames line holds: the tool's path and the step's action where the
 * line has a track, the action's arrow from the centre where it has actions only, nothing (and a note that says what
 * is missing) where it has neither; the executed row of an action chunk; the tool_xy field from an env's conventions.
 */
import { describe, expect, it } from 'vitest';
import { actionText, frameOverlay, overlayNote } from '../../src/report/filmstrip-overlay.js';
import type { RecordedEpisode } from '../../src/report/frames-load.js';
import { firstActionRow, toolTrackField } from '../../src/campaign/frame-recorder.js';

const base: RecordedEpisode = {
  seq: 0,
  condition: 'A',
  task: 'T',
  seed: 1,
  attempt: 1,
  episodeId: 'ab',
  status: 'ok',
  steps: 3,
  frames: [{ step: 2, width: 32, height: 32, png: 'x' }],
  reads: [],
};

describe('frameOverlay', () => {
  it('with a track: the path up to the step in image pixels, the tool dot there, the action arrow from it', () => {
    const e: RecordedEpisode = {
      ...base,
      actions: [
        { step: 0, action: [0.06, 0] },
        { step: 1, action: [0, 0.06] },
        { step: 2, action: [0, 0.03] },
      ],
      track: {
        field: 'toolPosition',
        format: 'tool_xy',
        points: [
          { step: 0, x: -1, y: 1 },
          { step: 1, x: 0, y: 0 },
          { step: 2, x: 1, y: -1 },
          { step: 3, x: 0.5, y: -0.5 },
        ],
      },
    };
    const svg = frameOverlay(e, 1, 32, 32, 64);
    // (−1, 1) is the top-left corner, (0, 0) the centre; step 2's point is not drawn yet
    expect(svg).toContain('data-drawn="track"');
    expect(svg).toContain('points="0,0 16,16"');
    expect(svg).toContain('<circle class="tool" cx="16" cy="16"');
    // step 1's action (0, +0.06) is the longest: a quarter of the frame (8 px) straight up from the tool
    expect(svg).toContain('<line class="action" x1="16" y1="16" x2="16" y2="8"');
    expect(svg).toContain('<title>step 1: a = (0, 0.06)</title>');
  });

  it('with actions only: an arrow from the centre; with neither: nothing, and the note says what is missing', () => {
    const e: RecordedEpisode = { ...base, actions: [{ step: 2, action: [-0.5, 0, 1, 2] }] };
    const svg = frameOverlay(e, 2, 32, 32, 64);
    expect(svg).toContain('data-drawn="action"');
    expect(svg).toContain('<line class="action" x1="16" y1="16" x2="8" y2="16"');
    expect(svg).not.toContain('polyline');
    expect(actionText([-0.5, 0, 1, 2])).toBe('a = (−0.5, 0, 1, … 4 dims)');
    expect(overlayNote([e])).toContain('a direction, not a position');
    expect(frameOverlay(base, 2, 32, 32, 64)).toBe('');
    expect(overlayNote([base])).toContain('record no actions and no tool position');
  });
});

describe('what the frame recorder keeps', () => {
  it('the first row of an action chunk, rounded to 1e-4; the tool_xy field when method-visible', () => {
    const chunk = { shape: [2, 3], dtype: 'float32', data: Float32Array.of(0.123456, -1, 2, 9, 9, 9) } as const;
    expect(firstActionRow(chunk as never)).toEqual([0.1235, -1, 2]);
    const conventions = {
      action: [],
      observation: [{ name: 'state', field: 'toolPosition', dims: 2, format: 'tool_xy' }],
    };
    expect(toolTrackField({ methodVisible: ['rgb', 'toolPosition'], conventions })).toBe('toolPosition');
    expect(toolTrackField({ methodVisible: ['rgb'], conventions })).toBeUndefined();
    expect(toolTrackField({ methodVisible: ['rgb'] })).toBeUndefined();
  });
});
