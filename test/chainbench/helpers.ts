import { vi } from 'vitest';
import {
  buildChainRecords,
  freezeManifest,
  generateChainManifest,
  type ChainManifest,
  type ChainRecordSet,
} from '../../src/chainbench/index.js';
import { buildProgram } from '../../src/cli/program.js';
import { exitCodeFor, messageFor } from '../../src/cli/exit-codes.js';
import { registerChainbench } from '../../src/cli/commands/chainbench/group.js';

export interface Fixture {
  readonly manifest: ChainManifest;
  readonly hash: string;
  readonly records: ChainRecordSet;
}

const cache = new Map<string, Fixture>();

/** A generated lite manifest (frozen) and its records, cached per (chains, K, seed). */
export function fixture(chains: number, K: number | readonly number[], seed = 2024): Fixture {
  const key = `${chains}/${String(K)}/${seed}`;
  let f = cache.get(key);
  if (f === undefined) {
    const { manifest, hash } = freezeManifest(generateChainManifest({ chains, K, seed }));
    f = { manifest, hash, records: buildChainRecords(manifest) };
    cache.set(key, f);
  }
  return f;
}

/** A mutable deep copy of a manifest. */
export function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Runs `imep chainbench ARGS…` in this process: its stdout, and the exit code and message it would end with. */
export async function imep(...args: string[]): Promise<{ stdout: string; code: number; message: string }> {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    await buildProgram({ chainbench: registerChainbench }).parseAsync(['node', 'imep', 'chainbench', ...args]);
    return { stdout, code: 0, message: '' };
  } catch (e) {
    return { stdout, code: exitCodeFor(e), message: messageFor(e) };
  } finally {
    spy.mockRestore();
  }
}
