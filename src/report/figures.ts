/**
 * The report's figures as Vega-Lite specs, built only from the adjudication's numbers, and rendered to
 * SVG in Node (vega-lite compile → vega View with renderer 'none' → toSVG), so the HTML needs no script,
 * no CDN and works offline.
 *   outcome-change  ρ per condition against its wave's anchor, each with the interval family its verdict
 *                   routes on (rho-interval.ts), on a 0-based axis shared by every condition (the paper's Figure 3)
 *   success         success rate per condition with Wilson 95% intervals
 *   coverage        survival coverage per substituting condition and task: units covered and decision queries
 *                   covered (coverage-data.ts, from the sealed rows)
 * A condition whose number a failed path/wiring gate withholds is left out of the first two figures
 * (named in the caption).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Adjudication, ConditionSummary } from '../adjudication/index.js';
import type { EpisodeRow } from '../evidence/index.js';
import { coverageData } from './coverage-data.js';
import { rhoInterval } from './rho-interval.js';

/** The ρ axis never auto-scales below this top (in %): a 0–1.2 % range stays a sliver, not a full-height bar. */
export const RHO_FLOOR_TOP = 25;

/** The shared top of a 0-based axis: at least RHO_FLOOR_TOP, else the largest value rounded up to 5. */
function sharedTop(values: readonly number[]): number {
  const m = Math.max(0, ...values);
  return Math.min(100, Math.max(RHO_FLOOR_TOP, Math.ceil(m / 5) * 5));
}

export interface Figure {
  readonly id: 'outcome-change' | 'success' | 'coverage';
  readonly title: string;
  readonly caption: string;
  readonly spec: TopLevelSpec;
}

const pct = (x: number): number => Number((100 * x).toFixed(6));

function label(c: ConditionSummary, multiWave: boolean): string {
  return multiWave ? `${c.condition} (w${c.wave})` : c.condition;
}

function withheldConditions(a: Adjudication): Set<string> {
  const out = new Set<string>();
  for (const g of a.gates) if (g.hard && g.onFail === 'invalid' && !g.passed) for (const c of g.failing) out.add(c);
  return out;
}

const AXIS = { labelFontSize: 11, titleFontSize: 12 };

export function figures(a: Adjudication, rows: readonly EpisodeRow[] = []): Figure[] {
  const multiWave = a.design.waves.length > 1;
  const withheld = withheldConditions(a);
  const kept = a.conditions.filter((c) => !withheld.has(c.condition));
  const note = withheld.size > 0 ? ` Withheld (failed path/wiring gate): ${[...withheld].sort().join(', ')}.` : '';
  const out: Figure[] = [];

  const rho = kept
    .filter((c) => c.vsAnchor !== null)
    .map((c) => {
      const v = c.vsAnchor!;
      const fam = rhoInterval(a, c);
      return {
        condition: label(c, multiWave),
        rho: pct(v.rho),
        lower: pct(fam.lower),
        upper: pct(fam.upper),
        flips: `${v.b + v.c}/${v.n}`,
        anchor: v.anchor,
        family: fam.label,
      };
    });
  const byFamily = new Map<string, string[]>();
  for (const r of rho) byFamily.set(r.family, [...(byFamily.get(r.family) ?? []), r.condition]);
  const families = [...byFamily].map(([fam, cs]) => `${cs.join(', ')}: ${fam}`);
  const rhoTop = sharedTop(rho.map((r) => r.upper));
  if (rho.length > 0) {
    out.push({
      id: 'outcome-change',
      title: 'Outcome-change rate ρ per condition',
      caption: `ρ = (b + c)/n against each wave's anchor (success readout, registered attempts), each with the interval family its verdict routes on — ${families.join('; ')}. The axis starts at 0 and its top is at least ${RHO_FLOOR_TOP}% (shared by every condition), so a small ρ looks small.${note}`,
      spec: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        width: 420,
        height: 240,
        data: { values: rho },
        encoding: {
          x: { field: 'condition', type: 'nominal', sort: null, title: 'condition', axis: { ...AXIS, labelAngle: 0 } },
        },
        layer: [
          {
            mark: { type: 'rule', strokeWidth: 2, color: '#4c78a8' },
            encoding: {
              y: {
                field: 'lower',
                type: 'quantitative',
                title: 'ρ (%)',
                scale: { domain: [0, rhoTop], zero: true, nice: false },
                axis: AXIS,
              },
              y2: { field: 'upper' },
            },
          },
          {
            mark: { type: 'point', filled: true, size: 70, color: '#e45756' },
            encoding: { y: { field: 'rho', type: 'quantitative' } },
          },
          {
            mark: { type: 'text', dy: -12, fontSize: 10 },
            encoding: { y: { field: 'upper', type: 'quantitative' }, text: { field: 'flips' } },
          },
        ],
      },
    });
  }

  const sr = kept
    .filter((c) => c.success !== null)
    .map((c) => ({
      condition: label(c, multiWave),
      rate: pct(c.success!.rate),
      lower: pct(c.success!.wilson95.lower),
      upper: pct(c.success!.wilson95.upper),
      count: `${c.success!.successes}/${c.success!.n}`,
    }));
  if (sr.length > 0) {
    out.push({
      id: 'success',
      title: 'Success rate per condition',
      caption: `Success on the registered attempts (resolved rows) with Wilson 95% intervals.${note}`,
      spec: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        width: 420,
        height: 240,
        data: { values: sr },
        encoding: {
          x: { field: 'condition', type: 'nominal', sort: null, title: 'condition', axis: { ...AXIS, labelAngle: 0 } },
        },
        layer: [
          {
            mark: { type: 'rule', strokeWidth: 2, color: '#54a24b' },
            encoding: {
              y: {
                field: 'lower',
                type: 'quantitative',
                title: 'success (%)',
                scale: { domain: [0, 100] },
                axis: AXIS,
              },
              y2: { field: 'upper' },
            },
          },
          {
            mark: { type: 'point', filled: true, size: 70, color: '#222222' },
            encoding: { y: { field: 'rate', type: 'quantitative' } },
          },
          {
            mark: { type: 'text', dy: -12, fontSize: 10 },
            encoding: { y: { field: 'upper', type: 'quantitative' }, text: { field: 'count' } },
          },
        ],
      },
    });
  }

  const cov = coverageData(a, rows);
  if (cov.length > 0) {
    out.push({
      id: 'coverage',
      title: 'Survival coverage per condition, task and decision query',
      caption:
        'For each substituting condition and task: the fraction of units whose every decision query selected ≥ 1 unmodified substituted record (units; 100% is the G_surv criterion), and the fraction of all decision queries that did (queries). A lower bound on delivery; the axis is 0–100% for every bar.',
      spec: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        width: 420,
        height: 200,
        data: { values: cov },
        encoding: {
          x: {
            field: 'group',
            type: 'nominal',
            sort: null,
            title: 'condition · task',
            axis: { ...AXIS, labelAngle: 0 },
          },
          xOffset: { field: 'measure', type: 'nominal', sort: ['units', 'queries'] },
          color: {
            field: 'measure',
            type: 'nominal',
            sort: ['units', 'queries'],
            scale: { range: ['#72b7b2', '#b279a2'] },
            legend: { title: null, orient: 'bottom' },
          },
        },
        layer: [
          {
            mark: { type: 'bar' },
            encoding: {
              y: {
                field: 'coverage',
                type: 'quantitative',
                title: 'coverage (%)',
                scale: { domain: [0, 100], zero: true, nice: false },
                axis: AXIS,
              },
            },
          },
          {
            mark: { type: 'text', dy: -8, fontSize: 9 },
            encoding: { y: { field: 'coverage', type: 'quantitative' }, text: { field: 'count' } },
          },
        ],
      },
    });
  }
  return out;
}

/** Renders a Vega-Lite spec to a standalone SVG string (headless: no canvas, no DOM, no network). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const compiled = compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logLevel: vega.Warn });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
