/**
 * `imep campaign …`: protocol file → sealed (and, with --through closeout, adjudicated and closed-out)
 * evidence unit. Thin: parses, calls src/campaign (runner and store), prints.
 *
 *   imep campaign run FILE [--through seal|closeout] [--campaigns-dir D] [--batch B] [--shard i/N]
 *   imep campaign resume UNIT [--through seal|closeout] [--batch B]
 *   imep campaign fail-run UNIT --reason TEXT          (rows kept under failed-runs/; the unit precommitted again)
 *   imep campaign precommit FILE [--campaigns-dir D]
 *   imep campaign probe FILE --n K [--campaigns-dir D] [--batch B]      (stored apart from formal evidence)
 *   imep campaign smoke FILE --n K [--campaigns-dir D] [--batch B]
 *   imep campaign seal UNIT · verify UNIT · status UNIT · amend UNIT --text T [--affects F,…]
 *   imep campaign adjudicate UNIT [--allow-same-operator REASON] · cross-check UNIT · closeout UNIT
 *
 * UNIT is a unit folder (campaigns/<protocol id>-<hash12>). Progress goes to stderr (one live line on a
 * TTY, plain lines otherwise); results to stdout. Refusals: one line, non-zero exit (exit-codes.ts).
 */
import { PLAN_ROWS_CONFIRM, PLAN_ROWS_MAX } from '../protocol/index.js';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ImepError, asTyped, cliName, terminalText } from '../core/index.js';
import {
  amend,
  failRun,
  currentOperator,
  lockUnit,
  seal,
  formatStatus,
  unitStatus,
  describeIssue,
  parseExpectedRoot,
  verifyUnit,
  readSeen,
  rememberSeen,
  rollbackError,
  rollbackOf,
  seenFile,
  seenStateOfVerified,
} from '../evidence/index.js';
import { refuseFailedSmallRun, smallRunSummary } from './small-run-summary.js';
import { unitFailureLines } from './failure-lines.js';
import { readCanaryNote } from '../adjudication/index.js';
import { describeUntrusted, describeSignatures } from '../signing/index.js';
import { describeVerified, identityWarnings, stageShortfall } from './verify-output.js';
import { recordSeen, refuseSeenRollback } from './seen-guard.js';
import type { VerifyOk } from '../evidence/index.js';
import { adjudicateStep, closeoutStep, crossCheckStep, resumeThrough, runThrough } from '../app/pipeline.js';
import { DEFAULT_BATCH } from '../campaign/campaign-setup.js';
import { parseShard, type CampaignOptions, type Through } from '../campaign/index.js';
import { precommitCampaign } from '../campaign/campaign.js';
import { smallRunCampaign } from '../campaign/campaign-variants.js';
import { parseChoice, parseCount } from './args.js';

interface CommonOpts {
  campaignsDir: string;
  batch?: string;
  servers?: string;
  allowLargePlan?: boolean;
}

function out(line: string): void {
  process.stdout.write(`${terminalText(asTyped(line))}\n`);
}

function options(o: CommonOpts): CampaignOptions {
  const batchSize = o.batch === undefined ? DEFAULT_BATCH : parseCount('--batch', o.batch);
  if (batchSize < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--batch' });
  const servers = o.servers === undefined ? undefined : parseCount('--servers', o.servers);
  if (servers !== undefined && servers < 1)
    throw new ImepError('E_USAGE', 'must be at least 1', { field: '--servers' });
  return {
    campaignsDir: o.campaignsDir,
    batchSize,
    progress: process.stderr,
    say: out,
    ...(servers === undefined ? {} : { simulators: { servers } }),
    ...(o.allowLargePlan === true ? { allowLargePlan: true } : {}),
  };
}

async function unitArg(dir: string): Promise<string> {
  const ok = await stat(join(dir, 'unit.json')).then(
    () => true,
    () => false,
  );
  if (ok) return dir;
  // a folder that holds a unit's other records but no unit.json is a unit whose header was removed or renamed
  const records = ['seal.json', 'precommit.json', 'protocol.json', 'plan.json'];
  const present = (
    await Promise.all(
      records.map((f) =>
        stat(join(dir, f)).then(
          () => f,
          () => null,
        ),
      ),
    )
  ).filter((f): f is string => f !== null);
  if (present.length > 0) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `unit.json is missing, but the folder holds ${present.join(', ')} of an evidence unit`,
      {
        file: join(dir, 'unit.json'),
        hint: 'restore the unit from an intact copy',
      },
    );
  }
  throw new ImepError('E_USAGE', 'not an evidence unit (no unit.json)', {
    file: dir,
    hint: 'give a unit folder, e.g. campaigns/<protocol id>-<hash12>',
  });
}

function positiveN(raw: string): number {
  const n = parseCount('--n', raw);
  if (n < 1) throw new ImepError('E_USAGE', 'must be at least 1', { field: '--n' });
  return n;
}

export function registerCampaign(group: Command): void {
  const dirOpt = ['--campaigns-dir <dir>', 'where evidence units live', 'campaigns'] as const;
  const batchOpt = [
    '--batch <n>',
    `episodes stepped together through the policy (rows do not depend on it; default ${DEFAULT_BATCH})`,
  ] as const;
  const largeOpt = [
    '--allow-large-plan',
    `build a plan above ${PLAN_ROWS_CONFIRM.toLocaleString('en-US')} rows (the estimate is printed; above ${PLAN_ROWS_MAX.toLocaleString('en-US')} rows a plan is always refused)`,
  ] as const;
  const reasonOpt = [
    '--same-operator-reason <text>',
    'with --through closeout: why the operator who runs the conditions may also adjudicate them (recorded in the adjudication, and shown by verify and the report)',
  ] as const;
  const reasonOf = (o: { sameOperatorReason?: string }): { sameOperatorReason?: string } =>
    o.sameOperatorReason === undefined ? {} : { sameOperatorReason: o.sameOperatorReason };
  const serversOpt = [
    '--servers <k>',
    'simulator servers IMEP starts for a bridged simulator; slot s steps on server s mod k, all k at once (rows do not depend on it; default 1)',
  ] as const;

  group
    .command('run')
    .description(
      'precommit (if new), run every planned episode, seal; resumes an interrupted run; a sealed unit prints its status',
    )
    .argument('<file>', 'the protocol file (YAML)')
    .option(
      '--through <stage>',
      'stop after: seal | closeout (adjudicate as this operator with --same-operator-reason, cross-check, close out, report)',
      'seal',
    )
    .option(...reasonOpt)
    .option(...dirOpt)
    .option(...batchOpt)
    .option(...serversOpt)
    .option(
      '--shard <i/N>',
      'run only shard i of N (0-based; by unit) into <unit>.shards/ — merged by the cluster layer',
    )
    .option(...largeOpt)
    .action(async (file: string, o: CommonOpts & { through: string; shard?: string; sameOperatorReason?: string }) => {
      const through = parseChoice<Through>('--through', o.through, ['seal', 'closeout']);
      const dir = await runThrough(file, {
        ...options(o),
        through,
        ...reasonOf(o),
        ...(o.shard === undefined ? {} : { shard: parseShard(o.shard) }),
      });
      await recordSeen(dir, 'run');
    });

  group
    .command('resume')
    .description("continue a unit's interrupted formal run (from its frozen protocol), then seal")
    .argument('<unit>', 'the unit folder')
    .option('--through <stage>', 'stop after: seal | closeout', 'seal')
    .option(...reasonOpt)
    .option(...batchOpt)
    .option(...serversOpt)
    .action(
      async (unit: string, o: { through: string; batch?: string; servers?: string; sameOperatorReason?: string }) => {
        const through = parseChoice<Through>('--through', o.through, ['seal', 'closeout']);
        const dir = await unitArg(unit);
        const given = {
          ...(o.batch === undefined ? {} : { batch: o.batch }),
          ...(o.servers === undefined ? {} : { servers: o.servers }),
        };
        await resumeThrough(dir, { ...options({ campaignsDir: join(dir, '..'), ...given }), through, ...reasonOf(o) });
        await recordSeen(dir, 'run');
      },
    );

  group
    .command('precommit')
    .description('verify the checkpoint, freeze the protocol and plan, register the seed bands')
    .argument('<file>', 'the protocol file (YAML)')
    .option(...dirOpt)
    .option(...largeOpt)
    .action(async (file: string, o: CommonOpts) => {
      await precommitCampaign(file, options(o));
    });

  for (const kind of ['probe', 'smoke'] as const) {
    group
      .command(kind)
      .description(`a ${kind} run of the first K units of every condition, stored apart from the formal evidence`)
      .argument('<file>', 'the protocol file (YAML)')
      .requiredOption('--n <k>', 'units per condition and task')
      .option(...dirOpt)
      .option(...batchOpt)
      .action(async (file: string, o: CommonOpts & { n: string }) => {
        const folder = await smallRunCampaign(file, kind, positiveN(o.n), options(o));
        // what it found, on stdout (descriptive: small runs are never adjudicated)
        out(await smallRunSummary(join(folder, 'rows.jsonl')));
        await refuseFailedSmallRun(join(folder, 'rows.jsonl'), kind);
      });
  }

  group
    .command('fail-run')
    .description(
      "give up a unit's formal run: its rows and traces move to failed-runs/<run>/ (kept, never deleted), the unit is precommitted again",
    )
    .argument('<unit>', 'the unit folder')
    .requiredOption('--reason <text>', 'why (recorded in failed-runs/<run>/failure.json)')
    .action(async (unit: string, o: { reason: string }) => {
      const dir = await unitArg(unit);
      const lock = await lockUnit(dir);
      try {
        const target = await failRun(dir, { reason: o.reason });
        out(`failed the run of ${dir}: its rows and traces are in ${target}`);
        out(`next: imep campaign resume ${dir} (starts a new formal run from the frozen protocol)`);
      } finally {
        await lock.release();
      }
    });

  group
    .command('seal')
    .description('seal a run-complete unit: SHA-256 manifest of every file and its Merkle root')
    .argument('<unit>', 'the unit folder')
    .action(async (unit: string) => {
      const dir = await unitArg(unit);
      const r = await seal(dir);
      await recordSeen(dir, 'seal');
      out(`sealed ${dir}: ${r.record.files.length} files, Merkle root ${r.record.merkle.root}`);
      out(`next: imep campaign adjudicate ${dir}`);
    });

  group
    .command('verify')
    .description(
      're-hash every file and check every signature: exit 0 intact and signed by trusted keys, 5 intact but not vouched for (untrusted keys, or unsigned), 3 tampered (names the file)',
    )
    .argument('<unit>', 'the unit folder')
    .option(
      '--expected-root <hex>',
      'the Merkle root its producer published (64 hex digits): the unit must have it — cite the closeout root to catch a rolled-back unit',
    )
    .option(
      '--trusted-keys <dir>',
      'trust only the public keys (.pub, as `imep keys export` writes them) in this folder, not the key store',
    )
    .option(
      '--require-signatures',
      'every record must be signed: an unsigned record is an integrity failure (exit 3), whatever else vouches for the unit',
    )
    .option(
      '--allow-unsigned',
      'accept a unit that carries no signatures at all (IMEP_SIGNING=off) without a matching --expected-root',
    )
    .option(
      '--expected-stage <stage>',
      'the stage its producer said the unit reached (sealed | adjudicated | closed): an earlier one is refused as a rollback (exit 3)',
    )
    .option(
      '--accept-rollback',
      'this machine saw the unit at a later stage or under another root (exit 7 without this): accept the rollback as intended and record it as the new baseline',
    )
    .action(
      async (
        unit: string,
        o: {
          expectedRoot?: string;
          trustedKeys?: string;
          requireSignatures?: boolean;
          allowUnsigned?: boolean;
          expectedStage?: string;
          acceptRollback?: boolean;
        },
      ) => {
        const expectedRoot = o.expectedRoot === undefined ? undefined : parseExpectedRoot(o.expectedRoot);
        const expectedStage =
          o.expectedStage === undefined
            ? undefined
            : parseChoice<VerifyOk['stage']>('--expected-stage', o.expectedStage, ['sealed', 'adjudicated', 'closed']);
        if (
          o.trustedKeys !== undefined &&
          !(await stat(o.trustedKeys).then(
            (st) => st.isDirectory(),
            () => false,
          ))
        ) {
          throw new ImepError('E_USAGE', 'not a folder of trusted public keys', {
            field: '--trusted-keys',
            file: o.trustedKeys,
          });
        }
        const dir = await unitArg(unit);
        const r = await verifyUnit(dir, {
          ...(expectedRoot === undefined ? {} : { expectedRoot }),
          ...(o.trustedKeys === undefined ? {} : { keysDir: o.trustedKeys }),
          ...(o.requireSignatures ? { requireSignatures: true } : {}),
        });
        if (r.signatures !== undefined) out(describeSignatures(r.signatures));
        if (!r.ok) {
          const more = r.issues.length > 1 ? ` (+${r.issues.length - 1} more)` : '';
          const hint =
            r.first.kind === 'root-mismatch'
              ? "check that the root cited is this unit's; a unit whose closeout was removed answers only to its seal root (restore its closeout from an intact copy)"
              : 'restore the unit from an intact copy';
          throw new ImepError('E_UNIT_TAMPERED', `${describeIssue(r.first)}${more}`, {
            file: join(dir, r.first.path),
            hint,
          });
        }
        out(describeVerified(r));
        for (const w of identityWarnings(r.signatures)) out(`warning: ${w}`);
        // a rollback of what this machine saw is refused first; what it sees is recorded only once every check passed
        const seenNow = seenStateOfVerified(r);
        if (seenNow !== null && !o.acceptRollback) {
          const rolled = rollbackOf(await readSeen(seenNow), seenNow);
          if (rolled !== null) throw rollbackError(rolled, seenNow);
        }
        const short = expectedStage === undefined ? null : stageShortfall(r, expectedStage);
        if (short !== null)
          throw new ImepError('E_UNIT_TAMPERED', short, {
            file: join(dir, r.stage === 'adjudicated' || expectedStage === 'closed' ? 'closeout.json' : 'adjudication'),
            hint: 'restore the unit from an intact copy',
          });
        if (r.trust.status === 'untrusted')
          throw new ImepError('E_UNTRUSTED', describeUntrusted(cliName(), dir, r.trust.untrusted), { file: dir });
        if (r.trust.status === 'unsigned' && !o.allowUnsigned && r.rootMatched === undefined) {
          throw new ImepError(
            'E_UNTRUSTED',
            'intact, but it carries no signatures: nothing vouches for who produced it, and a signed unit stripped of its signatures and rebuilt looks exactly like this',
            {
              file: dir,
              hint: 'vouch for it with --expected-root <the root its producer published>, or accept it with --allow-unsigned',
            },
          );
        }
        if (seenNow !== null) {
          const accepted = await rememberSeen(seenNow, {
            event: 'verify',
            dir,
            ...(o.acceptRollback ? { acceptRollback: true } : {}),
          });
          if (accepted !== null) out(`warning: rollback accepted and recorded in ${seenFile(seenNow)}`);
        }
      },
    );

  group
    .command('status')
    .description('state, next command, rows done/planned, runs, integrity, adjudication and every amendment')
    .argument('<unit>', 'the unit folder')
    .option('--json', 'print the summary as JSON')
    .action(async (unit: string, o: { json?: boolean }) => {
      const dir = await unitArg(unit);
      const s = await unitStatus(dir);
      out(o.json ? JSON.stringify(s, null, 2) : [formatStatus(s), ...(await unitFailureLines(dir))].join('\n'));
    });

  group
    .command('amend')
    .description('append an amendment to the unit (never edits the frozen protocol)')
    .argument('<unit>', 'the unit folder')
    .requiredOption('--text <text>', 'what changes and why')
    .option('--affects <fields>', 'comma-separated protocol fields the amendment affects', 'protocol')
    .action(async (unit: string, o: { text: string; affects: string }) => {
      const dir = await unitArg(unit);
      const a = await amend(dir, {
        text: o.text,
        affects: o.affects
          .split(',')
          .map((f) => f.trim())
          .filter((f) => f !== ''),
      });
      out(`amendment ${a.id} [${a.classification}] recorded in ${dir}`);
    });

  group
    .command('adjudicate')
    .description('apply the frozen decision rules to the sealed rows (by a session other than the one that ran them)')
    .argument('<unit>', 'the unit folder')
    .option(
      '--allow-same-operator <reason>',
      'allow the operator who ran the conditions to adjudicate; the reason is recorded',
    )
    .action(async (unit: string, o: { allowSameOperator?: string }) => {
      const dir = await unitArg(unit);
      await refuseSeenRollback(dir);
      const a = await adjudicateStep(dir, {
        operator: currentOperator(),
        ...(o.allowSameOperator === undefined ? {} : { allowSameOperator: { reason: o.allowSameOperator } }),
      });
      await recordSeen(dir, 'adjudicate');
      out(`adjudicated ${dir}: ${a.file} (${a.adjudication.goNoGo.status})`);
      for (const v of a.adjudication.verdicts) out(`  ${v.criterion}: ${v.verdict}`);
      out(`  ${readCanaryNote(a.adjudication.gates)}`);
      out(`next: imep campaign cross-check ${dir}`);
    });

  group
    .command('cross-check')
    .description('independent re-computation of the adjudication')
    .argument('<unit>', 'the unit folder')
    .action(async (unit: string) => {
      const dir = await unitArg(unit);
      await refuseSeenRollback(dir);
      const x = await crossCheckStep(dir, { operator: currentOperator() });
      out(`cross-checked ${dir}: ${x.outcome}`);
      out(`next: imep campaign closeout ${dir}`);
    });

  group
    .command('closeout')
    .description('bind the seal, amendments and adjudication records under one closeout manifest')
    .argument('<unit>', 'the unit folder')
    .action(async (unit: string) => {
      const dir = await unitArg(unit);
      await refuseSeenRollback(dir);
      const r = await closeoutStep(dir, { operator: currentOperator() });
      await recordSeen(dir, 'closeout');
      out(`closed out ${dir}: Merkle root ${r.merkle.root}`);
      out(`next: imep campaign verify ${dir}`);
    });
}
