/**
 * `writeReport(unitDir, { outDir })`: writes report.html (self-contained: inline CSS and inline SVG
 * figures rendered in Node, no script, works offline), report.md and rows.csv into outDir (never inside
 * the unit: a sealed unit accepts no new file). The unit is verified first; every number comes from the
 * stored adjudication and the sealed rows by code. Each file is written atomically.
 */
import { makeDirs } from '../core/make-dirs.js';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ImepError } from '../core/errors.js';
import { writeFileAtomic } from '../evidence/io/atomic-write.js';
import { figures, renderSvg, type Figure } from './figures.js';
import { loadReportInputs } from './load.js';
import { reportModel } from './model.js';
import { renderCsv, renderHtml, renderMarkdown } from './render.js';

export interface WriteReportOptions {
  readonly outDir: string;
}

export interface WrittenReport {
  readonly outDir: string;
  readonly html: string;
  readonly markdown: string;
  readonly csv: string;
  readonly figures: readonly Figure['id'][];
}

export async function writeReport(unitDir: string, opts: WriteReportOptions): Promise<WrittenReport> {
  const out = resolve(opts.outDir);
  const rel = relative(resolve(unitDir), out);
  if (rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))) {
    throw new ImepError('E_USAGE', 'the report folder lies inside the evidence unit; a sealed unit accepts no new file', {
      field: '--out',
      file: out,
      hint: 'choose a folder outside the unit, e.g. reports/<unit id>',
    });
  }
  const inputs = await loadReportInputs(unitDir);
  const model = reportModel(inputs);
  const figs = figures(inputs.adjudication);
  const rendered: { figure: Figure; svg: string }[] = [];
  for (const figure of figs) rendered.push({ figure, svg: await renderSvg(figure.spec) });
  try {
    await makeDirs(out);
  } catch (e) {
    throw new ImepError('E_IO', 'cannot create the report folder', { file: out, cause: e });
  }
  const paths = { html: join(out, 'report.html'), markdown: join(out, 'report.md'), csv: join(out, 'rows.csv') };
  await writeFileAtomic(paths.html, renderHtml(model, rendered));
  await writeFileAtomic(paths.markdown, renderMarkdown(model, figs));
  await writeFileAtomic(paths.csv, renderCsv(inputs.rows));
  return { outDir: out, ...paths, figures: figs.map((f) => f.id) };
}
