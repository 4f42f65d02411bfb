/**
 * The report's figures as Vega-Lite specs, built only from the adjudication's numbers, and rendered to
 * SVG in Node (vega-lite compile → vega View with renderer 'none' → toSVG), so the HTML needs no script,
 * no CDN and works offline.
 *   outcome-change  ρ per condition against its wave's anchor with two-sided Clopper–Pearson 95% intervals
 *                   (the paper's Figure 3)
 *   success         success rate per condition with Wilson 95% intervals
 *   coverage        survival coverage per substituting condition
 * A condition whose number a failed path/wiring gate withholds is left out of the first two figures
 * (named in the caption).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Adjudication, ConditionSummary } from '../adjudication/index.js';

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

export function figures(a: Adjudication): Figure[] {
  const multiWave = a.design.waves.length > 1;
  const withheld = withheldConditions(a);
  const kept = a.conditions.filter((c) => !withheld.has(c.condition));
  const note = withheld.size > 0 ? ` Withheld (failed path/wiring gate): ${[...withheld].sort().join(', ')}.` : '';
  const out: Figure[] = [];

  const rho = kept
    .filter((c) => c.vsAnchor !== null)
    .map((c) => ({
      condition: label(c, multiWave),
      rho: pct(c.vsAnchor!.rho),
      lower: pct(c.vsAnchor!.rhoCp95.lower),
      upper: pct(c.vsAnchor!.rhoCp95.upper),
      flips: `${c.vsAnchor!.b + c.vsAnchor!.c}/${c.vsAnchor!.n}`,
      anchor: c.vsAnchor!.anchor,
    }));
  if (rho.length > 0) {
    out.push({
      id: 'outcome-change',
      title: 'Outcome-change rate ρ per condition',
      caption: `ρ = (b + c)/n against each wave's anchor, with two-sided Clopper–Pearson 95% intervals (success readout, registered attempts).${note}`,
      spec: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        width: 420,
        height: 240,
        data: { values: rho },
        encoding: { x: { field: 'condition', type: 'nominal', sort: null, title: 'condition', axis: { ...AXIS, labelAngle: 0 } } },
        layer: [
          { mark: { type: 'rule', strokeWidth: 2, color: '#4c78a8' }, encoding: { y: { field: 'lower', type: 'quantitative', title: 'ρ (%)', axis: AXIS }, y2: { field: 'upper' } } },
          { mark: { type: 'point', filled: true, size: 70, color: '#e45756' }, encoding: { y: { field: 'rho', type: 'quantitative' } } },
          { mark: { type: 'text', dy: -12, fontSize: 10 }, encoding: { y: { field: 'upper', type: 'quantitative' }, text: { field: 'flips' } } },
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
        encoding: { x: { field: 'condition', type: 'nominal', sort: null, title: 'condition', axis: { ...AXIS, labelAngle: 0 } } },
        layer: [
          { mark: { type: 'rule', strokeWidth: 2, color: '#54a24b' }, encoding: { y: { field: 'lower', type: 'quantitative', title: 'success (%)', scale: { domain: [0, 100] }, axis: AXIS }, y2: { field: 'upper' } } },
          { mark: { type: 'point', filled: true, size: 70, color: '#222222' }, encoding: { y: { field: 'rate', type: 'quantitative' } } },
          { mark: { type: 'text', dy: -12, fontSize: 10 }, encoding: { y: { field: 'upper', type: 'quantitative' }, text: { field: 'count' } } },
        ],
      },
    });
  }

  const cov = a.conditions
    .filter((c) => c.coverage !== null)
    .map((c) => ({ condition: label(c, multiWave), coverage: pct(c.coverage!.rate), count: `${c.coverage!.covered}/${c.coverage!.units}` }));
  if (cov.length > 0) {
    out.push({
      id: 'coverage',
      title: 'Survival coverage per substituting condition',
      caption: 'Fraction of units whose every decision query selected ≥ 1 unmodified substituted record (a lower bound on delivery; 100% is the G_surv criterion).',
      spec: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        width: 420,
        height: 200,
        data: { values: cov },
        encoding: { x: { field: 'condition', type: 'nominal', sort: null, title: 'condition', axis: { ...AXIS, labelAngle: 0 } } },
        layer: [
          { mark: { type: 'bar', color: '#72b7b2', width: 28 }, encoding: { y: { field: 'coverage', type: 'quantitative', title: 'coverage (%)', scale: { domain: [0, 100] }, axis: AXIS } } },
          { mark: { type: 'text', dy: -8, fontSize: 10 }, encoding: { y: { field: 'coverage', type: 'quantitative' }, text: { field: 'count' } } },
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
