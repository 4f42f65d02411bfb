/**
 * `imep chainbench audit MANIFEST --renamings R [--seed S] [--fallback uniform|fixed] [--json]`: the
 * label-equivariance audit — rename every object/drawer identifier R times and report readouts whose decisions
 * change.
 */
import type { Command } from 'commander';
import { ImepError } from '../../../core/index.js';
import { textTable } from '../../../report/index.js';
import {
  auditLabelEquivariance,
  buildChainRecords,
  decisionConditions,
  FALLBACK_MODES,
  loadManifest,
} from '../../../chainbench/index.js';
import { parseChoice, parseCount } from '../../args.js';
import { out, parseSeed } from './args.js';

type Audit = ReturnType<typeof auditLabelEquivariance>;

function auditText(audit: Audit): string {
  return [
    `label-equivariance audit: ${audit.renamings} renamings of ${audit.identifiers} identifiers (seed ${audit.seed})`,
    textTable(
      [
        ['readout', 'n', 'identity score', 'renamed score', 'identity × R', 'changed decisions', 'verdict'],
        ...audit.rows.map((r) => [
          r.readout,
          String(r.n),
          String(r.identityScore),
          String(r.renamedScore),
          String(r.expectedScore),
          String(r.violations),
          r.equivariant ? 'equivariant' : 'NAME-DEPENDENT',
        ]),
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  ].join('\n');
}

interface AuditOpts {
  renamings: string;
  seed: string;
  fallback: string;
  json?: boolean;
}

async function audit(file: string, o: AuditOpts): Promise<void> {
  const renamings = parseCount('--renamings', o.renamings);
  if (renamings < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--renamings' });
  const seed = parseSeed('--seed', o.seed);
  const fallback = parseChoice('--fallback', o.fallback, FALLBACK_MODES);
  const { manifest } = await loadManifest(file);
  const records = buildChainRecords(manifest);
  const readouts = decisionConditions({ fallback }).map((c) => ({
    name: c.name,
    decide: (m: typeof manifest, r: typeof records) => c.decide(m, r, seed),
  }));
  const result = auditLabelEquivariance({ manifest, records, readouts, renamings, seed });
  out(o.json ? JSON.stringify(result, null, 2) : auditText(result));
}

export function registerAudit(group: Command): void {
  group
    .command('audit')
    .description(
      'label-equivariance audit: rename every object/drawer identifier R times and report readouts whose decisions change',
    )
    .argument('<manifest>', 'manifest file')
    .requiredOption('--renamings <R>', 'number of seeded same-length renamings')
    .option('--seed <s>', 'renaming seed (also the decision seed)', '0')
    .option('--fallback <mode>', `fallback decision: ${FALLBACK_MODES.join(' | ')}`, 'uniform')
    .option('--json', 'print one JSON object')
    .action(audit);
}
