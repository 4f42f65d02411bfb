/**
 * `imep protocol check FILE`: validates a protocol file without running anything, and lists EVERY problem the
 * failing stage found (YAML syntax, duplicate keys, schema, cross-field rules — a later stage runs once the earlier
 * one passes), one line each, `FILE:LINE:COL: PATH: what — fix`, at most MAX_LISTED of them; exit 2 when any.
 */
import type { Command } from 'commander';
import { ImepError } from '../core/index.js';
import { ProtocolError, loadProtocol } from '../protocol/index.js';

export const MAX_LISTED = 100;

export function registerProtocol(group: Command): void {
  group
    .command('check')
    .description('validate a protocol file and list every problem found (at most 100), one line each')
    .argument('<file>', 'the protocol file (YAML)')
    .action(async (file: string) => {
      try {
        const p = await loadProtocol(file);
        process.stdout.write(`${file}: valid protocol ${p.protocol.id}, hash ${p.hash}\n`);
      } catch (e) {
        if (!(e instanceof ProtocolError) || e.total <= 1) throw e;
        const shown = e.issues.slice(0, MAX_LISTED);
        for (const issue of shown) process.stdout.write(`${new ProtocolError(e.file, issue).oneLine()}\n`);
        const rest = e.total - shown.length;
        throw new ImepError(
          e.code,
          `${e.total} problems${rest > 0 ? ` (the first ${shown.length} listed on stdout, ${rest} more not shown)` : ' (listed on stdout)'}`,
          {
            ...(e.file === undefined ? {} : { file: e.file }),
            hint: 'fix them and check again; later checks run once these pass',
          },
        );
      }
    });
}
