/**
 * The checkpoint binding of a protocol: `checkpoint.sha256` is the SHA-256 of `path/file`. A protocol
 * may carry `sha256: pending` while the checkpoint does not exist yet; it loads, but cannot be frozen
 * (assertFreezable) and verifyCheckpoint refuses it. A protocol with a `policy` section (a hosted policy)
 * has no checkpoint: it is frozen by the host's identity instead (src/campaign/remote-policy-provider.ts).
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ImepError, sha256Hex } from '../core/index.js';
import { PENDING_SHA256, type CheckpointBinding, type Protocol } from './schema.js';

/** The protocol's checkpoint binding; E_PROTOCOL_INVALID for a protocol without one (a hosted policy). */
export function checkpointOf(protocol: Protocol, file?: string): CheckpointBinding {
  if (protocol.checkpoint === undefined) {
    throw new ImepError('E_PROTOCOL_INVALID', 'the protocol binds no checkpoint', {
      ...(file === undefined ? {} : { file }),
      field: 'checkpoint',
      hint: 'add checkpoint: { path, file, sha256 }, or policy: { runtime: remote, name } for a hosted policy',
    });
  }
  return protocol.checkpoint;
}

/** The checkpoint file a protocol binds, resolved against `root` (the repository root). */
export function checkpointFile(protocol: Protocol, root = '.'): string {
  const checkpoint = checkpointOf(protocol);
  return resolve(root, join(checkpoint.path, checkpoint.file));
}

/** Throws E_CHECKPOINT_MISSING when the protocol's checkpoint hash is still the placeholder (nothing to check without a checkpoint). */
export function assertFreezable(protocol: Protocol, file?: string): void {
  if (protocol.checkpoint?.sha256 === PENDING_SHA256) {
    throw new ImepError(
      'E_CHECKPOINT_MISSING',
      'checkpoint.sha256 is still "pending"; a frozen protocol binds its checkpoint',
      {
        ...(file === undefined ? {} : { file }),
        field: 'checkpoint.sha256',
        hint: `write the SHA-256 of ${protocol.checkpoint.path}/${protocol.checkpoint.file} (sha256sum) into the protocol`,
      },
    );
  }
}

/** Verifies the checkpoint file's SHA-256 against the protocol; returns the digest. */
export async function verifyCheckpoint(protocol: Protocol, root = '.', file?: string): Promise<string> {
  const checkpoint = checkpointOf(protocol, file);
  assertFreezable(protocol, file);
  const target = checkpointFile(protocol, root);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(target);
  } catch (e) {
    throw new ImepError('E_CHECKPOINT_MISSING', `checkpoint file ${target} cannot be read`, {
      ...(file === undefined ? {} : { file }),
      field: 'checkpoint.path',
      hint: 'build or fetch the checkpoint, or fix checkpoint.path / checkpoint.file',
      cause: e,
    });
  }
  const digest = sha256Hex(bytes);
  if (digest !== checkpoint.sha256) {
    throw new ImepError(
      'E_CHECKPOINT_MISMATCH',
      `checkpoint ${target} has SHA-256 ${digest}, the protocol binds ${checkpoint.sha256}`,
      {
        ...(file === undefined ? {} : { file }),
        field: 'checkpoint.sha256',
        hint: 'restore the registered checkpoint; changing the binding is an amendment',
      },
    );
  }
  return digest;
}
