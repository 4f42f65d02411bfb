/**
 * The report's "Failures" section: how many sealed rows failed to execute, and per failure code its count and first
 * message (from the sealed rows, by code), beside the registered execution-failure budget they stayed within.
 * Shown also when nothing failed, so a reader sees that it was looked at.
 */
import { failureSummary, type EpisodeRow } from '../evidence/index.js';
import type { Protocol } from '../protocol/index.js';
import type { Section } from './model.js';

export function failuresSummaryLine(rows: readonly EpisodeRow[]): string {
  const s = failureSummary(rows);
  if (s.failed === 0) return `Failures: none of the ${s.rows} rows failed to execute.`;
  const codes = s.codes.map((c) => `${c.code} ×${c.count}`).join(', ');
  return `Failures: ${s.failed} of ${s.rows} rows failed to execute (${codes}); see "Failures".`;
}

export function failuresSection(rows: readonly EpisodeRow[], protocol: Protocol): Section {
  const s = failureSummary(rows);
  const ef = protocol.executionFailures;
  const policy = ef.policy === 'retry' ? `retry (up to ${ef.maxRetries} retries)` : 'record (never retried)';
  const budget = `registered policy ${policy}; budget firstFailed ${ef.budget.firstFailed}, maxFraction ${ef.budget.maxFraction} (per wave × condition, in units)`;
  return {
    id: 'failures',
    title: 'Failures',
    intro:
      s.failed === 0
        ? `No row failed to execute (${s.rows} rows; ${budget}).`
        : `${s.failed} of ${s.rows} rows failed to execute; they are recorded as failed and stay in the denominators (unresolved pairs enter the identification bounds). ${budget}.`,
    tables:
      s.failed === 0
        ? []
        : [
            {
              header: ['code', 'failed rows', 'first row', 'first message'],
              rows: s.codes.map((c) => [
                c.code,
                String(c.count),
                `${c.first.seq} (wave ${c.first.wave} × ${c.first.condition})`,
                c.first.message,
              ]),
            },
          ],
  };
}
