/**
 * The verdict figure: a forest plot of every registered criterion, one row (one `g.forest-mark`) each,
 * drawn straight from the adjudication's verdict records — never recomputed. Each row shows the point
 * estimate, the interval the verdict routed on (RoutedBound: the registered interval, or its envelope over
 * unresolved units) with its coverage label, the bound(s) that decided drawn thick, the margin (±margin
 * for equivalence) as a dashed line, any companion upper bounds (aboveUpperBoundOf) as diamonds, and the
 * verdict word in its colour. A withheld verdict (invalid, excluded) is a row with its word and no number.
 * The x axis is in percentage points, always includes 0 and every threshold, and is shared by all rows.
 * Hand-written SVG with fixed-precision coordinates: the same adjudication gives the same bytes.
 */
import type { Adjudication, RoutedBound, Verdict } from '../adjudication/index.js';
import type { Criterion, Protocol } from '../protocol/index.js';
import { escXml, fx, linearScale, niceTicks, VERDICT_COLOURS } from './svg.js';
import { signedPp } from './text-table.js';

const ROW = 34;
const TOP = 30;
const LEFT = 210;
const PLOT = 460;
const RIGHT = 600;

/** Which end(s) of the routed interval decided the word. */
export function decidingEnds(v: Verdict): ('lower' | 'upper')[] {
  if (v.bound == null || v.bound.routedOn !== 'bound') return [];
  if (v.rule === 'equivalence') return ['lower', 'upper'];
  const claimEnd = v.rule === 'lower-bound-above' ? 'lower' : 'upper';
  const other = claimEnd === 'lower' ? 'upper' : 'lower';
  if (v.verdict === 'holds') return [claimEnd];
  if (v.verdict === 'not detected') return [other];
  return [claimEnd, other];
}

function thresholds(v: Verdict, c: Criterion | undefined): number[] {
  const b = v.bound;
  if (b == null || b.routedOn === 'test') return [];
  if (c?.rule === 'equivalence') return [-c.margin, c.margin];
  if (c !== undefined && 'margin' in c) return [c.margin];
  return [b.threshold];
}

function domain(rows: readonly { v: Verdict; c: Criterion | undefined }[]): [number, number] {
  const xs = [0];
  for (const { v, c } of rows) {
    const b = v.bound;
    if (b == null) continue;
    xs.push(b.lower, b.upper, b.estimate, ...thresholds(v, c), ...b.companions.map((k) => k.upper));
    if (b.routedOn === 'point') xs.push(b.threshold);
  }
  const finite = xs.filter((x) => Number.isFinite(x));
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  const pad = Math.max((hi - lo) * 0.08, 0.01);
  lo = lo < 0 ? lo - pad : 0;
  hi += pad;
  return [lo, hi];
}

function boundText(v: Verdict, b: RoutedBound): string {
  if (b.routedOn === 'test') return `p = ${Number(b.p?.toPrecision(3) ?? 1)} vs α ${b.threshold}`;
  if (b.routedOn === 'point') return `point ${signedPp(b.estimate)} vs ${signedPp(b.threshold)} pp`;
  const ends = decidingEnds(v);
  const which =
    ends.length === 1
      ? `${ends[0] === 'lower' ? 'LB' : 'UB'} ${signedPp(ends[0] === 'lower' ? b.lower : b.upper)} pp`
      : `[${signedPp(b.lower)}, ${signedPp(b.upper)}] pp`;
  return `${which} · ${b.label}`;
}

export interface ForestPlot {
  readonly svg: string;
  readonly marks: number;
}

export function forestPlot(a: Adjudication, protocol: Protocol): ForestPlot {
  const byId = new Map(protocol.criteria.map((c) => [c.id, c]));
  const rows = a.verdicts.map((v) => ({ v, c: byId.get(v.criterion) }));
  const [lo, hi] = domain(rows);
  const x = linearScale(lo, hi, LEFT, LEFT + PLOT);
  const height = TOP + ROW * rows.length + 40;
  const width = LEFT + PLOT + RIGHT;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="forest" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11">`,
  );
  // axis and grid
  const axisY = TOP + ROW * rows.length + 6;
  for (const t of niceTicks(lo * 100, hi * 100, 7)) {
    const px = fx(x(t / 100));
    parts.push(
      `<line x1="${px}" y1="${TOP - 6}" x2="${px}" y2="${axisY}" stroke="${t === 0 ? '#444' : '#e4e4e4'}" stroke-width="${t === 0 ? 1.2 : 1}"/>`,
    );
    parts.push(`<text x="${px}" y="${axisY + 13}" text-anchor="middle" fill="#333">${escXml(fx(t))}</text>`);
  }
  parts.push(
    `<text x="${fx(LEFT + PLOT / 2)}" y="${axisY + 28}" text-anchor="middle" fill="#333">estimate and routed bound (pp)</text>`,
  );
  parts.push(
    `<text x="${LEFT + PLOT + 8}" y="${TOP - 12}" fill="#333" font-weight="bold">verdict · deciding bound · its coverage</text>`,
  );
  rows.forEach(({ v, c }, i) => {
    const y = TOP + ROW * i + ROW / 2;
    const colour = VERDICT_COLOURS[v.verdict] ?? '#333';
    const name = `${v.question ? `${v.question} · ` : ''}${v.criterion} · ${v.estimand}`;
    const g: string[] = [];
    g.push(`<text x="${LEFT - 8}" y="${fx(y + 4)}" text-anchor="end" fill="#1b1b1b">${escXml(name)}</text>`);
    const b = v.bound;
    if (b == null) {
      const why = 'because' in v && v.because ? v.because.join(', ') : 'no interval could be formed';
      g.push(
        `<text x="${fx(LEFT + 6)}" y="${fx(y + 4)}" fill="${colour}" font-style="italic">${escXml(v.verdict === 'invalid' || v.verdict === 'excluded' ? `withheld (${why})` : why)}</text>`,
      );
      g.push(
        `<text x="${LEFT + PLOT + 8}" y="${fx(y + 4)}" fill="${colour}" font-weight="bold">${escXml(v.verdict)}</text>`,
      );
    } else {
      for (const t of thresholds(v, c))
        g.push(
          `<line class="margin" x1="${fx(x(t))}" y1="${fx(y - 12)}" x2="${fx(x(t))}" y2="${fx(y + 12)}" stroke="#c62828" stroke-width="1.5" stroke-dasharray="4 3"/>`,
        );
      if (b.routedOn === 'point')
        g.push(
          `<line class="margin" x1="${fx(x(b.threshold))}" y1="${fx(y - 12)}" x2="${fx(x(b.threshold))}" y2="${fx(y + 12)}" stroke="#c62828" stroke-width="1.5" stroke-dasharray="4 3"/>`,
        );
      for (const k of b.companions) {
        const cx = x(k.upper);
        g.push(
          `<path class="companion" d="M${fx(cx)} ${fx(y - 7)}L${fx(cx + 5)} ${fx(y)}L${fx(cx)} ${fx(y + 7)}L${fx(cx - 5)} ${fx(y)}Z" fill="none" stroke="#c62828" stroke-width="1.3"><title>${escXml(`UB of ${k.estimand} (${k.interval}): ${signedPp(k.upper)} pp`)}</title></path>`,
        );
      }
      g.push(
        `<line class="interval" x1="${fx(x(b.lower))}" y1="${fx(y)}" x2="${fx(x(b.upper))}" y2="${fx(y)}" stroke="${colour}" stroke-width="2" stroke-opacity="0.55"/>`,
      );
      for (const end of decidingEnds(v)) {
        const px = fx(x(end === 'lower' ? b.lower : b.upper));
        g.push(
          `<line class="deciding-bound" data-end="${end}" x1="${px}" y1="${fx(y - 8)}" x2="${px}" y2="${fx(y + 8)}" stroke="${colour}" stroke-width="3.5"/>`,
        );
      }
      g.push(`<circle class="estimate" cx="${fx(x(b.estimate))}" cy="${fx(y)}" r="4" fill="${colour}"/>`);
      g.push(
        `<text x="${LEFT + PLOT + 8}" y="${fx(y + 4)}" fill="${colour}"><tspan font-weight="bold">${escXml(v.verdict)}</tspan> · ${escXml(boundText(v, b))}</text>`,
      );
    }
    const title = `${v.criterion}: ${v.verdict} — ${v.reason}`;
    const data =
      b == null
        ? ''
        : ` data-interval="${escXml(b.interval)}" data-lower="${b.lower}" data-upper="${b.upper}" data-estimate="${b.estimate}" data-bound-label="${escXml(b.label)}"`;
    parts.push(
      `<g class="forest-mark" data-criterion="${escXml(v.criterion)}" data-verdict="${escXml(v.verdict)}"${data}><title>${escXml(title)}</title>${g.join('')}</g>`,
    );
  });
  parts.push('</svg>');
  return { svg: parts.join(''), marks: rows.length };
}

export const FOREST_CAPTION =
  'Each registered criterion: the dot is the estimate, the thin line the interval the verdict routed on (its coverage printed at right; the envelope over unresolved units where there are any), the thick tick(s) the bound that decided the word, the dashed red line the margin (±margin for equivalence), red diamonds the companion upper bounds the lower bound had to exceed. The axis starts at or below 0 and is shared by every row. Withheld verdicts show no number.';
