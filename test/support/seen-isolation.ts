/**
 * Each test file gets its own seen store (src/evidence/seen-store.ts; IMEP_SEEN_DIR, inherited by the CLIs tests
 * start), never the operator's ~/.imep/seen: test units are built with a fixed clock, so two files can make the same
 * unit instance, and one file's closed unit must not make another file's sealed copy a "rollback".
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env['IMEP_SEEN_DIR'] = mkdtempSync(join(tmpdir(), 'imep-test-seen-'));
