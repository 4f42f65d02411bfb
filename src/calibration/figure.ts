/**
 * The calibration figure (Vega-Lite, rendered to SVG by src/report's renderSvg so the HTML is offline):
 * left, detection rate against the planted amplitude δ — real campaigns and stats-level simulated
 * campaigns with two-sided Clopper–Pearson 95% intervals, the frozen method's predicted power, and the
 * frozen target power as a rule; right, the pooled θ̂ = ρ̂_T − ρ̂_S against δ with the frozen MDE rows
 * (θ at 80% power for each assumed discordance) as horizontal rules. Only the fact-conditioned planted
 * designs have a δ; the unconditioned design is drawn at its δ in the left panel as a separate series.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { CalibrationResult } from './result.js';

const r6 = (x: number): number => Number(x.toFixed(6));

export function powerCurveSpec(result: CalibrationResult): TopLevelSpec {
  const points: Record<string, string | number>[] = [];
  const predicted: Record<string, string | number>[] = [];
  const theta: Record<string, string | number>[] = [];
  for (const d of result.designs) {
    if (d.planted === null) continue;
    const series = d.planted.mode === 'fact-conditioned' ? 'fact-conditioned' : 'unconditioned';
    for (const [kind, r] of [
      ['real', d.real],
      ['simulated', d.simulated],
    ] as const) {
      points.push({
        delta: d.planted.delta,
        rate: r6(r.rate),
        lower: r6(r.cp95.lower),
        upper: r6(r.cp95.upper),
        series: `${series} · ${kind} (${r.campaigns})`,
      });
    }
    if (series === 'fact-conditioned') {
      predicted.push({ delta: d.planted.delta, power: r6(d.predicted.power) });
      theta.push({ delta: d.planted.delta, theta: r6(d.pooled.theta) });
    }
  }
  const mde = result.frozenMde.rows.map((r) => ({
    theta: r6(r.frozenEffect ?? 0),
    label: `MDE at ρ=${r.assumedDiscordance}`,
  }));
  const target = result.frozenMde.inputs.power;
  const x = { field: 'delta', type: 'quantitative' as const, title: 'planted amplitude δ', scale: { zero: true } };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    hconcat: [
      {
        width: 380,
        height: 260,
        title: 'detection rate vs δ',
        layer: [
          {
            data: { values: points },
            mark: { type: 'rule' },
            encoding: {
              x,
              y: { field: 'lower', type: 'quantitative', title: 'rate θ detected', scale: { domain: [0, 1] } },
              y2: { field: 'upper' },
              color: { field: 'series', type: 'nominal' },
            },
          },
          {
            data: { values: points },
            mark: { type: 'point', filled: true, size: 50 },
            encoding: {
              x,
              y: { field: 'rate', type: 'quantitative' },
              color: { field: 'series', type: 'nominal', legend: { orient: 'bottom', columns: 1 } },
            },
          },
          {
            data: { values: predicted },
            mark: { type: 'line', strokeDash: [4, 3], color: '#555' },
            encoding: { x, y: { field: 'power', type: 'quantitative' } },
          },
          {
            data: { values: [{ target }] },
            mark: { type: 'rule', color: '#b33', strokeDash: [2, 2] },
            encoding: { y: { field: 'target', type: 'quantitative' } },
          },
        ],
      },
      {
        width: 300,
        height: 260,
        title: 'θ̂ = ρ̂_T − ρ̂_S vs δ, frozen MDE',
        layer: [
          {
            data: { values: theta },
            mark: { type: 'line', point: true },
            encoding: { x, y: { field: 'theta', type: 'quantitative', title: 'pooled θ̂' } },
          },
          {
            data: { values: mde },
            mark: { type: 'rule', color: '#b33', strokeDash: [6, 3] },
            encoding: { y: { field: 'theta', type: 'quantitative' } },
          },
          {
            data: { values: mde },
            mark: { type: 'text', align: 'left', dx: 4, dy: -6, fontSize: 10, color: '#b33' },
            encoding: {
              y: { field: 'theta', type: 'quantitative' },
              x: { datum: 0, type: 'quantitative' },
              text: { field: 'label' },
            },
          },
        ],
      },
    ],
  } as TopLevelSpec;
}
