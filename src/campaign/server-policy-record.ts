/**
 * The frozen identity of a policy server (runtimes openpi-websocket and vla-eval, server-runtime.ts): what the
 * server said first on every connection — openpi's metadata frame (the `metadata` dict WebsocketPolicyServer was
 * given), vla-eval's HELLO payload { harness_version, protocol_version, model_server, capabilities,
 * observation_params?, action_spec?, observation_spec? } — as canonical JSON, every ndarray replaced by
 * { dtype, shape, sha256 } (its bytes hashed, so a large tensor does not bloat precommit.json). The digest is the
 * SHA-256 of that canonical JSON; precommit records the whole record (`policyServer`) and the digest under
 * checkpointHashes["server:<endpoint>"]; every later run of the unit (resume, a later wave, a shard) connects, reads
 * the metadata again and refuses a different digest (E_CHECKPOINT_MISMATCH naming the endpoint, both digests and the
 * first key that differs). Every slot's session must report the same metadata, else the run is refused naming the
 * slot (one endpoint serving two models).
 *
 * Nothing is left out as volatile: vla-eval 0.8.0's serve.py puts its per-connection values outside the payload —
 * the frame's `timestamp` (messages.py `Message.timestamp`, time.time() at send) and `seq` are envelope fields, and
 * the connection's `session_id` (uuid4) and episode ids are only logged, never sent — and openpi's metadata frame is
 * the same dict on every connection of a server process.
 */
import { canonicalJson, ImepError, sha256Hex, type JsonValue } from '../core/index.js';
import type { PolicyServerRecord } from '../evidence/index.js';
import type { ServerSession, WireValue } from '../policies/index.js';
import { isNdArray, type NdArray } from '../runtime/index.js';

/** The checkpointHashes key of a policy server's metadata digest. */
export const policyServerKey = (endpoint: string): string => `server:${endpoint}`;

type JsonMap = { [key: string]: JsonValue };

function arraySummary(a: NdArray): JsonMap {
  const d = a.data as ArrayBufferView;
  return {
    dtype: a.dtype,
    shape: [...a.shape],
    sha256: sha256Hex(new Uint8Array(d.buffer, d.byteOffset, d.byteLength)),
  };
}

function jsonOf(v: WireValue): JsonValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  // a NaN or an infinity (a msgpack float may be one) has no JSON number: named, so it still counts in the digest
  if (typeof v === 'number') return Number.isFinite(v) ? v : { nonFinite: String(v) };
  if (Array.isArray(v)) return (v as readonly WireValue[]).map(jsonOf);
  if (isNdArray(v as NdArray)) return arraySummary(v as NdArray);
  return Object.fromEntries(Object.entries(v as Record<string, WireValue>).map(([k, x]) => [k, jsonOf(x)]));
}

/** The metadata as recorded: plain JSON, every ndarray replaced by { dtype, shape, sha256 }. */
export function serverMetadataJson(metadata: Readonly<Record<string, WireValue>>): JsonMap {
  return JSON.parse(canonicalJson(jsonOf(metadata))) as JsonMap;
}

/** SHA-256 of the recorded metadata's canonical JSON. */
export function policyServerDigest(metadata: JsonMap): string {
  return sha256Hex(Buffer.from(canonicalJson(metadata), 'utf8'));
}

const short = (v: JsonValue | undefined): string => {
  if (v === undefined) return 'absent';
  const text = canonicalJson(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
};

const keyPath = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;

/** The first place (keys in sorted order, depth first) where two recorded metadata differ, or null. */
export function firstDifference(
  now: JsonValue | undefined,
  was: JsonValue | undefined,
  path = '',
): { readonly path: string; readonly now: string; readonly was: string } | null {
  const isMap = (v: JsonValue | undefined): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isMap(now) && isMap(was)) {
    for (const k of [...new Set([...Object.keys(now), ...Object.keys(was)])].sort()) {
      const d = firstDifference(now[k], was[k], keyPath(path, k));
      if (d !== null) return d;
    }
    return null;
  }
  if (Array.isArray(now) && Array.isArray(was) && now.length === was.length) {
    for (let i = 0; i < now.length; i++) {
      const d = firstDifference(now[i], was[i], keyPath(path, i));
      if (d !== null) return d;
    }
    return null;
  }
  if (now !== undefined && was !== undefined && canonicalJson(now) === canonicalJson(was)) return null;
  return { path: path === '' ? '(the whole metadata)' : path, now: short(now), was: short(was) };
}

const changed = (d: NonNullable<ReturnType<typeof firstDifference>>, was: string): string =>
  `first difference at ${d.path}: ${d.now} now, ${d.was} ${was}`;

/**
 * The record of the sessions' server: every session must report the same metadata (else E_CHECKPOINT_MISMATCH
 * naming the first slot that differs from slot 0).
 */
export function policyServerRecord(
  runtime: string,
  endpoint: string,
  sessions: readonly ServerSession[],
  file: string,
): PolicyServerRecord {
  const first = sessions[0];
  if (first === undefined) throw new ImepError('E_INTERNAL', `no session to the server at ${endpoint}`, { file });
  const metadata = serverMetadataJson(first.metadata);
  const record: PolicyServerRecord = { runtime, endpoint, metadata, digest: policyServerDigest(metadata) };
  sessions.forEach((s, slot) => assertSessionMatches(record, s, slot, file));
  return record;
}

/** Refuses a session (of batch slot `slot`) whose metadata differs from the record's. */
export function assertSessionMatches(
  record: PolicyServerRecord,
  session: ServerSession,
  slot: number,
  file: string,
): void {
  const metadata = serverMetadataJson(session.metadata);
  const digest = policyServerDigest(metadata);
  if (digest === record.digest) return;
  const d = firstDifference(metadata, record.metadata) ?? { path: '(the whole metadata)', now: '?', was: '?' };
  throw new ImepError(
    'E_CHECKPOINT_MISMATCH',
    `the server at ${record.endpoint} answered slot ${slot}'s connection with metadata sha256 ${digest}, slot 0's with ${record.digest} (${changed(d, "on slot 0's")})`,
    {
      file,
      field: 'policy.endpoint',
      hint: 'every connection must reach the same model: point policy.endpoint at one server process, not a pool serving different models',
    },
  );
}

/** Refuses (E_CHECKPOINT_MISMATCH, naming the endpoint, both digests and the first difference) a changed server. */
export function assertPolicyServerUnchanged(
  now: PolicyServerRecord,
  frozen: PolicyServerRecord | undefined,
  file: string,
): void {
  if (frozen === undefined)
    throw new ImepError(
      'E_PROTOCOL_FROZEN',
      `the unit's precommit froze no policy server, but the protocol names the ${now.runtime} server at ${now.endpoint}`,
      { file, field: 'policy', hint: 'a unit precommitted before IMEP recorded policy servers: run a new campaign' },
    );
  if (now.digest === frozen.digest) return;
  const d = firstDifference(now.metadata, frozen.metadata) ?? { path: '(the whole metadata)', now: '?', was: '?' };
  throw new ImepError(
    'E_CHECKPOINT_MISMATCH',
    `the policy server at ${now.endpoint} changed since precommit: metadata sha256 ${now.digest}, frozen ${frozen.digest} (${changed(d, 'frozen')})`,
    {
      file,
      field: 'policy.endpoint',
      hint: 'serve the model and configuration the unit was precommitted with at that endpoint; another model is a new campaign',
    },
  );
}
