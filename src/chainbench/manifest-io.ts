/**
 * Reading, hashing, freezing and writing chain manifests.
 *
 * The manifest hash is SHA-256 of its canonical JSON (keys sorted, no whitespace; canonical-json.ts);
 * the on-disk form is the canonical pretty JSON, so `hash(file) = hash(parse(file))` whatever the
 * key order a hand edit left. A loaded manifest is deep-frozen: decisions and replays made from it
 * record its hash, and replay refuses decisions made on another manifest.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ImepError, isImepError, canonicalHash as canonicalSha256, canonicalPrettyJson } from '../core/index.js';
import { ChainManifestSchema, type Chain, type ChainManifest } from './manifest-schema.js';
import { validateManifest, type ValidateOptions } from './manifest-validate.js';

export interface FrozenManifest {
  readonly manifest: ChainManifest;
  /** SHA-256 of the canonical JSON. */
  readonly hash: string;
}

/** SHA-256 (hex) of the manifest's canonical JSON. */
export function manifestHash(manifest: ChainManifest): string {
  return canonicalSha256(manifest, { code: 'E_MANIFEST_INVALID' });
}

/** SHA-256 (hex) of one chain's canonical JSON (what the diff compares). */
export function chainHash(chain: Chain): string {
  return canonicalSha256(chain, { code: 'E_MANIFEST_INVALID' });
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** Freezes a manifest (deeply) and computes its hash. */
export function freezeManifest(manifest: ChainManifest): FrozenManifest {
  return { manifest: deepFreeze(manifest), hash: manifestHash(manifest) };
}

function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out;
}

/** Parses JSON data as a manifest (schema only): E_MANIFEST_INVALID naming the first bad field. */
export function parseManifestData(data: unknown, file?: string): ChainManifest {
  const r = ChainManifestSchema.safeParse(data);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue?.path ?? [];
  let who = '';
  if (path[0] === 'chains' && typeof path[1] === 'number') {
    const raw = (data as { chains?: unknown[] }).chains?.[path[1]] as { id?: unknown } | undefined;
    if (typeof raw?.id === 'string') who = `chain ${raw.id}: `;
  }
  throw new ImepError('E_MANIFEST_INVALID', `${who}${issue?.message ?? 'not a chain manifest'}`, {
    ...(file === undefined ? {} : { file }),
    field: pathText(path) || '(root)',
  });
}

/** Parses manifest text (JSON), checks the schema and every cross-field rule, and freezes it. */
export function parseManifest(text: string, opts: ValidateOptions = {}): FrozenManifest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ImepError('E_MANIFEST_INVALID', `not JSON: ${e instanceof Error ? e.message : String(e)}`, {
      ...(opts.file === undefined ? {} : { file: opts.file }),
      cause: e,
    });
  }
  const manifest = parseManifestData(data, opts.file);
  validateManifest(manifest, opts);
  try {
    return freezeManifest(manifest);
  } catch (e) {
    // hashing refuses values with no canonical form (e.g. a lone surrogate): name the file it came from
    if (isImepError(e) && e.file === undefined && opts.file !== undefined) {
      throw new ImepError(e.code, e.message, {
        file: opts.file,
        ...(e.field === undefined ? {} : { field: e.field }),
        ...(e.hint === undefined ? {} : { hint: e.hint }),
        cause: e,
      });
    }
    throw e;
  }
}

/** Reads and validates a manifest file. */
export async function loadManifest(file: string, opts: Omit<ValidateOptions, 'file'> = {}): Promise<FrozenManifest> {
  return parseManifest(await readText(file), { ...opts, file });
}

export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new ImepError('E_IO', `could not read: ${e instanceof Error ? e.message : String(e)}`, { file, cause: e });
  }
}

/** Writes `text` to `file` through a temp file and a rename, so no half-written file is ever left. */
export async function writeTextAtomic(file: string, text: string): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(tmp, text, { encoding: 'utf8', flag: 'wx' });
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw new ImepError('E_IO', `could not write: ${e instanceof Error ? e.message : String(e)}`, {
      file,
      hint: 'check that the directory exists and is writable',
      cause: e,
    });
  }
}

/** Writes the manifest as canonical pretty JSON. */
export async function writeManifest(file: string, manifest: ChainManifest): Promise<string> {
  await writeTextAtomic(file, canonicalPrettyJson(manifest));
  return manifestHash(manifest);
}
