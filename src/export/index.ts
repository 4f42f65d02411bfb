/**
 * src/export — evidence in the ecosystem's formats: `imep export` writes a sealed unit's rows and per-episode
 * summaries as Parquet (export-unit.ts), with a small standard writer of its own (parquet-file.ts,
 * parquet-schema.ts, thrift-compact.ts) and the tables' columns (tables.ts).
 */
export { exportUnit, defaultExportDir, EXPORT_METADATA_KEYS } from './export-unit.js';
export type { ExportOptions, ExportResult } from './export-unit.js';
export { parquetBytes } from './parquet-file.js';
export type { ParquetTable } from './parquet-file.js';
export { leaf, listOf, structOf, shred } from './parquet-schema.js';
export type { SchemaNode, LeafType, ShreddedColumn } from './parquet-schema.js';
export { ROW_FIELDS, EPISODE_FIELDS, episodeSummary } from './tables.js';
