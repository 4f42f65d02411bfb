/**
 * What the policy did, drawn over a filmstrip frame: an SVG laid over the frame image (so a blacked-out frame still
 * shows it) and a caption with the step's action. From what the frames line holds (src/evidence/records/frames-line.ts):
 * - `track` (the environment declares a `tool_xy` position field: x right, y up on the [−1, 1]² table its top-down
 *   image shows): the tool's path up to the frame's step as a polyline, its position as a dot, and the step's action
 *   as an arrow from it;
 * - `actions` only: the step's action as an arrow from the frame's centre — its first two components, x right and
 *   y up, scaled so the episode's longest action spans a quarter of the frame (a direction, not a position);
 * - neither (a unit recorded before they were kept): nothing is drawn, and overlayNote says what is missing.
 * Pure: one recorded episode and a step in, SVG and text out.
 */
import type { RecordedEpisode } from './frames-load.js';
import { escXml, fx } from './svg.js';

type Point = { readonly x: number; readonly y: number };

/** The action the policy took at `step` (from the frame at `step` to the next), or undefined. */
export function actionAt(e: RecordedEpisode, step: number): readonly number[] | undefined {
  return e.actions?.find((a) => a.step === step)?.action;
}

function num(x: number): string {
  const s = x.toFixed(3).replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s.replace('-', '−');
}

/** "a = (0.06, −0.01)"; long vectors show their first 3 components and the count. */
export function actionText(action: readonly number[] | undefined): string {
  if (action === undefined) return 'a = —';
  const shown = action.slice(0, 3).map(num).join(', ');
  return `a = (${shown}${action.length > 3 ? `, … ${action.length} dims` : ''})`;
}

function longest(e: RecordedEpisode): number {
  let m = 0;
  for (const a of e.actions ?? []) m = Math.max(m, Math.hypot(a.action[0] ?? 0, a.action[1] ?? 0));
  return m;
}

/**
 * The overlay of one frame (width × height pixels, drawn at `size` CSS pixels), or '' when the line holds neither
 * actions nor a track. Classes: `overlay` (data-step, data-drawn = track | action), `path`, `tool`, `action`.
 */
export function frameOverlay(e: RecordedEpisode, step: number, width: number, height: number, size: number): string {
  const track = e.track;
  const action = actionAt(e, step);
  if (track === undefined && e.actions === undefined) return '';
  const px = (p: Point): Point => ({ x: ((p.x + 1) / 2) * width, y: ((1 - p.y) / 2) * height });
  const stroke = Math.max(0.6, width / 48);
  const marks: string[] = [];
  let from: Point = { x: width / 2, y: height / 2 };
  if (track !== undefined) {
    const upTo = track.points.filter((p) => p.step <= step).map(px);
    if (upTo.length > 1)
      marks.push(
        `<polyline class="path" points="${upTo.map((p) => `${fx(p.x)},${fx(p.y)}`).join(' ')}" fill="none" stroke="#111" stroke-width="${fx(stroke * 2.2)}" stroke-linejoin="round"/>`,
        `<polyline class="path" points="${upTo.map((p) => `${fx(p.x)},${fx(p.y)}`).join(' ')}" fill="none" stroke="#ffd400" stroke-width="${fx(stroke)}" stroke-linejoin="round"/>`,
      );
    const at = upTo[upTo.length - 1];
    if (at !== undefined) {
      from = at;
      marks.push(
        `<circle class="tool" cx="${fx(at.x)}" cy="${fx(at.y)}" r="${fx(stroke * 1.6)}" fill="#ffd400" stroke="#111" stroke-width="${fx(stroke * 0.6)}"/>`,
      );
    }
  }
  const m = longest(e);
  if (action !== undefined && action.length >= 2 && m > 0) {
    const k = (0.25 * width) / m;
    const dx = (action[0] ?? 0) * k;
    const dy = -(action[1] ?? 0) * k;
    const len = Math.hypot(dx, dy);
    if (len > 0.5) {
      const ux = dx / len;
      const uy = dy / len;
      const tip = { x: from.x + dx, y: from.y + dy };
      const h = Math.min(len, stroke * 3);
      const head = `M${fx(tip.x)} ${fx(tip.y)}L${fx(tip.x - ux * h - uy * h * 0.6)} ${fx(tip.y - uy * h + ux * h * 0.6)}L${fx(tip.x - ux * h + uy * h * 0.6)} ${fx(tip.y - uy * h - ux * h * 0.6)}Z`;
      marks.push(
        `<line class="action" x1="${fx(from.x)}" y1="${fx(from.y)}" x2="${fx(tip.x)}" y2="${fx(tip.y)}" stroke="#00e5ff" stroke-width="${fx(stroke)}"/>`,
        `<path class="action" d="${head}" fill="#00e5ff"/>`,
      );
    }
  }
  const drawn = track !== undefined ? 'track' : 'action';
  return `<svg xmlns="http://www.w3.org/2000/svg" class="overlay" data-step="${step}" data-drawn="${drawn}" width="${size}" height="${size}" viewBox="0 0 ${width} ${height}" preserveAspectRatio="none"><title>${escXml(`step ${step}: ${actionText(action)}`)}</title>${marks.join('')}</svg>`;
}

/** One sentence on what the overlays show for these episodes, or what they lack. */
export function overlayNote(episodes: readonly RecordedEpisode[]): string {
  if (episodes.length === 0) return '';
  const tracked = episodes.find((e) => e.track !== undefined)?.track?.field;
  const withActions = episodes.some((e) => e.actions !== undefined);
  if (tracked !== undefined)
    return `Drawn over each frame (a blacked-out frame included): the tool's path so far from the observation field ${tracked} (yellow, its position a dot) and the action the policy took at that step (cyan arrow, scaled so the episode's longest action spans a quarter of the frame); the caption gives the action's values.`;
  if (withActions)
    return "Drawn over each frame: the action the policy took at that step as an arrow from the frame's centre (its first two components, x right and y up, scaled so the episode's longest action spans a quarter of the frame; a direction, not a position — the environment declares no tool position on its image); the caption gives the action's values.";
  return "This unit's frames record no actions and no tool position (recorded before IMEP kept them), so nothing is drawn over the frames; re-run the protocol to record them.";
}
