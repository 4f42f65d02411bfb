/**
 * protocolHash = SHA-256 (hex) of the canonical JSON (canonical-json.ts) of the *validated* protocol,
 * i.e. after the schema filled its defaults. So the hash binds what the protocol means, not how the
 * YAML was written: key order, comments, quoting and flow/block style do not change it; any value
 * (a margin, an α, a seed, a condition's order in a list) does, and so does a change of a default.
 */
import { canonicalHash } from '../core/index.js';
import type { Protocol } from './schema.js';

export function protocolHash(protocol: Protocol): string {
  return canonicalHash(protocol, { code: 'E_PROTOCOL_INVALID' });
}
