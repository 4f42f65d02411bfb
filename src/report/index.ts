/** src/report — HTML / Markdown / CSV reports generated from sealed rows and the stored adjudication (public face). */
export type { WriteReportOptions, WrittenReport } from './write-report.js';
export type { Figure } from './figures.js';
export { reportModel } from './model.js';
export type { ReportModel, Section, Table } from './model.js';
export { loadReportInputs } from './load.js';
export type { ReportInputs } from './load.js';
export { renderCsv, renderHtml, renderMarkdown } from './render.js';
export { paperReproductionRows } from './paper-reproduction.js';
export { pValue, pp, signedPp, textTable } from './text-table.js';
