/**
 * `imep campaign verify UNIT [--expected-root HEX] [--trusted-keys DIR] [--require-signatures] [--allow-unsigned]
 * [--expected-stage S] [--accept-rollback]`: re-hash every file and check every signature — exit 0 intact and
 * signed by trusted keys, 5 intact but not vouched for, 3 tampered (names the file), 7 a rollback of what this
 * machine saw. The checks after the re-hash are in verify-checks.ts.
 */
import type { Command } from 'commander';
import { parseExpectedRoot, seenStateOfVerified, verifyUnit, type VerifyOk } from '../../../evidence/index.js';
import { describeSignatures } from '../../../signing/index.js';
import { parseChoice } from '../../args.js';
import { describeVerified, identityWarnings } from './verify-output.js';
import { out } from './options.js';
import { unitArg } from './unit-arg.js';
import {
  refuseMissingKeysDir,
  refuseRollback,
  refuseShortStage,
  refuseUnvouched,
  rememberVerified,
  tamperedError,
} from './verify-checks.js';

interface VerifyOpts {
  expectedRoot?: string;
  trustedKeys?: string;
  requireSignatures?: boolean;
  allowUnsigned?: boolean;
  expectedStage?: string;
  acceptRollback?: boolean;
}

function parseExpectedStage(raw: string | undefined): VerifyOk['stage'] | undefined {
  return raw === undefined
    ? undefined
    : parseChoice<VerifyOk['stage']>('--expected-stage', raw, ['sealed', 'adjudicated', 'closed']);
}

async function verify(unit: string, o: VerifyOpts): Promise<void> {
  const expectedRoot = o.expectedRoot === undefined ? undefined : parseExpectedRoot(o.expectedRoot);
  const expectedStage = parseExpectedStage(o.expectedStage);
  await refuseMissingKeysDir(o.trustedKeys);
  const dir = await unitArg(unit);
  const r = await verifyUnit(dir, {
    ...(expectedRoot === undefined ? {} : { expectedRoot }),
    ...(o.trustedKeys === undefined ? {} : { keysDir: o.trustedKeys }),
    ...(o.requireSignatures ? { requireSignatures: true } : {}),
  });
  if (r.signatures !== undefined) out(describeSignatures(r.signatures));
  if (!r.ok) throw tamperedError(dir, r);
  out(describeVerified(r));
  for (const w of identityWarnings(r.signatures)) out(`warning: ${w}`);
  // a rollback of what this machine saw is refused first; what it sees is recorded only once every check passed
  const seenNow = seenStateOfVerified(r);
  await refuseRollback(seenNow, o.acceptRollback);
  refuseShortStage(dir, r, expectedStage);
  refuseUnvouched(dir, r, o.allowUnsigned, o.trustedKeys);
  await rememberVerified(dir, seenNow, o.acceptRollback);
}

export function registerVerify(group: Command): void {
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
    .action(verify);
}
