/**
 * Writes docs/error-rates.md: the exact error-rate table of every verdict rule × method
 * (src/calibration/error-rate-table.ts). Usage: npx tsx scripts/error-rates.ts [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { fullRangeRates, gridErrorRates, gridMcNemar, mcnemarRangeRows } from '../src/calibration/error-rate-grid.js';
import { thetaBarRows } from '../src/calibration/error-rate-theta-bar.js';
import { errorRateMarkdown } from '../src/calibration/error-rate-table.js';
import { registerBuiltinKinds } from '../src/kinds/index.js';

registerBuiltinKinds();

const at = process.argv.indexOf('--out');
const out = at >= 0 ? (process.argv[at + 1] as string) : 'docs/error-rates.md';
const t0 = performance.now();
const rows = gridErrorRates();
const md = errorRateMarkdown(rows, gridMcNemar(), fullRangeRates(rows), thetaBarRows(), mcnemarRangeRows());
writeFileSync(out, md);
console.log(`wrote ${out} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
