/** src/report — HTML / Markdown / CSV reports generated from sealed rows and the stored adjudication (public face). */
export { REPORT_BYTES_CAP, reportSizeLine, writeReport } from './write-report.js';
export type { WriteReportOptions, WrittenReport } from './write-report.js';
export { figures, renderSvg } from './figures.js';
export type { Figure } from './figures.js';
export { reportModel } from './model.js';
export type { ReportModel, Section, Table } from './model.js';
export { loadReportInputs } from './load.js';
export type { ReportInputs } from './load.js';
export { renderCsv, renderHtml, renderMarkdown } from './render.js';
