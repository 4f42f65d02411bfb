/**
 * `writeReport(unitDir, { outDir })`: writes report.html (self-contained: inline CSS and inline SVG
 * figures rendered in Node, no script, works offline), report.md and rows.csv into outDir (never inside
 * the unit: a sealed unit accepts no new file), and — when the protocol recorded rollout frames — the
 * filmstrips' PNG files under frames/ (content-addressed). The unit is verified first; every number comes
 * from the stored adjudication and the sealed rows by code. Each file is written atomically.
 */
import { makeDirs, ImepError } from '../core/index.js';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { writeFileAtomic } from '../evidence/index.js';
import { figures, renderSvg, type Figure } from './figures.js';
import { loadReportInputs } from './load.js';
import { reportFilmstrips, reportModel } from './model.js';
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
  /** The filmstrip frames written under frames/ (content-addressed PNG files), relative to outDir. */
  readonly frames: readonly string[];
  /** Bytes of report.html plus its frames: what a reader opens (rows.csv and report.md apart). */
  readonly htmlBytes: number;
  readonly frameBytes: number;
  /** reportSizeLine of the above, for the commands that print it. */
  readonly sizeLine: string;
}

/** The registered cap on a report's HTML plus frames (bytes); the report tests hold every shipped protocol to it. */
export const REPORT_BYTES_CAP = 4 * 1024 * 1024;

export async function writeReport(unitDir: string, opts: WriteReportOptions): Promise<WrittenReport> {
  const out = resolve(opts.outDir);
  const rel = relative(resolve(unitDir), out);
  if (rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))) {
    throw new ImepError(
      'E_USAGE',
      'the report folder lies inside the evidence unit; a sealed unit accepts no new file',
      {
        field: '--out',
        file: out,
        hint: 'choose a folder outside the unit, e.g. reports/<unit id>',
      },
    );
  }
  const inputs = await loadReportInputs(unitDir);
  const strips = reportFilmstrips(inputs);
  const model = reportModel(inputs, strips);
  const figs = figures(inputs.adjudication, inputs.rows);
  const rendered: { figure: Figure; svg: string }[] = [];
  for (const figure of figs) rendered.push({ figure, svg: await renderSvg(figure.spec) });
  try {
    await makeDirs(out);
  } catch (e) {
    throw new ImepError('E_IO', 'cannot create the report folder', { file: out, cause: e });
  }
  const paths = { html: join(out, 'report.html'), markdown: join(out, 'report.md'), csv: join(out, 'rows.csv') };
  if (strips.files.size > 0) {
    try {
      await makeDirs(join(out, 'frames'));
    } catch (e) {
      throw new ImepError('E_IO', 'cannot create the report’s frames folder', { file: join(out, 'frames'), cause: e });
    }
  }
  const frameNames = [...strips.files.keys()].sort();
  for (const name of frameNames) await writeFileAtomic(join(out, name), strips.files.get(name)!);
  const html = renderHtml(model, rendered);
  await writeFileAtomic(paths.html, html);
  await writeFileAtomic(paths.markdown, renderMarkdown(model, figs));
  await writeFileAtomic(paths.csv, renderCsv(inputs.rows));
  const frameBytes = frameNames.reduce((n, f) => n + strips.files.get(f)!.length, 0);
  const sizes = { frames: frameNames, htmlBytes: Buffer.byteLength(html), frameBytes };
  return { outDir: out, ...paths, figures: figs.map((f) => f.id), ...sizes, sizeLine: reportSizeLine(sizes) };
}

/** "report size: N bytes (report.html H bytes + K frames F bytes; cap C bytes)". */
export function reportSizeLine(w: Pick<WrittenReport, 'htmlBytes' | 'frameBytes' | 'frames'>): string {
  return `report size: ${w.htmlBytes + w.frameBytes} bytes (report.html ${w.htmlBytes} bytes + ${w.frames.length} frames ${w.frameBytes} bytes; cap ${REPORT_BYTES_CAP} bytes)`;
}
