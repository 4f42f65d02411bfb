/**
 * Renderers of the report model: Markdown (GitHub tables), self-contained HTML (inline CSS, inline SVG
 * figures, no script, no external resource: it opens offline), and the rows as CSV.
 */
import type { EpisodeRow } from '../evidence/index.js';
import type { Figure } from './figures.js';
import type { ReportModel, Table } from './model.js';

function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function mdTable(t: Table): string {
  const lines: string[] = [];
  if (t.caption) lines.push(`*${t.caption}*`, '');
  if (t.rows.length === 0) {
    lines.push('(none)');
    return lines.join('\n');
  }
  lines.push(`| ${t.header.map(mdCell).join(' | ')} |`);
  lines.push(`| ${t.header.map(() => '---').join(' | ')} |`);
  for (const r of t.rows) lines.push(`| ${r.map(mdCell).join(' | ')} |`);
  return lines.join('\n');
}

export function renderMarkdown(model: ReportModel, figures: readonly Figure[]): string {
  const out: string[] = [`# ${model.title}`, '', ...model.summary.map((s) => `${s}  `), ''];
  for (const s of model.sections) {
    out.push(`## ${s.title}`, '');
    for (const p of s.paragraphs ?? []) out.push(p, '');
    if (s.intro) out.push(s.intro, '');
    if (s.figure)
      out.push(
        `*Figure: ${s.figure.title}* (drawn in report.html; its numbers are the verdict table's). ${s.figure.caption}`,
        '',
      );
    if (s.gallery) for (const f of figures) out.push(`- **${f.title}** (drawn in report.html) — ${f.caption}`);
    if (s.gallery && figures.length > 0) out.push('');
    if (s.raw) out.push(s.raw.markdown, '');
    for (const t of s.tables) out.push(mdTable(t), '');
    for (const n of s.notes ?? []) out.push(`- ${n}`);
    if ((s.notes ?? []).length > 0) out.push('');
  }
  return out.join('\n');
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const WORD_COLUMNS = new Set(['verdict', 'registered verdict', 'passed']);

function cellClass(column: string, c: string): string {
  const word =
    /^(holds|not detected|unresolved|invalid|excluded|descriptive|FAILED)$/.test(c) && WORD_COLUMNS.has(column);
  if (!word && c !== 'withheld') return '';
  return ` class="w-${c.replace(/\s/g, '-').toLowerCase()}"`;
}

function htmlTable(t: Table): string {
  const cap = t.caption ? `<p class="cap">${esc(t.caption)}</p>` : '';
  if (t.rows.length === 0) return `${cap}<p class="none">(none)</p>`;
  const head = `<thead><tr>${t.header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>`;
  const body = t.rows
    .map((r) => `<tr>${r.map((c, i) => `<td${cellClass(t.header[i] ?? '', c)}>${esc(c)}</td>`).join('')}</tr>`)
    .join('');
  return `${cap}<table>${head}<tbody>${body}</tbody></table>`;
}

const CSS = `
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:24px;color:#1b1b1b;max-width:1400px}
h1{font-size:22px}h2{font-size:17px;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:12px}
th,td{border:1px solid #d0d0d0;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2}p.cap{font-style:italic;font-size:12px;margin:10px 0 2px}p.none{font-size:12px;color:#666}
.figures{display:flex;flex-wrap:wrap;gap:24px}
figure{margin:0;border:1px solid #e0e0e0;padding:8px}figcaption{font-size:12px;max-width:460px}
.w-holds{background:#e3f4e1}.w-not-detected{background:#eef3fb}.w-unresolved{background:#fff5d6}
.w-invalid,.w-withheld,.w-failed{background:#fde2e1}.w-excluded{background:#eeeeee}.w-descriptive{background:#f3ecfb}
p.summary{margin:2px 0;font-size:13px}p.lead{font-size:15px;font-weight:bold}p.para{font-size:13px;max-width:1000px}
figcaption.wide{max-width:1000px}
.pair{margin:10px 0 18px;border-left:3px solid #ccc;padding-left:8px}.pair[data-kind=b]{border-color:#c62828}.pair[data-kind=c]{border-color:#1f5fa8}
p.pair-title{font-size:13px;font-weight:bold;margin:2px 0}table.filmstrip td,table.filmstrip th{border:none;padding:1px 3px;font-size:11px;text-align:center}
td.frame img{image-rendering:pixelated;width:64px;height:64px;border:1px solid #ddd;display:block}
.fov{position:relative;display:inline-block;width:66px;height:66px}.fov svg.overlay{position:absolute;left:1px;top:1px}
span.act{font-size:9px;color:#333;white-space:nowrap}p.legend{font-size:12px;color:#444}
`;

export function renderHtml(model: ReportModel, figures: readonly { figure: Figure; svg: string }[]): string {
  const figs = figures
    .map(
      ({ figure, svg }) =>
        `<figure data-figure="${figure.id}"><div class="chart">${svg}</div><figcaption><b>${esc(figure.title)}.</b> ${esc(figure.caption)}</figcaption></figure>`,
    )
    .join('\n');
  const sections = model.sections
    .map(
      (s) =>
        `<section id="${s.id}"><h2>${esc(s.title)}</h2>${(s.paragraphs ?? []).map((p, i) => `<p class="${i === 0 ? 'lead' : 'para'}">${esc(p)}</p>`).join('')}${s.intro ? `<p>${esc(s.intro)}</p>` : ''}${s.figure ? `<figure data-figure="${s.figure.id}" data-marks="${s.figure.marks}"><div class="chart">${s.figure.svg}</div><figcaption class="wide"><b>${esc(s.figure.title)}.</b> ${esc(s.figure.caption)}</figcaption></figure>` : ''}${s.gallery ? `<div class="figures">\n${figs}\n</div>` : ''}${s.raw ? s.raw.html : ''}${s.tables.map(htmlTable).join('\n')}${(s.notes ?? []).length > 0 ? `<ul class="notes">${(s.notes ?? []).map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : ''}</section>`,
    )
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(model.title)}</title><style>${CSS}</style></head>
<body>
<h1>${esc(model.title)}</h1>
${model.summary.map((s) => `<p class="summary">${esc(s)}</p>`).join('\n')}
${sections}
</body></html>
`;
}

const CSV_COLUMNS = [
  'seq',
  'wave',
  'condition',
  'task',
  'seed',
  'attempt',
  'status',
  'failure_code',
  'success',
  'first_visit',
  'decision_correct',
  'steps',
  'reads_total',
  'reads_empty',
  'reads_with_history',
  'reads_substituted',
  'reads_substituted_unchanged',
  'decision_queries',
  'covered_decision_queries',
  'covered',
  'action_digest',
  'scope_id',
  'episode_id',
  'tries',
] as const;

function csvCell(v: string | number | boolean | null): string {
  if (v === null) return '';
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function renderCsv(rows: readonly EpisodeRow[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    lines.push(
      [
        r.seq,
        r.wave,
        r.condition,
        r.task,
        r.seed,
        r.attempt,
        r.status,
        r.failure?.code ?? null,
        r.success,
        r.firstVisit,
        r.decisionCorrect,
        r.steps,
        r.reads.total,
        r.reads.empty,
        r.reads.withHistory,
        r.reads.substituted,
        r.reads.substitutedUnchanged,
        r.reads.decisionQueries,
        r.reads.coveredDecisionQueries,
        r.reads.covered,
        r.actionDigest,
        r.scopeId,
        r.episodeId,
        r.tries,
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}
