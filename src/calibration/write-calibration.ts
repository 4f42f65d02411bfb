/**
 * Writes calibration.json (canonical JSON: byte-identical for the same inputs), calibration.md and
 * calibration.html (self-contained: the Vega-Lite figure pre-rendered to SVG, no script, no network).
 * Every number is taken from the result by code. Files are written to a temporary name and renamed.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson } from '../core/index.js';
import { renderSvg } from '../report/figures.js';
import { powerCurveSpec } from './figure.js';
import { noisyLines } from './noisy-checks.js';
import type { CalibrationResult, CampaignDesignResult, DesignResult } from './result.js';

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
const ci = (lo: number, hi: number): string => `[${pct(lo)}, ${pct(hi)}]`;
const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function designRow(d: DesignResult): string[] {
  const planted = d.planted === null ? '—' : `${d.planted.mode} δ=${d.planted.delta}`;
  const z = (a: DesignResult['agreementReal']): string =>
    a.z === null ? (a.agrees ? 'equal' : 'differ') : a.z.toFixed(2);
  return [
    d.id,
    d.checkpoint,
    planted,
    d.truth,
    `${d.pooled.bOnlyT}/${d.pooled.cOnlyS}/${d.pooled.n}`,
    `${(100 * d.pooled.theta).toFixed(2)} pp`,
    `${d.real.kind === 'power' ? 'power' : 'FPR'} ${d.real.detected}/${d.real.campaigns} = ${pct(d.real.rate)} ${ci(d.real.cp95.lower, d.real.cp95.upper)}`,
    `${d.simulated.detected}/${d.simulated.campaigns} = ${pct(d.simulated.rate)} ${ci(d.simulated.cp95.lower, d.simulated.cp95.upper)}, UB95 ${pct(d.simulated.upper95)}`,
    `${pct(d.predicted.power)} ± ${pct(d.predicted.mcError)} (exact ${pct(d.predicted.exactPower)})`,
    `${z(d.agreementReal)} / ${z(d.agreementSimulated)}`,
  ];
}

function campaignDesignRow(d: CampaignDesignResult): string[] {
  const z = (a: DesignResult['agreementReal']): string =>
    a.z === null ? (a.agrees ? 'equal' : 'differ') : a.z.toFixed(2);
  const words = Object.entries(d.verdicts)
    .map(([w, k]) => `${w} ${k}`)
    .join(', ');
  return [
    d.id,
    d.checkpoint,
    d.truth,
    `${d.pooled.bOnlyT}/${d.pooled.cOnlyS}/${d.pooled.n} (removed ${d.pooled.removed})`,
    `${(100 * d.pooled.theta).toFixed(2)} pp`,
    words,
    `${d.real.kind === 'power' ? 'power' : 'FPR'} ${d.real.detected}/${d.real.campaigns} = ${pct(d.real.rate)} ${ci(d.real.cp95.lower, d.real.cp95.upper)}`,
    `${d.simulated.detected}/${d.simulated.campaigns} = ${pct(d.simulated.rate)} ${ci(d.simulated.cp95.lower, d.simulated.cp95.upper)}, UB95 ${pct(d.simulated.upper95)}`,
    `${pct(d.predicted.power)} ± ${pct(d.predicted.mcError)} (exact ${pct(d.predicted.exactPower)})`,
    `${z(d.agreementReal)} / ${z(d.agreementSimulated)}`,
  ];
}
const CAMPAIGN_HEAD = [
  'design',
  'checkpoint',
  'truth',
  'Σb′/Σc′/Σn',
  'pooled θ̂',
  'registered verdicts',
  'real IMEP campaigns (detected = holds)',
  'simulated campaigns',
  'predicted (frozen MC)',
  'z real / sim',
];

function campaignBandRows(r: CalibrationResult): string[][] {
  return (r.campaignDesigns?.designs ?? []).flatMap((d) =>
    d.campaigns.map((c) => [
      d.id,
      String(c.band),
      `${c.seeds[0]}–${c.seeds[1]}`,
      `${c.bOnlyT}/${c.cOnlyS}/${c.n}`,
      String(c.removed),
      c.bound === null ? '—' : `[${(100 * c.bound.lower).toFixed(2)}, ${(100 * c.bound.upper).toFixed(2)}] pp`,
      c.verdict,
      `p = ${c.test.p.toPrecision(3)} ${c.test.detected ? 'detects' : 'does not detect'}${c.verdictMatchesTest ? '' : ' — MISMATCH'}`,
      c.gates.map((g) => `${g.gate} ${g.passed ? 'passed' : 'FAILED'}`).join(', '),
      `${c.rowsSha256.slice(0, 12)}…`,
    ]),
  );
}
const BAND_HEAD = [
  'design',
  'band',
  'seeds (per task)',
  'b′/c′/n',
  'removed',
  'θ bound (registered)',
  'verdict',
  'frozen test',
  'gates',
  'rows.jsonl sha256',
];

function campaignIntro(r: CalibrationResult): string[] {
  const c = r.campaignDesigns;
  if (c === null) return [];
  return [
    `Template ${c.template.file} (${c.template.sha256.slice(0, 12)}…), ${c.substituted.join(', ')} substituted; ${c.campaignsPerDesign} campaign(s) per design at n = ${c.n} seeds per task${c.n === c.registeredN && c.campaignsPerDesign === c.registeredCampaigns ? '' : ` (registered: ${c.registeredCampaigns} at n = ${c.registeredN})`}; detection = criterion ${c.template.criterion.id} (${c.template.criterion.rule} on ${c.template.criterion.estimand}, ${c.template.criterion.method}) holds.`,
    `Lifecycle: ${c.lifecycle}; runner ${c.operators.runner}, adjudicator ${c.operators.adjudicator}.`,
    c.note,
  ];
}

const HEAD = [
  'design',
  'checkpoint',
  'planted',
  'truth',
  'Σb′/Σc′/Σn',
  'pooled θ̂',
  'real campaigns',
  'simulated campaigns',
  'predicted (frozen MC)',
  'z real / sim',
];

function summaryLines(r: CalibrationResult): string[] {
  const c = r.checks;
  const out = [
    `${r.suite.title} — suite ${r.suite.id} (${r.suite.sha256.slice(0, 12)}…), ${r.design.env}, n = ${r.design.n}${r.design.quick ? ` (QUICK: not the registered n = ${r.design.registeredN})` : ''}, ${r.design.realCampaignsPerDesign} real campaigns and ${r.design.simulatedCampaignsPerDesign} stats-level simulated campaigns per design; detection: ${r.design.test} exact McNemar on (b′, c′) at α = ${r.design.alpha}.`,
    `Real campaigns: the lite simulator and checkpoints. Simulated campaigns: stats-level draws at per-unit rates measured on this design's real campaigns (source recorded per design).`,
  ];
  for (const d of c.falsePositive.designs)
    out.push(
      `false-positive check ${d.id}: upper 95% bound ${pct(d.upper95)} over ${d.campaigns} simulated campaigns ${d.passed ? '≤' : '>'} ${pct(c.falsePositive.limit)} — ${d.passed ? 'passed' : 'FAILED'}`,
    );
  for (const d of c.power.designs)
    out.push(
      `power check ${d.id}: real ${pct(d.real)}, simulated ${pct(d.simulated)} (≥ ${pct(c.power.minimum)}) — ${d.passed ? 'passed' : 'FAILED'}`,
    );
  out.push(
    `agreement with the frozen prediction: ${c.agreement.agreeing}/${c.agreement.compared} comparisons within |z| ≤ ${c.agreement.zLimit} — ${c.agreement.passed ? 'passed' : 'FAILED'}`,
  );
  if (c.campaignVerdicts.campaigns > 0)
    out.push(
      `IMEP verdict path: ${c.campaignVerdicts.matching}/${c.campaignVerdicts.campaigns} campaign-level units whose registered verdict coincides with the frozen test on their (b′, c′) — ${c.campaignVerdicts.passed ? 'passed' : 'FAILED'}`,
    );
  out.push(...noisyLines(c.noisy));
  return out;
}

function frozenRows(r: CalibrationResult): string[][] {
  return r.frozenMde.rows.map((f) => [
    String(f.assumedDiscordance),
    f.frozenEffect === null ? 'unreachable' : `${(100 * f.frozenEffect).toFixed(3)} pp`,
    pct(f.achievedPower),
    `${f.simulated.detected}/${f.simulated.campaigns} = ${pct(f.simulated.rate)} ${ci(f.simulated.cp95.lower, f.simulated.cp95.upper)}`,
    f.agreement.z === null ? '—' : f.agreement.z.toFixed(2),
  ]);
}
const FROZEN_HEAD = ['assumed ρ', 'frozen MDE θ', 'frozen power', 'simulated at (ρ, MDE)', 'z'];

const mdTable = (head: readonly string[], rows: readonly (readonly string[])[]): string =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );
const htmlTable = (head: readonly string[], rows: readonly (readonly string[])[]): string =>
  `<table><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</table>`;

const NOTE =
  'Combined Monte-Carlo SE of observed rate x/B vs predicted p̂ (R replicates): √(p̄(1−p̄)(1/B + 1/R)), p̄ = (x + p̂R)/(B + R); the plug-in (ρ̂, θ̂) is itself estimated and its error is not included. Null designs are simulated at pB = pC (θ = 0 by construction).';

export function renderCalibrationMarkdown(r: CalibrationResult): string {
  const all = [...r.designs, ...(r.campaignDesigns?.designs ?? [])];
  const sources = all.map(
    (d) =>
      `- ${d.id}: pB = ${d.simulationParameters.pB}, pC = ${d.simulationParameters.pC} — ${d.simulationParameters.source}`,
  );
  const campaigns =
    r.campaignDesigns === null
      ? []
      : [
          '## Campaign-level designs (IMEP verdict path)',
          '',
          ...campaignIntro(r).map((l) => `- ${l}`),
          '',
          mdTable(CAMPAIGN_HEAD, r.campaignDesigns.designs.map(campaignDesignRow)),
          '',
          mdTable(BAND_HEAD, campaignBandRows(r)),
          '',
        ];
  return [
    `# ${r.suite.title}`,
    '',
    ...summaryLines(r).map((l) => `- ${l}`),
    '',
    '## Designs',
    '',
    mdTable(HEAD, r.designs.map(designRow)),
    '',
    NOTE,
    '',
    ...campaigns,
    '## Frozen MDE rows',
    '',
    mdTable(FROZEN_HEAD, frozenRows(r)),
    '',
    '## Simulation parameters and their sources',
    '',
    ...sources,
    '',
  ].join('\n');
}

export async function renderCalibrationHtml(r: CalibrationResult): Promise<string> {
  const svg = await renderSvg(powerCurveSpec(r));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(r.suite.title)}</title>
<style>body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:24px;max-width:1400px}table{border-collapse:collapse;font-size:12px;margin:8px 0 16px}th,td{border:1px solid #d0d0d0;padding:3px 6px;text-align:left}th{background:#f2f2f2}p{font-size:13px}</style></head>
<body><h1>${esc(r.suite.title)}</h1>
${summaryLines(r)
  .map((l) => `<p>${esc(l)}</p>`)
  .join('\n')}
<figure data-figure="power-curve">${svg}<figcaption>Detection rate against the planted amplitude δ (two-sided Clopper–Pearson 95% intervals; dashed: frozen-method prediction at the measured rates; red rule: target power) and pooled θ̂ against δ with the frozen MDE rows.</figcaption></figure>
<h2>Designs</h2>${htmlTable(HEAD, r.designs.map(designRow))}<p>${esc(NOTE)}</p>
${
  r.campaignDesigns === null
    ? ''
    : `<h2>Campaign-level designs (IMEP verdict path)</h2>${campaignIntro(r)
        .map((l) => `<p>${esc(l)}</p>`)
        .join(
          '',
        )}${htmlTable(CAMPAIGN_HEAD, r.campaignDesigns.designs.map(campaignDesignRow))}${htmlTable(BAND_HEAD, campaignBandRows(r))}`
}
<h2>Frozen MDE rows</h2>${htmlTable(FROZEN_HEAD, frozenRows(r))}
</body></html>
`;
}

export interface WrittenCalibration {
  readonly json: string;
  readonly markdown: string;
  readonly html: string;
}

export async function writeCalibration(r: CalibrationResult, outDir: string): Promise<WrittenCalibration> {
  await mkdir(outDir, { recursive: true });
  const files: [string, string][] = [
    ['calibration.json', `${canonicalJson(r)}\n`],
    ['calibration.md', renderCalibrationMarkdown(r)],
    ['calibration.html', await renderCalibrationHtml(r)],
  ];
  for (const [name, text] of files) {
    const tmp = join(outDir, `.${name}.tmp-${process.pid}`);
    await writeFile(tmp, text);
    await rename(tmp, join(outDir, name));
  }
  return {
    json: join(outDir, 'calibration.json'),
    markdown: join(outDir, 'calibration.md'),
    html: join(outDir, 'calibration.html'),
  };
}
